/**
 * A run the platform refuses before it reads a row (here: `target.migration: new` while the
 * tenant's migration is still active) leaves the ledger as it was: the keyless rejects of the
 * last full run (a duplicate key, a row with a column too few) stay, so `status` and the report
 * still count every row of the export. Found by the lives test (seed 101). Real service, real CLI.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('a run refused before reading', () => {
  it('keeps the keyless rejects: status and the report still count every row of the export', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-refused-run-');
    dirs.push(dir);
    const gen = await runCli([
      'generate-samples',
      '--persons',
      '120',
      '--organisations',
      '0',
      '--seed',
      '101',
      '--defects-per-10k',
      '500',
      '--out',
      dir,
    ]);
    expect(gen.code, gen.stderr).toBe(0);
    const defects = JSON.parse(readFileSync(join(dir, 'defects.json'), 'utf8')) as Array<{ kind: string }>;
    expect(defects.map((d) => d.kind)).toContain('duplicate-klantnr');
    expect(defects.map((d) => d.kind)).toContain('wrong-column-count');
    const common = ['--ledger', join(dir, 'ledger.db'), '--base-url', svc.url];
    const status = async () =>
      (
        JSON.parse((await runCli(['status', '--json', '--ledger', join(dir, 'ledger.db')])).stdout) as {
          pipelines: Array<{ byState: Record<string, number> }>;
        }
      ).pipelines[0]!.byState;

    const run1 = await runCli(['run', 'pipeline.yaml', ...common], { cwd: dir });
    expect(run1.code, run1.stderr).toBe(0);
    expect(await status()).toMatchObject({ rejected: defects.length, staged: 120 - defects.length });

    const pipeline = join(dir, 'pipeline.yaml');
    writeFileSync(pipeline, readFileSync(pipeline, 'utf8').replace(/^target:\n/m, 'target:\n  migration: new\n'));
    const refused = await runCli(['run', 'pipeline.yaml', '--json', ...common], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('MIGRATION_ALREADY_ACTIVE');

    expect(await status()).toMatchObject({ rejected: defects.length, staged: 120 - defects.length });
    const report = await runCli(['report', '--json', '--out', join(dir, 'r'), ...common], { cwd: dir });
    expect(report.code, report.stderr).toBe(0);
    expect((JSON.parse(report.stdout) as { totals: { sourceRows: number } }).totals.sourceRows).toBe(120);
  });
});
