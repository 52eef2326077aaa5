/**
 * Issue 40, item 2: a corrections file is checked against the ledger before anything is sent. On
 * the shipped samples, real service, real CLI, the file edited as a person edits one in a
 * spreadsheet:
 * - a row ADDED holding the key of a good, live record must not replace that record (its surname
 *   became the added row's, and the report said balanced): refused, counted, the record untouched;
 * - a row added with a brand-new key must not become a source row (6 rows for a 5-row export);
 * - a row duplicated (copied below itself), a file of an earlier round (its rows corrected since),
 *   a row under another source's name: refused by the same rule, counted;
 * - columns reordered are read by name; a column of the source dropped refuses the file before
 *   anything is sent; a file re-saved in windows-1252 reads as such (an unedited row stays unedited).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { demoClient } from '../support/pipeline-run.js';
import {
  readCorrectionsCsv,
  rowWhere,
  sampleMigrations,
  setCell,
  writeCorrectionsCsv,
  type CorrectionsCsv,
  type SampleMigration,
} from '../support/corrections.js';

const start = sampleMigrations();

/** The samples migrated with --drop-invalid (227 live), or only staged (`run`), and the report's corrections file. */
async function migrated(how: 'migrate' | 'run' = 'migrate'): Promise<{ m: SampleMigration; csv: CorrectionsCsv }> {
  const m = await start();
  const res = await m.cli(
    how === 'migrate' ? ['migrate', 'pipelines/crm.yaml', '--drop-invalid', '--out', 'r1'] : ['run', 'pipelines/crm.yaml'],
  );
  expect(res.code, res.stdout + res.stderr).toBe(0);
  if (how === 'run') expect((await m.cli(['report', '--out', 'r1'])).code).toBe(0);
  return { m, csv: readCorrectionsCsv(join(m.dir, 'r1/klanten.corrections.csv')) };
}

/** The surname the platform holds for a referenceId. */
async function surnameOf(m: SampleMigration, referenceId: string): Promise<string | undefined> {
  for await (const cp of demoClient(m.svc.url).counterparties.stream({ format: 'jsonl' }))
    if (cp.referenceId === referenceId) return (cp as { surname?: string }).surname;
  return undefined;
}

const live = (m: SampleMigration, key: string) =>
  m.rows<{ reference_id: string; state: string; file: string; content_hash: string }>(
    "SELECT reference_id, state, file, content_hash FROM records WHERE keyed = 1 AND legacy_key = ? AND source = 'klanten'",
    key,
  )[0]!;

/** A copy of the 100155 row (refused for its postcode), fixed, with another key and no `_origin`, `_row_hash` or errors: a row a person added. */
function added(csv: CorrectionsCsv, key: string, surname: string): string[] {
  const row = [...rowWhere(csv, 'klantnr', '100155')];
  for (const [column, value] of Object.entries({ klantnr: key, achternaam: surname, postcode: '1234 AB', _origin: '', _row_hash: '' }))
    row[csv.header.indexOf(column)] = value;
  for (const c of ['error_field', 'error_code', 'error_message', 'error_stage']) row[csv.header.indexOf(c)] = '';
  return row;
}

