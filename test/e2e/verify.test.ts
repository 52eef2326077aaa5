/**
 * `verify` against a platform that changes data: the embedded service imports the sample CRM
 * export with one data alteration at a time (docs/fault-injection.md, "Data alterations"), and
 * `migrate` (which verifies once imported) must find exactly the records the service altered —
 * the service lists them, the ledger traces them to legacy file:line — and nothing else. A clean
 * run verifies 100% identical; an accept rule turns a known normalisation into a pass.
 * Real service, real CLI.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import type { ReconciliationReport, VerificationReport } from '../../src/reconcile/index.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Migrated {
  code: number;
  stdout: string;
  verification: VerificationReport;
  /** legacy file:line of each referenceId the ledger holds. */
  where: Map<string, string>;
  /** What the service altered: referenceId and field ('*': lost). */
  altered: Array<{ rule: string; referenceId: string; field: string }>;
}

async function migrateWith(alterations: string | undefined, extra: string[] = [], faults?: string): Promise<Migrated> {
  const svc = await startTestService({ ...(alterations ? { alterations } : {}), ...(faults ? { faults } : {}), faultSeed: 5 });
  services.push(svc);
  const dir = tempDir('stagecoach-verify-');
  dirs.push(dir);
  for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  const ledger = join(dir, 'ledger.db');
  const r = await runCli(
    ['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--out', 'out', '--ledger', ledger, '--base-url', svc.url, ...extra],
    {
      cwd: dir,
    },
  );
  const report = JSON.parse(readFileSync(join(dir, 'out/report.json'), 'utf8')) as ReconciliationReport;
  const db = new Database(ledger, { readonly: true });
  const where = new Map(
    db
      .prepare<[], { reference_id: string; file: string; line: number }>(
        "SELECT reference_id, file, line FROM records WHERE state = 'imported'",
      )
      .all()
      .map((x) => [x.reference_id, `${x.file}:${x.line}`]),
  );
  db.close();
  const admin = (await (await fetch(`${svc.url}/_admin/faults/alterations`)).json()) as { altered: Migrated['altered'] };
  expect(report.verification, r.stderr).toBeDefined();
  return { code: r.code ?? -1, stdout: r.stdout, verification: report.verification!, where, altered: admin.altered };
}

/** Every record listed for a field, as file:line, sorted. */
const listed = (v: VerificationReport, field: string) =>
  (v.fields.find((f) => f.field === field)?.records ?? []).map((x) => `${x.file}:${x.line}`).sort();
const truth = (m: Migrated, field: string) =>
  m.altered
    .filter((a) => a.field === field)
    .map((a) => m.where.get(a.referenceId)!)
    .sort();

