/**
 * `verify` proves what the platform holds for a pipeline as a whole, across its migrations: a
 * corrections run after a completed migration imports into a new one, and the records the first
 * imported (not re-sent) are verified against what the first run sent, not taken for strays. A
 * live counterparty no ledger record explains still fails the check. Real service, real CLI.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import type { ReconciliationReport, VerificationReport } from '../../src/reconcile/index.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setUp(
  alterations?: string,
): Promise<{ dir: string; url: string; cli: (args: string[], ledger?: string) => ReturnType<typeof runCli> }> {
  const svc = await startTestService(alterations ? { alterations, faultSeed: 5 } : {});
  services.push(svc);
  const dir = tempDir('stagecoach-verify-across-');
  dirs.push(dir);
  for (const sub of ['pipelines', 'mappings', 'samples/crm', 'samples/core-banking'])
    cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  const cli = (args: string[], ledger = 'ledger.db') =>
    runCli([...args, '--ledger', join(dir, ledger), '--base-url', svc.url], { cwd: dir });
  return { dir, url: svc.url, cli };
}

const verificationIn = (dir: string, out: string): VerificationReport =>
  (JSON.parse(readFileSync(join(dir, out, 'report.json'), 'utf8')) as ReconciliationReport).verification!;

/**
 * The report's klanten corrections file with only the row of `key`, its surname filled in (the
 * sample leaves it empty: MISSING_REQUIRED_FIELD).
 */
function fixSurname(dir: string, from: string, key: string, surname: string): string {
  const text = readFileSync(join(dir, from), 'utf8');
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const [header, ...rows] = text.split(eol);
  const columns = header!.replace(/^\uFEFF/, '').split(';');
  const row = rows.find((r) => r.split(';')[columns.indexOf('klantnr')] === key);
  expect(row, `${key} in ${from}`).toBeDefined();
  const fields = row!.split(';');
  expect(fields[columns.indexOf('achternaam')]).toBe('');
  fields[columns.indexOf('achternaam')] = surname;
  writeFileSync(join(dir, 'fixed.csv'), [header, fields.join(';'), ''].join(eol));
  return 'fixed.csv';
}

