/**
 * `migrate --drop-invalid` killed while it deletes refused records from staging: the service
 * holds every DELETE of a staged record for 3 s (fault rule), the CLI is SIGKILLed while one is
 * held — after the platform got it, before its answer reached the ledger — and the platform
 * carries the deletion out anyway. Run again, the ledger must agree with the platform: the
 * deleted record is refused and gone, not `imported`, and the same records are dropped as
 * without the kill.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CLI, ROOT, runCli } from '../support/cli.js';
import { call, getToken, startTestService, tempDir, type TestService } from '../support/service.js';
import type { ReconciliationReport } from '../../src/reconcile/report-model.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Rows the validation refuses (nationality XX, unknown to the platform's code tables). */
const REFUSED = ['1003', '1008', '1015'];

/** The people fixture (20 persons) with three rows validation refuses. */
function people(dir: string): string {
  const src = join(ROOT, 'test/cases/reconcile/people');
  copyFileSync(join(src, 'pipeline.yaml'), join(dir, 'pipeline.yaml'));
  copyFileSync(join(src, 'people-mapping.yaml'), join(dir, 'people-mapping.yaml'));
  const rows = readFileSync(join(src, 'people.csv'), 'utf8')
    .split('\n')
    .map((line) => (REFUSED.includes(line.split(';')[0]!) ? line.replace(/;[A-Z]{2}$/, ';XX') : line));
  writeFileSync(join(dir, 'people.csv'), rows.join('\n'));
  return join(dir, 'pipeline.yaml');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function ledgerStates(ledger: string): Record<string, number> {
  const db = new Database(ledger, { readonly: true });
  try {
    const rows = db.prepare<[], { state: string; n: number }>('SELECT state, count(*) AS n FROM records GROUP BY state').all();
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  } finally {
    db.close();
  }
}

describe('stagecoach migrate --drop-invalid killed during a removal', () => {
  it('settles the interrupted removal on the next run: platform and ledger agree, nothing unaccounted', async () => {
    const svc = await startTestService({ faults: 'DELETE */staging/counterparties/*:latency=3000' });
    services.push(svc);
    const dir = tempDir('stagecoach-drop-kill-');
    dirs.push(dir);
    const ledger = join(dir, 'ledger.db');
    const out = join(dir, 'report');
    const args = ['migrate', people(dir), '--drop-invalid', '--ledger', ledger, '--out', out, '--base-url', svc.url];
    const token = await getToken(svc.url);

    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
    const closed = new Promise((r) => child.once('close', r));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const jobId = await until('the first validation job', async () => /validate-staging job (\S+) started/.exec(stderr)?.[1]);
    await until('the validation to finish', async () =>
      (await call(svc.url, token, 'GET', `/migration-assistance/jobs/${jobId}`)).status === 200 ? true : undefined,
    );
    const migrationId = (await call(svc.url, token, 'GET', '/migration-assistance/migrations/current')).body.referenceId as string;
    expect(migrationId).toMatch(/^[0-9a-f-]{36}$/);
    await sleep(1500);
    // The kill must land while the service holds a DELETE (received, not yet carried out).
    await until('a DELETE held by the fault rule', async () => {
      const stats = (await call(svc.url, undefined, 'GET', '/_admin/faults/stats')).body as { inProgress: Record<string, number> };
      return Object.keys(stats.inProgress).some((route) => route.startsWith('DELETE ')) || undefined;
    });
    child.kill('SIGKILL');
    await closed;

    // The platform carries the held DELETE out after the client died: wait until it has.
    const stagedTotal = async () =>
      (await call(svc.url, token, 'GET', `/counterparty-management/migrations/${migrationId}/staging/counterparties?limit=1`)).body
        .total as number;
    await until('the held DELETE to be carried out', async () => ((await stagedTotal()) < 20 ? true : undefined));

    const again = await runCli(args);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ReconciliationReport;
    expect(report.problems).toEqual([]);
    expect(again.stderr).not.toMatch(/error/i);
    expect(again.code).toBe(0);
    expect(report.totals.unaccounted).toBe(0);
    expect(report.balanced).toBe(true);

    // The platform's own numbers: the same three records dropped as without a kill.
    const migration = (await call(svc.url, token, 'GET', `/migration-assistance/migrations/${migrationId}`)).body;
    expect([migration.numberOfStagedEntities, migration.numberOfImportedEntities]).toEqual([17, 17]);
    expect(report.totals.imported).toBe(migration.numberOfImportedEntities);
    expect(report.groups.reduce((n, g) => n + g.expectedOnPlatform, 0)).toBe(migration.numberOfStagedEntities);
    expect(ledgerStates(ledger)).toEqual({ imported: 17, invalid: 3 });
  });
});
