import { afterEach, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CLI, ROOT, runCli } from '../support/cli.js';
import { call, getToken, startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The people fixture with every row valid, in a folder of its own. */
function validPeople(dir: string): string {
  const src = join(ROOT, 'test/cases/reconcile/people');
  copyFileSync(join(src, 'pipeline.yaml'), join(dir, 'pipeline.yaml'));
  copyFileSync(join(src, 'people-mapping.yaml'), join(dir, 'people-mapping.yaml'));
  writeFileSync(join(dir, 'people.csv'), readFileSync(join(src, 'people.csv'), 'utf8').replace(';XX\n', ';NL\n'));
  return join(dir, 'pipeline.yaml');
}

function jobs(ledger: string): Array<{ kind: string; job_id: string; state: string }> {
  const db = new Database(ledger, { readonly: true });
  try {
    return db.prepare<[], { kind: string; job_id: string; state: string }>('SELECT kind, job_id, state FROM jobs ORDER BY id').all();
  } finally {
    db.close();
  }
}

describe('stagecoach migrate after a crash', () => {
  it('polls the validation job that was running when the process was killed instead of starting a second one', async () => {
    // 5 records a second: validating 20 records takes about 4 s, time to kill the client mid-job
    const svc = await startTestService({ jobRecordsPerSecond: 5 });
    services.push(svc);
    const dir = tempDir('stagecoach-crash-');
    dirs.push(dir);
    const pipeline = validPeople(dir);
    const ledger = join(dir, 'ledger.db');
    const args = ['migrate', pipeline, '--ledger', ledger, '--out', join(dir, 'report'), '--base-url', svc.url];

    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
    const jobId = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d;
        const m = /validate-staging job (\S+) started/.exec(err);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`migrate exited (${code}) before starting validation: ${err}`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
    expect(jobs(ledger)).toEqual([{ kind: 'validate-staging', job_id: jobId, state: 'running' }]);

    const again = await runCli(args);
    expect(again.stderr).toContain(`validate-staging job ${jobId} was running: polling it again`);
    expect(again.code).toBe(0);
    const rows = jobs(ledger);
    expect(rows.filter((j) => j.kind === 'validate-staging')).toEqual([{ kind: 'validate-staging', job_id: jobId, state: 'done' }]);
    expect(rows.map((j) => [j.kind, j.state])).toEqual([
      ['validate-staging', 'done'],
      ['import', 'done'],
      ['counts', 'done'],
    ]);

    // the service agrees: one validation ran on this migration, and everything was imported
    const report = JSON.parse(readFileSync(join(dir, 'report', 'report.json'), 'utf8'));
    expect(report.balanced).toBe(true);
    const token = await getToken(svc.url);
    const res = await fetch(`${svc.url}/migration-assistance/migrations/${report.run.migrationId}/logs/stream?Actions=ValidatedStaging`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/jsonl' },
    });
    const validations = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { message: string });
    expect(new Set(validations.map((v) => /[0-9a-f-]{36}/.exec(v.message)?.[0]))).toEqual(new Set([jobId]));
    const migration = (await call(svc.url, token, 'GET', `/migration-assistance/migrations/${report.run.migrationId}`)).body;
    expect([migration.numberOfStagedEntities, migration.numberOfImportedEntities]).toEqual([20, 20]);
  });
});
