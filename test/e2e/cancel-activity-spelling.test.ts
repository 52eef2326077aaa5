/**
 * `cancel` against a platform that spells a canceled migration's activity `Cancelled` (the
 * dialect switch `activity=Cancelled`): the ledger records the cancel all the same, so `status`
 * stops presenting the records as staged. Before, only the exact `Canceled` was recorded and the
 * ledger silently disagreed with the platform.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { isCanceledActivity } from '../../src/contract/migration.js';
import { runCli } from '../support/cli.js';
import { generateSamples, runPipelineCli, type Samples } from '../support/pipeline-run.js';
import { startTestService, type TestService } from '../support/service.js';

describe('isCanceledActivity', () => {
  it('reads Canceled and Cancelled in any case as canceled, and nothing else', () => {
    expect(['Canceled', 'Cancelled', 'CANCELLED', 'canceled'].map(isCanceledActivity)).toEqual([true, true, true, true]);
    expect(['Active', 'Completed', 'Cancel', 'Canceling', '', undefined].map(isCanceledActivity)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('cancel on a platform that writes "Cancelled"', () => {
  let service: TestService;
  let samples: Samples;
  beforeAll(async () => {
    service = await startTestService({ dialect: 'activity=Cancelled' });
    samples = await generateSamples({ persons: 30, batchRecords: 10, inFlight: 2 });
  });
  afterAll(async () => {
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  it('records the cancel in the ledger: status shows every sent record in a canceled migration, none staged', async () => {
    const run = await runPipelineCli(samples, service.url);
    expect(run.code, run.stderr).toBe(0);
    const sent = run.report!.sent;
    expect(sent).toBeGreaterThan(0);
    const migrationId = run.report!.migrationId!;

    const cancel = await runCli(['cancel', migrationId, '--base-url', service.url], { cwd: samples.dir });
    expect({ code: cancel.code, stderr: cancel.stderr, stdout: cancel.stdout }).toEqual({
      code: 0,
      stderr: '',
      stdout: `migration ${migrationId} canceled (activity Cancelled)\n`,
    });
    const status = await runCli(['status'], { cwd: samples.dir });
    expect(status.code, status.stderr).toBe(0);
    const row = (state: string) => new RegExp(`^${state} +(\\d+)$`, 'm').exec(status.stdout)?.[1];
    expect(row('staged')).toBe('0');
    expect(row('in a canceled migration')).toBe(String(sent));
  });
});
