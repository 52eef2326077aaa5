/**
 * The default retry budget outlasts a service restart: `stagecoach serve` (a real process) is
 * killed while `migrate` waits for its validation job and started again on the same port and
 * data 16 s later — longer than the longest the former default (6 retries of 0.25 s doubling,
 * at most 15.75 s of waits) could wait. `migrate` runs with no retry settings at all and must
 * finish by itself, balanced: the documented "about two minutes" (docs/running.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/service.js';
import type { Samples } from '../support/pipeline-run.js';
import {
  cleanSamples,
  latestJob,
  readLedgerState,
  sleep,
  spawnCli,
  startServiceProcess,
  suiteTimeout,
  type ServiceProcess,
} from '../support/chaos.js';

const DOWN_MS = 16_000;

describe('migrate with the default retry budget while the service restarts', () => {
  let samples: Samples & { dropped: number };
  let work: string;
  let service: ServiceProcess;
  beforeAll(async () => {
    samples = await cleanSamples({ persons: 300, batchRecords: 50, inFlight: 2 });
    work = tempDir('stagecoach-restart-');
    // 300 records at 50/s: the validation job runs about 6 s, long enough to be caught running.
    service = await startServiceProcess({ dataDir: join(work, 'service'), args: ['--job-rate', '50'] });
  });
  afterAll(async () => {
    await service?.stop();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'finishes balanced, exit 0, after 16 s without a service',
    async () => {
      const ledger = join(work, 'ledger.db');
      const run = spawnCli(
        ['migrate', 'pipeline.yaml', '--ledger', ledger, '--out', join(work, 'report'), '--base-url', service.url, '--json'],
        {
          cwd: samples.dir,
        },
      );
      const validating = () => {
        try {
          return latestJob(readLedgerState(ledger), 'validate-staging')?.state === 'running';
        } catch {
          return false;
        }
      };
      while (run.running() && !validating()) await sleep(20);
      expect(run.running(), run.stderr()).toBe(true);
      await service.kill();
      await sleep(DOWN_MS);
      expect(run.running(), `migrate gave up while the service was down: ${run.stderr()}`).toBe(true);
      await service.restart();
      const final = await run.done;
      expect(final.code, final.stderr).toBe(0);
      const result = JSON.parse(final.stdout) as { report: { balanced: boolean; totals: { imported: number } } };
      expect([result.report.balanced, result.report.totals.imported]).toEqual([true, 300 - samples.dropped]);
    },
    suiteTimeout(120_000),
  );
});