describe('verify across the migrations of a pipeline', () => {
  it('passes the documented corrections path: the first migration’s imports verified identical, none a stray, exit 0', async () => {
    const { dir, cli } = await setUp();
    const first = await cli(['migrate', 'pipelines/crm.yaml', '--out', 'm1']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const firstMigration = verificationIn(dir, 'm1').migrationId;
    const report = await cli(['report', 'crm', '--out', 'r1']);
    expect(report.stdout).toContain('corrections: r1/klanten.corrections.csv');

    const fixed = fixSurname(dir, 'r1/klanten.corrections.csv', '100022', 'Jacobs');
    const second = await cli(['migrate', 'pipelines/crm.yaml', '--corrections', fixed, '--out', 'm2']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const v = verificationIn(dir, 'm2');
    // The corrections went into a new migration (the first was completed)…
    expect(v.migrationId).not.toBe(firstMigration);
    // …and the pipeline as a whole is verified: 228 from the first migration, 1 from the second.
    expect(v).toMatchObject({
      imported: 229,
      importedEarlier: 228,
      identical: 229,
      identicalAfterAccepted: 0,
      differing: 0,
      passed: true,
      problems: [],
      fields: [],
    });
    expect(v.notHeld.total + v.notVerifiable.total).toBe(0);
    expect(v.strays).toEqual({ total: 0, earlierMigration: 0, unknown: 0, records: [] });
    expect(second.stdout).toContain('Verified: 229 of 229 imported records identical on the platform (100%)');
    expect(second.stdout).toContain('229 imported records in the ledger (228 from an earlier migration of the pipeline)');
  });

  it('compares a record the platform holds otherwise than sent from a corrections file with that file’s row', async () => {
    const { dir, url, cli } = await setUp('surname:truncate=3');
    expect((await cli(['migrate', 'pipelines/crm.yaml', '--no-verify', '--out', 'm1'])).code).toBe(0);
    expect((await cli(['report', 'crm', '--out', 'r1'])).code).toBe(0);
    const fixed = fixSurname(dir, 'r1/klanten.corrections.csv', '100022', 'Jacobs');
    const second = await cli(['migrate', 'pipelines/crm.yaml', '--corrections', fixed, '--out', 'm2']);
    expect(second.code, second.stdout + second.stderr).toBe(1);
    const v = verificationIn(dir, 'm2');
    const { altered } = (await (await fetch(`${url}/_admin/faults/alterations`)).json()) as { altered: Array<{ field: string }> };
    // Every surname cut, the corrected record's among them: each compared field by field with
    // the row that sent it, the corrected one with its row in the corrections file.
    expect(altered.length).toBeGreaterThan(100);
    expect(v).toMatchObject({ imported: 229, differing: altered.length, compared: altered.length, proven: 229 - altered.length });
    expect(v.fields.map((f) => f.field)).toEqual(['surname']);
    expect(v.fields[0]!.records.filter((r) => r.file === 'fixed.csv')).toMatchObject([
      { legacyKey: '100022', line: 2, sent: '"J***" (6 chars)', held: '"J**" (3 chars)' },
    ]);
    expect(v.notVerifiable.total + v.notHeld.total + v.strays.total).toBe(0);
  });

  it('passes a plain re-run into a new migration after a completed one, and after a canceled one', async () => {
    const { dir, cli } = await setUp();
    expect((await cli(['migrate', 'pipelines/crm.yaml', '--out', 'm1'])).code).toBe(0);
    const run = await cli(['run', 'pipelines/crm.yaml']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const second = await cli(['migrate', 'pipelines/crm.yaml', '--out', 'm2']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const v2 = verificationIn(dir, 'm2');
    expect(v2.migrationId).not.toBe(verificationIn(dir, 'm1').migrationId);
    // Everything was sent again: every record is verified as the second migration imported it.
    expect(v2).toMatchObject({ imported: 228, importedEarlier: 0, identical: 228, passed: true });

    // A third run is staged, then canceled: the platform still holds the second migration's imports.
    const staged = await cli(['run', 'pipelines/crm.yaml']);
    expect(staged.code, staged.stdout + staged.stderr).toBe(0);
    const canceledId = /into migration ([0-9a-f-]{36})/.exec(staged.stdout)?.[1];
    expect(canceledId, staged.stdout).toBeDefined();
    expect(canceledId).not.toBe(v2.migrationId);
    const cancel = await cli(['cancel', canceledId!]);
    expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
    const afterCancel = await cli(['verify', 'crm', '--json', '--out', 'v3']);
    expect(afterCancel.code, afterCancel.stdout + afterCancel.stderr).toBe(0);
    const v3 = JSON.parse(afterCancel.stdout) as VerificationReport;
    expect(v3).toMatchObject({ imported: 228, importedEarlier: 228, identical: 228, passed: true });
    expect(v3.strays.total + v3.notHeld.total + v3.notVerifiable.total).toBe(0);

    const fourth = await cli(['migrate', 'pipelines/crm.yaml', '--out', 'm4']);
    expect(fourth.code, fourth.stdout + fourth.stderr).toBe(0);
    expect(verificationIn(dir, 'm4')).toMatchObject({ imported: 228, importedEarlier: 0, identical: 228, passed: true });
  });

  it('counts another pipeline of the same ledger, imported in a migration of its own, apart: not strays', async () => {
    const { dir, cli } = await setUp();
    const crm = await cli(['migrate', 'pipelines/crm.yaml', '--out', 'crm']);
    expect(crm.code, crm.stdout + crm.stderr).toBe(0);
    const bank = await cli(['migrate', 'pipelines/core-banking.yaml', '--drop-invalid', '--out', 'bank']);
    expect(bank.code, bank.stdout + bank.stderr).toBe(0);
    const v = verificationIn(dir, 'bank');
    expect(v.migrationId).not.toBe(verificationIn(dir, 'crm').migrationId);
    expect(v.pipelines).toEqual(['core-banking']);
    expect(v).toMatchObject({ otherPipelines: 228, passed: true, differing: 0 });
    expect(v.identical).toBe(v.imported);
    expect(v.strays.total).toBe(0);
    expect(bank.stdout).toContain('228 live counterparties imported by other pipelines of this ledger, verified with their own migrations');
  });

  it('still fails on a live counterparty no ledger record explains, after the corrections path', async () => {
    const { dir, cli } = await setUp();
    expect((await cli(['migrate', 'pipelines/crm.yaml', '--out', 'm1'])).code).toBe(0);
    await cli(['report', 'crm', '--out', 'r1']);
    const fixed = fixSurname(dir, 'r1/klanten.corrections.csv', '100022', 'Jacobs');
    expect((await cli(['migrate', 'pipelines/crm.yaml', '--corrections', fixed, '--out', 'm2'])).code).toBe(0);

    // Someone else migrates into the same tenant with a ledger of their own: unknown to this one.
    const other = await cli(['migrate', 'pipelines/core-banking.yaml', '--drop-invalid', '--out', 'other'], 'other.db');
    expect(other.code, other.stdout + other.stderr).toBe(0);
    const theirs = (JSON.parse(readFileSync(join(dir, 'other/report.json'), 'utf8')) as ReconciliationReport).totals.imported;
    expect(theirs).toBeGreaterThan(0);

    const again = await cli(['verify', 'crm', '--json', '--out', 'again']);
    expect(again.code).toBe(1);
    const v = JSON.parse(again.stdout) as VerificationReport;
    expect(v).toMatchObject({ imported: 229, importedEarlier: 228, identical: 229, differing: 0, passed: false });
    expect(v.strays).toMatchObject({ total: theirs, earlierMigration: 0, unknown: theirs });
    expect(v.strays.records.every((r) => r.origin === 'unknown')).toBe(true);
    expect(v.problems).toEqual([
      `${theirs} live counterparties no live import of the pipelines explains (0 known to the ledger in another state, ${theirs} unknown)`,
    ]);
  });
});
