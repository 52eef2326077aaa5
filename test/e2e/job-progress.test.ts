/**
 * Validation and import jobs are not silent: while `migrate` waits for them, the CLI reads the
 * migration's log and, when stderr is not a terminal, writes pino `job progress` lines every few
 * seconds (records imported / refused so far, components completed) and a `job done` line, never
 * one per record. The service is slowed down (jobRecordsPerSecond) so each job takes seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let dir: string;
const PERSONS = 2000;

beforeAll(async () => {
  svc = await startTestService({ jobRecordsPerSecond: 250 });
  dir = tempDir('stagecoach-job-progress-');
  const g = await runCli(['generate-samples', '--persons', String(PERSONS), '--organisations', '0', '--out', join(dir, 'crm')]);
  expect(g.code, g.stderr).toBe(0);
});
afterAll(async () => {
  await svc.dispose();
  rmSync(dir, { recursive: true, force: true });
});

interface JobLine {
  msg: string;
  job: string;
  seconds: number;
  componentsCompleted: string[];
  imported?: number;
  of?: number;
  refused?: number;
}

describe('job progress', () => {
  it('migrate writes job progress lines for the validation and the import when stderr is not a terminal', async () => {
    const r = await runCli(
      [
        'migrate',
        join(dir, 'crm', 'pipeline.yaml'),
        '--ledger',
        join(dir, 'ledger.db'),
        '--out',
        join(dir, 'report'),
        '--base-url',
        svc.url,
      ],
      { timeoutMs: 180_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as JobLine)
      .filter((l) => l.msg === 'job progress' || l.msg === 'job done');
    const of = (job: string, msg: string) => lines.filter((l) => l.job === job && l.msg === msg);

    // each job of 2,000 records at 250/s runs about 8 s: at least one line while it runs
    const validating = of('validate-staging', 'job progress');
    expect(validating.length, r.stderr).toBeGreaterThanOrEqual(1);
    expect(validating[0]).toMatchObject({ refused: 0, componentsCompleted: [] });
    const importing = of('import', 'job progress');
    expect(importing.length, r.stderr).toBeGreaterThanOrEqual(1);
    expect(importing[0]!.of).toBe(PERSONS);
    expect(importing[0]!.imported).toBeGreaterThan(0);
    expect(importing[0]!.imported).toBeLessThan(PERSONS);
    expect(of('import', 'job done')).toEqual([expect.objectContaining({ imported: PERSONS, of: PERSONS })]);
    expect(of('validate-staging', 'job done')).toEqual([expect.objectContaining({ refused: 0 })]);
    // a modest rate: one line per 5 s at most while a job runs, whatever the number of records
    for (const job of ['validate-staging', 'import']) {
      const progress = of(job, 'job progress');
      const seconds = of(job, 'job done')[0]!.seconds;
      expect(progress.length).toBeLessThanOrEqual(Math.floor(seconds / 5) + 1);
    }
  }, 200_000);
});