describe('a corrections file is checked against the ledger before anything is sent', () => {
  it('an added row with a live record’s key does not replace it, and one with a new key does not become a source row', async () => {
    const { m, csv } = await migrated();
    const before = live(m, '100000');
    expect(before.state).toBe('imported');
    const surname = await surnameOf(m, before.reference_id);
    expect(surname).toBe('Smits');
    const fixedRow = rowWhere(csv, 'klantnr', '100155');
    setCell(csv, fixedRow, 'postcode', '1234 AB');
    writeCorrectionsCsv(join(m.dir, 'fixed.csv'), {
      header: csv.header,
      rows: [fixedRow, added(csv, '100000', 'Overschreven'), added(csv, '999001', 'Nieuw')],
    });

    const res = await m.cli(['migrate', 'pipelines/crm.yaml', '--corrections', 'fixed.csv', '--out', 'r2']);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(
      '2 row(s) of the corrections refused before anything was sent (no refused record of the ledger is theirs to replace; not written as records):',
    );
    expect(res.stdout).toMatch(
      /fixed\.csv:3: the record of key 100000 \(samples\/crm\/klanten\.csv:2\) is imported in migration \S+, not refused/,
    );
    expect(res.stdout).toMatch(/fixed\.csv:4: no refused row of klanten is this row's \(key 999001\)/);
    // The live record is as it was: not sent again, the platform holds the export's surname.
    expect(live(m, '100000')).toEqual(before);
    expect(await surnameOf(m, before.reference_id)).toBe('Smits');
    // No record of the new key; the export's 240 rows stay 240; the fixed row is imported.
    expect(m.rows("SELECT 1 FROM records WHERE legacy_key = '999001'")).toEqual([]);
    expect(live(m, '100155').state).toBe('imported');
    const report = m.report('r2');
    expect(report.totals.sourceRows).toBe(240);
    expect(report.balanced, report.problems.join('\n')).toBe(true);
  });

  it('a copied row, a file of an earlier round and a row under another source: refused and counted; columns reordered are read by name', async () => {
    const { m, csv } = await migrated('run');
    const row = rowWhere(csv, 'klantnr', '100155');
    setCell(csv, row, 'postcode', '1234 AB');
    const copy = [...row];
    setCell(csv, copy, 'achternaam', 'Kopie');
    // Columns reordered: the export's columns reversed, the _-columns and errors where they were.
    const own = csv.header.filter((c) => !c.startsWith('_') && !c.startsWith('error_'));
    const header = [
      ...csv.header.filter((c) => !own.includes(c) && !c.startsWith('error_') && c !== '_row_hash' && c !== '_extra'),
      ...own.reverse(),
      ...csv.header.filter((c) => c.startsWith('error_') || c === '_row_hash' || c === '_extra'),
    ];
    const reorder = (r: string[]) => header.map((h) => r[csv.header.indexOf(h)]!);
    writeCorrectionsCsv(join(m.dir, 'round2.csv'), { header, rows: [reorder(row), reorder(copy)] });
    const res = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'round2.csv', '--json']);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { sent: number; corrections: { refused: Array<{ line: number; reason: string }> } };
    expect(out.sent).toBe(1);
    expect(out.corrections.refused.map((r) => [r.line, r.reason])).toEqual([[3, 'repeated']]);
    expect(m.rows<{ state: string }>("SELECT state FROM records WHERE legacy_key = '100155'")).toEqual([{ state: 'staged' }]);

    // The first round's file handed back: its rows were corrected (100155) or are still refused.
    const again = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'round2.csv', '--json']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const o2 = JSON.parse(again.stdout) as { sent: number; corrections: { refused: Array<{ line: number; reason: string }> } };
    expect([o2.sent, o2.corrections.refused.map((r) => [r.line, r.reason])]).toEqual([
      0,
      [
        [2, 'not-refused'],
        [3, 'not-refused'],
      ],
    ]);

    // A row of klanten under the name of bedrijven (the other source): refused, not mapped as an organisation.
    const bedrijven = rowWhere(csv, 'klantnr', '100177');
    setCell(csv, bedrijven, '_source', 'bedrijven');
    writeCorrectionsCsv(join(m.dir, 'other.csv'), { header: csv.header, rows: [bedrijven] });
    const other = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'other.csv', '--json']);
    const o3 = JSON.parse(other.stdout) as { sent: number; corrections: { refused: Array<{ reason: string }> } };
    expect([o3.sent, o3.corrections.refused.map((r) => r.reason)]).toEqual([0, ['other-source']]);
    const report = await m.cli(['report', '--out', 'r3', '--json']);
    expect((JSON.parse(report.stdout) as { totals: { sourceRows: number } }).totals.sourceRows).toBe(240);
  });

  it('a column of the source dropped refuses the file before anything is sent; a windows-1252 re-save keeps an unedited row unedited', async () => {
    const { m, csv } = await migrated('run');
    const drop = csv.header.indexOf('tussenvoegsel');
    writeCorrectionsCsv(join(m.dir, 'dropped.csv'), {
      header: csv.header.filter((_, i) => i !== drop),
      rows: csv.rows.map((r) => r.filter((_, i) => i !== drop)),
    });
    const runs = m.rows('SELECT id FROM runs').length;
    const res = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'dropped.csv']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('dropped.csv: column tussenvoegsel of the source klanten is missing');
    expect(m.rows('SELECT id FROM runs').length).toBe(runs);

    // Saved again by a spreadsheet in windows-1252, no byte-order mark: the duplicate 100081 unedited stays unedited.
    const text = readFileSync(join(m.dir, 'r1/klanten.corrections.csv'), 'utf8').replace(/^\ufeff/, '');
    expect(text).toMatch(/[^\x00-\x7f]/);
    writeFileSync(join(m.dir, 'ansi.csv'), iconv.encode(text, 'windows-1252'));
    const ansi = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'ansi.csv']);
    expect(ansi.code, ansi.stdout + ansi.stderr).toBe(0);
    expect(ansi.stdout).toContain('1 duplicate-key row(s) came back unedited: left refused, not sent');
  });
});