describe('verify', () => {
  it('verifies a clean migration 100% identical, says so first, and exits 0', async () => {
    const m = await migrateWith(undefined);
    expect(m.code, m.stdout).toBe(0);
    const v = m.verification;
    expect(v.imported).toBe(228);
    expect(v.identical).toBe(228);
    // Every record proven by hash: none was compared field by field with the export.
    expect(v).toMatchObject({ proven: 228, compared: 0 });
    expect(v).toMatchObject({ differing: 0, identicalAfterAccepted: 0, passed: true, problems: [], fields: [] });
    expect(v.notHeld.total + v.notVerifiable.total + v.strays.total).toBe(0);
    expect(m.stdout).toContain('Verified: 228 of 228 imported records identical on the platform (100%)');
  });

  it('resumes the stream with continue-from when the platform cuts it, and still verifies every record once', async () => {
    const m = await migrateWith(undefined, [], 'GET /counterparty-management/counterparties/stream:cut=1:after=30000');
    expect(m.code, m.stdout).toBe(0);
    const v = m.verification;
    expect(v.resumes).toBeGreaterThan(0);
    expect(v).toMatchObject({ imported: 228, identical: 228, passed: true });
    expect(v.streamed).toBe(228 + v.preExisting);
  });

  for (const [name, spec, field] of [
    ['a surname cut to 8 characters', 'surname:truncate=8:p=0.4', 'surname'],
    ['a telephone number dropped', 'telephoneNumbers:drop-item:p=0.2', 'telephoneNumbers'],
    ['a birth date moved by a day', 'dateOfBirth:shift-date=-1:p=0.1', 'dateOfBirth'],
    ['accents lost in first names', 'firstName:strip-accents', 'firstName'],
  ] as const) {
    it(`finds exactly the records imported with ${name}, traced to file:line, and nothing else`, async () => {
      const m = await migrateWith(spec);
      const expected = truth(m, field);
      expect(expected.length).toBeGreaterThan(2);
      expect(m.altered.every((a) => a.field === field)).toBe(true);
      const v = m.verification;
      expect(m.code).toBe(1);
      expect(v.passed).toBe(false);
      expect(v.fields.map((f) => f.field)).toEqual([field]);
      expect(v.fields[0]).toMatchObject({ differing: expected.length, accepted: 0 });
      expect(listed(v, field)).toEqual(expected);
      expect(v.differing).toBe(expected.length);
      expect(v.identical).toBe(v.imported - expected.length);
      // The altered records are the ones the proof by hash left to the field-by-field comparison.
      expect(v).toMatchObject({ proven: v.identical, compared: expected.length });
      expect(v.notHeld.total + v.notVerifiable.total + v.strays.total).toBe(0);
      expect(m.stdout).toContain(`${field}: ${expected.length} differ`);
    });
  }

  it('finds exactly the records the platform lost after the import', async () => {
    const m = await migrateWith('*:lose:p=0.05');
    const expected = truth(m, '*');
    expect(expected.length).toBeGreaterThan(2);
    const v = m.verification;
    expect(m.code).toBe(1);
    expect(v.notHeld.total).toBe(expected.length);
    expect(v.notHeld.records.map((r) => `${r.file}:${r.line}`).sort()).toEqual(expected);
    expect(v).toMatchObject({ differing: 0, fields: [], identical: v.imported - expected.length, proven: v.imported - expected.length });
    expect(v.notVerifiable.total + v.strays.total + v.compared).toBe(0);
  });

  it('accepts a known normalisation: exit 0, the records counted accepted, masked examples with lengths', async () => {
    const m = await migrateWith('surname:truncate=8:p=0.4', ['--accept', 'surname:truncate=8']);
    const expected = truth(m, 'surname');
    const v = m.verification;
    expect(m.code, m.stdout).toBe(0);
    expect(v).toMatchObject({ passed: true, differing: 0, identicalAfterAccepted: expected.length, accept: ['surname:truncate=8'] });
    expect(v.fields[0]).toMatchObject({ field: 'surname', differing: 0, accepted: expected.length });
    const example = v.fields[0]!.records[0]!;
    expect(example.acceptedBy).toBe('surname:truncate=8');
    expect(example.held).toMatch(/^"[^"]*\*[^"]*" \(8 chars\)$/);
    expect(example.sent).toMatch(/^"[^"]*\*[^"]*" \(\d+ chars\)$/);
  });

  it('verify --no-verify skips it; the verify command alone reports it again', async () => {
    const svc = await startTestService({ alterations: 'dateOfBirth:shift-date=1:p=0.1', faultSeed: 5 });
    services.push(svc);
    const dir = tempDir('stagecoach-verify-');
    dirs.push(dir);
    for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
    const common = ['--ledger', join(dir, 'ledger.db'), '--base-url', svc.url];
    const m = await runCli(['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--no-verify', '--out', 'out', ...common], { cwd: dir });
    expect(m.code, m.stdout + m.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'out/report.json'), 'utf8')).verification).toBeUndefined();
    const v = await runCli(['verify', 'crm', '--json', '--out', 'out2', ...common], { cwd: dir });
    expect(v.code).toBe(1);
    const result = JSON.parse(v.stdout) as VerificationReport;
    const admin = (await (await fetch(`${svc.url}/_admin/faults/alterations`)).json()) as { count: number };
    expect(result.fields).toHaveLength(1);
    expect(result.fields[0]).toMatchObject({ field: 'dateOfBirth', differing: admin.count });
    const md = readFileSync(join(dir, 'out2/report.md'), 'utf8');
    expect(md).toContain('## Verification: what the platform holds');
    expect(md).toContain(`**VERIFICATION FAILED: ${228 - admin.count} of 228 imported records identical on the platform`);
  });

  it('proves by hash a record an earlier migration imported and no later one re-sent, even when its row left the export since, and counts counterparties no ledger knows as strays', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-verify-');
    dirs.push(dir);
    for (const sub of ['pipelines', 'mappings', 'samples/crm', 'samples/core-banking'])
      cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
    const ledger = join(dir, 'ledger.db');
    const common = ['--drop-invalid', '--base-url', svc.url];
    const first = await runCli(['migrate', 'pipelines/crm.yaml', '--ledger', ledger, ...common], { cwd: dir });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // Customer 100004 (line 6, nobody's partner) leaves the export; the next migration no longer carries it.
    const file = join(dir, 'samples/crm/klanten.csv');
    const lines = readFileSync(file, 'latin1').split('\n');
    expect(lines[5]!.startsWith('100004;')).toBe(true);
    writeFileSync(file, Buffer.from([...lines.slice(0, 5), ...lines.slice(6)].join('\n'), 'latin1'));
    // The first migration is complete: this run stages into a new one, which migrate then drives.
    expect(
      (await runCli(['run', 'pipelines/crm.yaml', '--expect-refused', '100%', '--ledger', ledger, '--base-url', svc.url], { cwd: dir }))
        .code,
    ).toBe(0);
    const second = await runCli(
      ['migrate', 'pipelines/crm.yaml', '--expect-refused', '100%', '--ledger', ledger, '--out', 'out', ...common],
      { cwd: dir },
    );
    expect(second.code, second.stdout).toBe(0);
    const v = (JSON.parse(readFileSync(join(dir, 'out/report.json'), 'utf8')) as ReconciliationReport).verification!;
    // 100004 is still live from the first migration: the pipeline's record, and the platform holds
    // exactly what that migration sent (its hash proves it), whatever its export says now.
    expect(v).toMatchObject({ imported: 228, importedEarlier: 1, identical: 228, proven: 228, compared: 0, differing: 0, passed: true });
    expect(v.notVerifiable.total).toBe(0);
    expect(v.strays).toMatchObject({ total: 0, earlierMigration: 0, unknown: 0 });
    const firstMigration = JSON.parse(readFileSync(join(dir, '.stagecoach/reports/run-1/report.json'), 'utf8')).run.migrationId;
    expect(firstMigration).not.toBe(v.migrationId);
    expect(second.stdout).not.toContain('strays:');

    // Someone else migrates into the same tenant with a ledger of their own: unknown to this one.
    const other = await runCli(['migrate', 'pipelines/core-banking.yaml', '--ledger', join(dir, 'other.db'), '--out', 'other', ...common], {
      cwd: dir,
    });
    expect(other.code, other.stdout).toBe(0);
    const theirs = (JSON.parse(readFileSync(join(dir, 'other/report.json'), 'utf8')) as ReconciliationReport).totals.imported;
    const again = await runCli(['verify', 'crm', '--json', '--ledger', ledger, '--base-url', svc.url, '--out', 'again'], { cwd: dir });
    expect(again.code).toBe(1);
    const w = JSON.parse(again.stdout) as VerificationReport;
    expect(w.strays).toMatchObject({ total: theirs, earlierMigration: 0, unknown: theirs });
    expect(w.strays.records.every((r) => r.origin === 'unknown')).toBe(true);
    expect(w.notVerifiable.total).toBe(0);
    expect(w.preExisting).toBe(v.preExisting);
  });

  it('cannot verify a record the platform holds otherwise than sent whose legacy row left the export or changed since, and says why', async () => {
    const svc = await startTestService({ alterations: 'surname:truncate=8:p=0.4', faultSeed: 5 });
    services.push(svc);
    const dir = tempDir('stagecoach-verify-');
    dirs.push(dir);
    for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
    const ledger = join(dir, 'ledger.db');
    const common = ['--ledger', ledger, '--base-url', svc.url];
    const m = await runCli(['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--no-verify', '--out', 'out', ...common], { cwd: dir });
    expect(m.code, m.stdout + m.stderr).toBe(0);
    const { altered } = (await (await fetch(`${svc.url}/_admin/faults/alterations`)).json()) as Migrated;
    const db = new Database(ledger, { readonly: true });
    const rows = db
      .prepare<[], { reference_id: string; legacy_key: string; file: string; line: number }>(
        "SELECT reference_id, legacy_key, file, line FROM records WHERE state = 'imported' AND file = 'samples/crm/klanten.csv'",
      )
      .all();
    db.close();
    // Two altered persons nobody names as partner or director (a row that left would refuse theirs):
    // the first leaves the export, the second's surname changes.
    const file = join(dir, 'samples/crm/klanten.csv');
    const lines = readFileSync(file, 'latin1').split('\n');
    const named = new Set([
      ...lines.map((l) => l.split(';')[17]),
      ...[...readFileSync(join(dir, 'samples/crm/bedrijven.json'), 'utf8').matchAll(/"directeur_klantnr":\s*"(\d+)"/g)].map((x) => x[1]),
    ]);
    const alteredIds = new Set(altered.map((a) => a.referenceId));
    const [gone, changed] = rows.filter((r) => alteredIds.has(r.reference_id) && !named.has(r.legacy_key)).sort((a, b) => a.line - b.line);
    expect(lines[changed!.line - 1]!.split(';')[0]).toBe(changed!.legacy_key);
    const cells = lines[changed!.line - 1]!.split(';');
    cells[4] = `${cells[4]}x`; // achternaam: the surname sent is no longer what the row maps to
    lines[changed!.line - 1] = cells.join(';');
    lines.splice(gone!.line - 1, 1);
    writeFileSync(file, Buffer.from(lines.join('\n'), 'latin1'));

    const r = await runCli(['verify', 'crm', '--json', '--out', 'verified', ...common], { cwd: dir });
    expect(r.code).toBe(1);
    const v = JSON.parse(r.stdout) as VerificationReport;
    const why = new Map(v.notVerifiable.records.map((x) => [x.referenceId, x.why]));
    expect(v.notVerifiable.total).toBe(2);
    expect(why.get(gone!.reference_id)).toBe(
      'its legacy row is no longer where it was sent from (the export or corrections file moved, or changed)',
    );
    expect(why.get(changed!.reference_id)).toBe(
      'the legacy row maps to another record than the one sent (the export or the mapping changed since)',
    );
    // The other altered records still differ; every record the platform holds as sent is proven.
    expect(v).toMatchObject({ differing: altered.length - 2, identical: v.imported - altered.length, compared: altered.length });
    expect(v.proven).toBe(v.identical);
    expect(v.problems).toContain(
      '2 records the platform holds otherwise than sent (no proof by hash) and the export can no longer rebuild: not verified',
    );
  });

  it('verifies a clean migration by hash with the export moved away after the migration: the proof reads no export, and the corrections files it cannot cut are named, not half written', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-verify-');
    dirs.push(dir);
    for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
    const ledgerFile = join(dir, 'ledger.db');
    const m = await runCli(
      ['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--no-verify', '--out', 'out', '--ledger', ledgerFile, '--base-url', svc.url],
      {
        cwd: dir,
      },
    );
    expect(m.code, m.stdout + m.stderr).toBe(0);
    const corrections = readdirSync(join(dir, 'out')).filter((f) => f.includes('.corrections.'));
    renameSync(join(dir, 'samples/crm'), join(dir, 'samples/crm-moved'));
    const v = await runCli(['verify', '--out', 'out', '--ledger', ledgerFile, '--base-url', svc.url], { cwd: dir });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^Verified: 228 of 228 imported records identical on the platform \(100%\)\n/);
    expect(v.stdout).toContain(
      '  228 proven identical by hash (no export read for them); 0 held otherwise than sent compared field by field with the export\n',
    );
    const report = JSON.parse(readFileSync(join(dir, 'out/report.json'), 'utf8')) as ReconciliationReport;
    expect(report.verification).toMatchObject({ imported: 228, identical: 228, proven: 228, compared: 0, passed: true, problems: [] });
    // Each corrections file the migration wrote is now named as not written, with why, and is gone (not left stale beside the new report).
    expect(corrections.sort()).toEqual(['bedrijven.corrections.jsonl', 'klanten.corrections.csv']);
    const notWritten = (source: string, file: string, rows: number) =>
      `  corrections: not written for ${source}: Cannot read ${join(dir, 'samples/crm', file)}: ENOENT (${rows} refused row(s), kept in the ledger and the report; \`stagecoach report\` run again where the export is writes them)\n`;
    expect(v.stderr).toBe(notWritten('klanten', 'klanten.csv', 8) + notWritten('bedrijven', 'bedrijven.json', 4));
    expect(readdirSync(join(dir, 'out')).filter((f) => f.includes('.corrections.'))).toEqual([]);
  });

  it('compares field by field exactly the one record the platform holds otherwise than sent', async () => {
    const m = await migrateWith('surname:truncate=3:p=0.006');
    const expected = truth(m, 'surname');
    expect(expected).toHaveLength(1);
    const v = m.verification;
    expect(m.code).toBe(1);
    expect(v).toMatchObject({ proven: 227, compared: 1, identical: 227, differing: 1 });
    expect(listed(v, 'surname')).toEqual(expected);
  });

  it('verifies a platform that normalises nearly every record, by comparing each one field by field', async () => {
    const m = await migrateWith('surname:truncate=2', ['--accept', 'surname:truncate=2']);
    const expected = truth(m, 'surname');
    const v = m.verification;
    expect(expected.length).toBeGreaterThan(100);
    expect(m.code, m.stdout).toBe(0);
    expect(v).toMatchObject({ passed: true, compared: expected.length, identicalAfterAccepted: expected.length, differing: 0 });
    expect(v.proven).toBe(v.imported - expected.length);
    expect(v.identical).toBe(v.proven);
    expect(listed(v, 'surname')).toEqual(expected);
  });
});
