/**
 * Issue 28, item 1: a record corrected from a corrections file stays corrected until a newer
 * version of its own row arrives. The documented path on the shipped samples — run, report, fix
 * 100155's postcode in the corrections file, `run --corrections`, then a plain `migrate` — must
 * end balanced with the ledger equal to the platform (read through its own API), and so must
 * `migrate --drop-invalid` after a `migrate --corrections` that validation refused. Real service,
 * real CLI.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import {
  readCorrectionsCsv,
  rowWhere,
  sampleMigrations,
  setCell,
  writeCorrectionsCsv,
  type SampleMigration,
} from '../support/corrections.js';

const start = sampleMigrations();

/** r1/klanten.corrections.csv with only the rows of these keys, each changed by `fix`. */
function fixedFile(m: SampleMigration, name: string, fixes: Record<string, Record<string, string>>): void {
  const csv = readCorrectionsCsv(join(m.dir, 'r1/klanten.corrections.csv'));
  const rows = Object.entries(fixes).map(([key, cells]) => {
    const row = rowWhere(csv, 'klantnr', key);
    for (const [column, value] of Object.entries(cells)) setCell(csv, row, column, value);
    return row;
  });
  writeCorrectionsCsv(join(m.dir, name), { header: csv.header, rows });
}

const state = (m: SampleMigration, key: string) =>
  m.rows<{ state: string; file: string; line: number }>('SELECT state, file, line FROM records WHERE legacy_key = ?', key);

