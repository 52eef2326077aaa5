/**
 * Issue 28: corrections across a migration's end, found by the lives test (test/reliability/
 * lives.test.ts). On the shipped samples, with a real embedded service and the real CLI:
 * - a migration whose only run is a corrections run counts the export's 240 rows, not the one
 *   corrected row, and its verification passes (the records imported by the migration before are
 *   live from that import, not strays);
 * - a record imported in two migrations and written by a run into a third (the ledger's
 *   earlier-imports trigger failed there with `UNIQUE constraint failed`);
 * - a row refused for a cell too few, handed back unedited, comes back in the next corrections
 *   file with its own cells (the error columns where the header has them), and stays refused;
 * - two corrections files of one migration holding the same row (refused again in the first,
 *   fixed in the second) verify (read together, the second was refused as a duplicate key).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  readCorrectionsCsv,
  rowWhere,
  sampleMigrations,
  setCell,
  writeCorrectionsCsv,
  type SampleMigration,
} from '../support/corrections.js';

const start = sampleMigrations();

/** `from`'s corrections file with only the rows of these `_origin`s (or klantnr), each changed by its cells (none: unedited). */
function pick(m: SampleMigration, from: string, name: string, fixes: Record<string, Record<string, string>>): void {
  const csv = readCorrectionsCsv(join(m.dir, from, 'klanten.corrections.csv'));
  const rows = Object.entries(fixes).map(([key, cells]) => {
    const row = rowWhere(csv, key.includes(':') ? '_origin' : 'klantnr', key);
    for (const [column, value] of Object.entries(cells)) setCell(csv, row, column, value);
    return row;
  });
  writeCorrectionsCsv(join(m.dir, name), { header: csv.header, rows });
}

const ORIGIN_100155 = 'samples/crm/klanten.csv:158';
const ORIGIN_100177 = 'samples/crm/klanten.csv:180';
/** 100133's row has one cell too few: refused without a usable key, found by its klantnr cell. */
const KEY_100133 = '100133';

describe('corrections across migrations', () => {
  it('a migration whose only run is migrate --corrections counts the export rows and verifies', async () => {
    const m = await start();
    const first = await m.cli(['migrate', 'pipelines/crm.yaml', '--out', 'r1']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    pick(m, 'r1', 'klanten-fixed.csv', { [ORIGIN_100155]: { postcode: '1234 AB' } });

    const fix = await m.cli(['migrate', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv', '--out', 'r2']);
    expect(fix.code, fix.stdout + fix.stderr).toBe(0);
    const r2 = m.report('r2');
    expect(r2.balanced, r2.problems.join('\n')).toBe(true);
    expect(r2.totals).toMatchObject({ sourceRows: 240, staged: 1, imported: 1, inOtherMigrations: 228 });
    expect(r2.run.migrationId).not.toBe(m.report('r1').run.migrationId);
    expect(await m.platform(r2.run.migrationId!)).toEqual({ staged: 1, imported: 1 });
    const verification = (r2 as unknown as { verification: { passed: boolean; strays: { total: number } } }).verification;
    expect([verification.passed, verification.strays.total]).toEqual([true, 0]);
  });

  it('a run into a third migration of records imported in two migrations before', async () => {
    const m = await start();
    for (const out of ['r1', 'r2']) {
      const res = await m.cli(out === 'r1' ? ['migrate', 'pipelines/crm.yaml', '--out', out] : ['run', 'pipelines/crm.yaml']);
      expect(res.code, res.stdout + res.stderr).toBe(0);
    }
    const second = await m.cli(['migrate', 'pipelines/crm.yaml', '--out', 'r2']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const third = await m.cli(['run', 'pipelines/crm.yaml']);
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(third.stdout).toContain('(created): completed');
    const kept = m.rows<{ n: number; migrations: number }>(
      'SELECT count(*) AS n, count(DISTINCT migration) AS migrations FROM earlier_imports',
    );
    expect(kept).toEqual([{ n: 228, migrations: 1 }]);
  });

  it('a row refused for a cell too few, handed back unedited, keeps its cells and stays refused', async () => {
    const m = await start();
    expect((await m.cli(['run', 'pipelines/crm.yaml'])).code).toBe(0);
    expect((await m.cli(['report', '--out', 'r1'])).code).toBe(0);
    // The row's line up to error_code (the message after it may be quoted): its cells by position.
    const lineOf = (out: string): { header: string[]; cells: string[]; text: string } => {
      const lines = readFileSync(join(m.dir, out, 'klanten.corrections.csv'), 'utf8')
        .replace(/^\ufeff/, '')
        .split('\r\n');
      const header = lines[0]!.split(';');
      const row = lines.find((l) => l.split(';')[header.indexOf('klantnr')] === KEY_100133);
      if (!row) throw new Error(`${out}: no row of ${KEY_100133}`);
      return { header, cells: row.split(';').slice(0, header.indexOf('error_code') + 1), text: `\ufeff${lines[0]}\r\n${row}\r\n` };
    };
    const r1 = lineOf('r1');
    expect(r1.cells[r1.header.indexOf('error_code')]).toBe('SOURCE_ROW_INVALID');
    pick(m, 'r1', 'unedited.csv', { [KEY_100133]: {} });

    const back = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'unedited.csv']);
    expect(back.code, back.stdout + back.stderr).toBe(0);
    expect((await m.cli(['report', '--out', 'r2'])).code).toBe(0);
    // Listed again under its source with the same cells as the export's row, the error columns
    // where the header has them: nothing slid into partner_klantnr.
    const r2 = lineOf('r2');
    expect(r2.header).toEqual(r1.header);
    expect(r2.cells.slice(0, -3)).toEqual(r1.cells.slice(0, -3));
    expect(r2.cells[r1.header.indexOf('partner_klantnr')]).toBe('');
    expect(r2.cells[r1.header.indexOf('error_code')]).toBe('SOURCE_ROW_INVALID');

    // Handed back unedited once more, it is still refused, not staged.
    writeFileSync(join(m.dir, 'unedited-2.csv'), r2.text);
    const twice = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'unedited-2.csv']);
    expect(twice.code, twice.stdout + twice.stderr).toBe(0);
    expect(m.rows<{ n: number }>("SELECT count(*) AS n FROM records WHERE state = 'staged'")[0]!.n).toBe(228);
  });

  it('two corrections files of one migration holding the same row verify', async () => {
    const m = await start();
    expect((await m.cli(['run', 'pipelines/crm.yaml'])).code).toBe(0);
    expect((await m.cli(['report', '--out', 'r1'])).code).toBe(0);
    // 100177 fixed in a first file that hands 100155 back unedited (refused again there); 100155
    // fixed in a second file. Both files sent records to the migration.
    pick(m, 'r1', 'a.csv', { [ORIGIN_100177]: { email: 'ruud@example.nl' }, [ORIGIN_100155]: {} });
    expect((await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'a.csv'])).code).toBe(0);
    pick(m, 'r1', 'b.csv', { [ORIGIN_100155]: { postcode: '1234 AB' } });
    const fixed = await m.cli(['migrate', 'pipelines/crm.yaml', '--corrections', 'b.csv', '--out', 'r2']);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    const r2 = m.report('r2') as unknown as { verification: { passed: boolean; identical: number; notVerifiable: { total: number } } };
    expect([r2.verification.passed, r2.verification.identical, r2.verification.notVerifiable.total]).toEqual([true, 230, 0]);
  });
});
