import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, runCli } from '../support/cli.js';
import { call, getToken, startTestService, tempDir, type TestService } from '../support/service.js';
import type { ReconciliationReport } from '../../src/reconcile/report-model.js';

const MIGRATIONS = '/migration-assistance/migrations';
const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(options: { jobRecordsPerSecond?: number } = {}) {
  const svc = await startTestService(options);
  services.push(svc);
  const dir = tempDir('stagecoach-migrate-');
  dirs.push(dir);
  return { svc, dir, ledger: join(dir, 'ledger.db'), out: join(dir, 'report') };
}

/** Polls a job over raw HTTP until it is done (the service's own answer, not the client's). */
async function jobResult(url: string, token: string, jobId: string): Promise<any> {
  for (;;) {
    const res = await call(url, token, 'GET', `/migration-assistance/jobs/${jobId}`);
    if (res.status === 200) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function readReport(out: string): ReconciliationReport {
  return JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ReconciliationReport;
}

describe('stagecoach migrate', () => {
  it('takes the sample pipeline through stage, validate, import and counts, and its report agrees with the service', async () => {
    const { svc, ledger, out } = await setup();
    const res = await runCli(['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--ledger', ledger, '--out', out, '--base-url', svc.url]);
    expect(res.stderr).toContain('validate-staging job');
    expect(res.code).toBe(0);
    const report = readReport(out);
    expect(report.balanced).toBe(true);
    expect(report.problems).toEqual([]);

    // every planted defect of the samples is a reject before upload, by its code
    const defects = JSON.parse(readFileSync(join(ROOT, 'samples/crm/defects.json'), 'utf8')) as Array<{ code: string }>;
    const rejectCodes = report.groups.flatMap((g) => g.gaps[0]!.explained.flatMap((e) => Array<string>(e.count).fill(e.code)));
    expect(rejectCodes.sort()).toEqual(defects.map((d) => d.code).sort());
    const plan = JSON.parse((await runCli(['plan', 'pipelines/crm.yaml', '--json'])).stdout) as { rowsRead: number };
    expect(report.totals.sourceRows).toBe(plan.rowsRead);
    expect(report.totals.mapped).toBe(report.totals.sourceRows - defects.length);

    // the service's own state: migration counters, staged pages, a counts job of our own
    const token = await getToken(svc.url);
    const migrationId = report.run.migrationId!;
    const migration = (await call(svc.url, token, 'GET', `${MIGRATIONS}/${migrationId}`)).body;
    const expectedStaged = report.groups.reduce((n, g) => n + g.expectedOnPlatform, 0);
    expect(migration.numberOfStagedEntities).toBe(expectedStaged);
    expect(migration.numberOfImportedEntities).toBe(report.totals.imported);
    const page = (await call(svc.url, token, 'GET', `/counterparty-management/migrations/${migrationId}/staging/counterparties?limit=1`))
      .body;
    expect(page.total).toBe(expectedStaged);
    const countsJob = JSON.parse((await call(svc.url, token, 'PUT', `${MIGRATIONS}/${migrationId}/jobs/counts`)).text) as string;
    const counts = await jobResult(svc.url, token, countsJob);
    const byType = counts.counts.find((t: { type: string }) => t.type === 'Counterparty');
    for (const g of report.groups) {
      const staged = byType.stagedRows.find((r: string[]) => r[0] === g.entityType)?.[1];
      const imported = byType.importedRows.find((r: string[]) => r[0] === g.entityType)?.[1];
      expect([g.entityType, Number(staged), Number(imported)]).toEqual([g.entityType, g.expectedOnPlatform, g.steps.imported]);
    }
    // the platform's log is not copied into the ledger (the copy grew with every refusal); the
    // log stays readable on the platform, from the start
    const db = new Database(ledger, { readonly: true });
    try {
      const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      expect(tables).not.toContain('migration_logs');
    } finally {
      db.close();
    }
    const logRes = await fetch(`${svc.url}${MIGRATIONS}/${migrationId}/logs/stream`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/jsonl' },
    });
    const serviceLog = (await logRes.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { sequenceNumber: number }).sequenceNumber);
    expect(serviceLog.slice(0, 3)).toEqual([1, 2, 3]);
    // the report's files: Markdown and a self-contained HTML page
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('**Balanced**');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<svg class="funnel"');
  });

  it('fixes a record refused by validation through the corrections file, re-staging only that row', async () => {
    const { svc, ledger, out } = await setup();
    const pipeline = 'test/cases/reconcile/people/pipeline.yaml';
    const first = await runCli(['migrate', pipeline, '--ledger', ledger, '--out', out, '--base-url', svc.url]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('validation refused 1 record(s): import waits');
    const refused = readReport(out);
    expect(refused.groups[0]!.steps).toEqual({ sourceRows: 20, mapped: 20, staged: 20, valid: 19, imported: 0 });
    expect(refused.topErrors.map((e) => [e.code, e.stage, e.records, e.examples[0]!.file, e.examples[0]!.line])).toEqual([
      ['UNKNOWN_CODE', 'validation', 1, 'test/cases/reconcile/people/people.csv', 4],
    ]);

    // the corrections file: the legacy row in its own columns, cells past them in `_extra` (none
    // here), then the error columns
    const corrections = readFileSync(join(out, 'people.corrections.csv'), 'utf8');
    const lines = corrections.split('\r\n');
    expect(lines[0]).toBe(
      '\uFEFF_origin;nr;initials;surname;nationality;_extra;error_field;error_code;error_message;error_stage;_row_hash',
    );
    expect(lines[1]).toMatch(
      /^test\/cases\/reconcile\/people\/people\.csv:4;1003;C\.;Bakker;XX;;nationalities\.0;UNKNOWN_CODE;[^;]*;validation;[0-9a-f]{16}$/,
    );
    expect(lines.slice(2)).toEqual(['']);

    // the engineer fixes the value and hands the file back
    const fixed = join(out, 'fixed.csv');
    writeFileSync(fixed, corrections.replace('1003;C.;Bakker;XX;', '1003;C.;Bakker;NL;'));
    const second = await runCli(['migrate', pipeline, '--corrections', fixed, '--ledger', ledger, '--out', out, '--base-url', svc.url]);
    expect(second.stdout).toContain('Run 2 of people into migration');
    expect(second.stdout).toContain(': 1 rows read, 1 staged');
    expect(second.code).toBe(0);
    const done = readReport(out);
    expect(done.balanced).toBe(true);
    expect(done.groups[0]!.steps).toEqual({ sourceRows: 20, mapped: 20, staged: 20, valid: 20, imported: 20 });
    // The row re-staged from the corrections file is verified as corrected, not from the export's refused row.
    expect(done.verification).toMatchObject({ passed: true, imported: 20, identical: 20 });

    const token = await getToken(svc.url);
    const migration = (await call(svc.url, token, 'GET', `${MIGRATIONS}/${done.run.migrationId}`)).body;
    expect([migration.numberOfStagedEntities, migration.numberOfImportedEntities, migration.importStatus]).toEqual([20, 20, 'Completed']);
    const db = new Database(ledger, { readonly: true });
    try {
      const ref = db
        .prepare<[], { reference_id: string; state: string }>("SELECT reference_id, state FROM records WHERE legacy_key = '1003'")
        .get()!;
      expect(ref.state).toBe('imported');
      const staged = (
        await call(
          svc.url,
          token,
          'GET',
          `/counterparty-management/migrations/${done.run.migrationId}/staging/counterparties/${ref.reference_id}`,
        )
      ).body;
      expect(staged.nationalities).toEqual(['NL']);
    } finally {
      db.close();
    }
  });
});