describe('a corrected record stays corrected', () => {
  it('a plain migrate of the unchanged export after run --corrections keeps 100155 corrected, imports it once and balances with the platform', async () => {
    const m = await start();
    expect((await m.cli(['run', 'pipelines/crm.yaml'])).code).toBe(0);
    expect((await m.cli(['report', '--out', 'r1'])).code).toBe(0);
    fixedFile(m, 'klanten-fixed.csv', { '100155': { postcode: '1234 AB' } });

    const fix = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv']);
    expect(fix.code, fix.stdout + fix.stderr).toBe(0);
    expect(state(m, '100155')).toEqual([{ state: 'staged', file: 'klanten-fixed.csv', line: 2 }]);

    // plan --ledger says what the run then does: nothing to send, the correction kept.
    const plan = await runCli(['plan', 'pipelines/crm.yaml', '--ledger', m.ledger, '--json'], { cwd: m.dir });
    const impact = (JSON.parse(plan.stdout) as { impact: { toSend: number; keptCorrected: number; unchanged: number } }).impact;
    expect([impact.toSend, impact.keptCorrected, impact.unchanged]).toEqual([0, 1, 228]);

    const plain = await m.cli(['migrate', 'pipelines/crm.yaml', '--out', 'r2']);
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(plain.stdout).toContain(': 240 rows read, 0 staged, 228 unchanged, 11 rejected, 0 refused by staging\n');
    expect(plain.stdout).toContain(
      '  1 row(s) of the export unchanged since a corrections file replaced them: the corrections stand, not sent again\n',
    );
    expect(plain.stdout).toContain('Reconciliation balanced (tolerance 0)');
    // Not flipped back to rejected by klanten.csv:158, which still holds `123 AB`.
    expect(state(m, '100155')).toEqual([{ state: 'imported', file: 'klanten-fixed.csv', line: 2 }]);
    const report = m.report('r2');
    expect(report.balanced).toBe(true);
    expect(report.totals.sourceRows).toBe(240);
    expect(report.totals.imported).toBe(229);
    expect(await m.platform(report.run.migrationId!)).toEqual({ staged: 229, imported: 229 });
    const imported = m.rows<{ n: number }>("SELECT count(*) AS n FROM records WHERE state = 'imported'")[0]!.n;
    expect(imported).toBe(229);
    // The next corrections file no longer asks for 100155.
    const next = readCorrectionsCsv(join(m.dir, 'r2/klanten.corrections.csv'));
    expect(next.rows.map((r) => r[next.header.indexOf('klantnr')])).not.toContain('100155');
    expect(next.rows).toHaveLength(7);

    // The migration is complete: a run starts a new one from the export, which still holds
    // 100155 as it was (`123 AB`). The correction stands there too: the row is left alone, the
    // record stays imported by migration 1 (live on the platform), never rejected, and the next
    // corrections file does not ask for it again. The new migration's report counts the export's
    // 240 rows, 100155 among them as held by another migration.
    const fresh = await m.cli(['run', 'pipelines/crm.yaml']);
    expect(fresh.code, fresh.stdout + fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('(created): completed');
    expect(fresh.stdout).toContain(
      '  1 row(s) of the export unchanged since a corrections file replaced them: the corrections stand, not sent again\n',
    );
    expect(state(m, '100155')).toEqual([{ state: 'imported', file: 'klanten-fixed.csv', line: 2 }]);
    expect((await m.cli(['report', '--out', 'r3'])).code).toBe(0);
    const again = readCorrectionsCsv(join(m.dir, 'r3/klanten.corrections.csv'));
    expect(again.rows.map((r) => r[again.header.indexOf('klantnr')])).not.toContain('100155');
    expect(again.rows).toHaveLength(7);
    const r3 = m.report('r3');
    expect(r3.balanced, r3.problems.join('\n')).toBe(true);
    expect([r3.totals.sourceRows, r3.totals.staged, r3.totals.inOtherMigrations]).toEqual([240, 228, 1]);
    expect((await m.platform(r3.run.migrationId!)).staged).toBe(228);
    const status = JSON.parse((await runCli(['status', '--json', '--ledger', m.ledger], { cwd: m.dir })).stdout) as {
      pipelines: Array<{ byState: Record<string, number> }>;
    };
    expect([status.pipelines[0]!.byState.imported, status.pipelines[0]!.byState.rejected]).toEqual([1, 11]);
    const replan = await runCli(['plan', 'pipelines/crm.yaml', '--ledger', m.ledger, '--json'], { cwd: m.dir });
    const after = (JSON.parse(replan.stdout) as { impact: { toSend: number; keptCorrected: number } }).impact;
    expect([after.toSend, after.keptCorrected]).toEqual([0, 1]);
  });

  it('migrate --drop-invalid after a migrate --corrections that validation refused leaves no corrected record imported on the platform but rejected in the ledger', async () => {
    const m = await start();
    expect((await m.cli(['run', 'pipelines/crm.yaml'])).code).toBe(0);
    expect((await m.cli(['report', '--out', 'r1'])).code).toBe(0);
    // 100155 fixed for good; 100111's partner pointed at 100022, a row of the export the local
    // checks know but that was refused itself: the platform's validation refuses 100111.
    fixedFile(m, 'klanten-fixed.csv', { '100155': { postcode: '1234 AB' }, '100111': { partner_klantnr: '100022' } });

    const corrected = await m.cli(['migrate', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv', '--out', 'r2']);
    expect(corrected.code, corrected.stdout + corrected.stderr).toBe(1);
    expect(corrected.stdout).toContain('validation refused 1 record(s)');

    const dropped = await m.cli(['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--out', 'r3']);
    expect(dropped.code, dropped.stdout + dropped.stderr).toBe(0);
    const report = m.report('r3');
    expect(report.balanced, report.problems.join('\n')).toBe(true);
    // The rows keep the order of the corrections file: 100111 on line 2, 100155 on line 3.
    expect(state(m, '100155')).toEqual([{ state: 'imported', file: 'klanten-fixed.csv', line: 3 }]);
    expect(state(m, '100111')).toEqual([{ state: 'invalid', file: 'klanten-fixed.csv', line: 2 }]);
    const ledger = m.rows<{ state: string; n: number }>('SELECT state, count(*) AS n FROM records GROUP BY state ORDER BY state');
    expect(ledger).toEqual([
      { state: 'imported', n: 229 },
      { state: 'invalid', n: 1 },
      { state: 'rejected', n: 10 },
    ]);
    expect(await m.platform(report.run.migrationId!)).toEqual({ staged: 229, imported: 229 });
    expect(readFileSync(join(m.dir, 'r3/report.md'), 'utf8')).toContain('| 100155 | rejected in run 1 at samples/crm/klanten.csv:158');
  });
});
