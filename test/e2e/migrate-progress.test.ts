/**
 * `migrate` is not silent while it stages or deletes refused records from staging: with stderr
 * not a terminal it writes pino lines — the run's `progress` (rows read, staged, rate; the last
 * one when staging is done) and the `--drop-invalid` deletes' `progress` / `step done` (done of
 * how many, rate) — beside the jobs' lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = tempDir('stagecoach-migrate-progress-');
});
afterAll(async () => {
  await svc.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Rows the validation refuses (nationality XX, unknown to the platform's code tables). */
const REFUSED = ['1003', '1008', '1015'];

describe('migrate --drop-invalid progress', () => {
  it('logs the staging progress and the deletes with their counts', async () => {
    const src = join(ROOT, 'test/cases/reconcile/people');
    for (const f of ['pipeline.yaml', 'people-mapping.yaml']) copyFileSync(join(src, f), join(dir, f));
    const rows = readFileSync(join(src, 'people.csv'), 'utf8')
      .split('\n')
      .map((line) => (REFUSED.includes(line.split(';')[0]!) ? line.replace(/;[A-Z]{2}$/, ';XX') : line));
    writeFileSync(join(dir, 'people.csv'), rows.join('\n'));

    const r = await runCli([
      'migrate',
      join(dir, 'pipeline.yaml'),
      '--drop-invalid',
      '--ledger',
      join(dir, 'ledger.db'),
      '--out',
      join(dir, 'report'),
      '--base-url',
      svc.url,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const staging = lines.filter((l) => l.msg === 'progress' && l.command === 'migrate' && 'rowsRead' in l);
    expect(staging.at(-1)).toMatchObject({ rowsRead: 20, mapped: 20, staged: 20, rejected: 0, failed: 0, percent: 100, etaSeconds: 0 });
    const deletes = lines.filter((l) => l.step === 'removing invalid records from staging');
    expect(deletes.at(-1)).toMatchObject({ msg: 'step done', done: 3, of: 3, unit: 'records' });
    expect(deletes.at(-1)!.perSecond).toEqual(expect.any(Number));
  });
});
