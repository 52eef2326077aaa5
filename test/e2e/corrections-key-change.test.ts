/**
 * Issue 28, items 2 and 3: a correction that changes a key, and a corrections file with a column
 * the engineer added. On the shipped samples: 100133's missing cell filled in (the row had no
 * usable key, it gets 100133) and the duplicate 100081 at klanten.csv:91 given a key of its own
 * close the old refusals, so the 240-row export stays 240 rows, the stories say "corrected as key
 * X" and the next corrections file does not ask for them again; a remark column is ignored with a
 * note and neither makes an unedited duplicate look edited nor reaches the next file. Real
 * service, real CLI.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
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

async function firstRound(): Promise<SampleMigration> {
  const m = await start();
  expect((await m.cli(['run', 'pipelines/crm.yaml'])).code).toBe(0);
  expect((await m.cli(['report', '--out', 'r1'])).code).toBe(0);
  return m;
}

const duplicates = (m: SampleMigration, out: string) =>
  m.report(out).groups.reduce((n, g) => n + (g.gaps[0]!.explained.find((e) => e.code === 'DUPLICATE_LEGACY_KEY')?.count ?? 0), 0);

describe('a correction that changes a key', () => {
  it('closes the old refusal: the row is counted once, its story says "corrected as key X", and the next corrections file does not list it', async () => {
    const m = await firstRound();
    const csv = readCorrectionsCsv(join(m.dir, 'r1/klanten.corrections.csv'));
    // 100133's row has one cell too few: the file writes its 17 cells under the first 17 columns
    // and says so in _extra; the engineer checks them (partner_klantnr, the last, is rightly empty)
    // and empties _extra.
    const short = rowWhere(csv, 'klantnr', '100133');
    expect(short[csv.header.indexOf('_extra')]).not.toBe('');
    setCell(csv, short, '_extra', '');
    const duplicate = rowWhere(csv, 'klantnr', '100081');
    setCell(csv, duplicate, 'klantnr', '199999');
    writeCorrectionsCsv(join(m.dir, 'klanten-fixed.csv'), { header: csv.header, rows: [short, duplicate] });
    expect(duplicates(m, 'r1')).toBe(2);

    const fix = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv']);
    expect(fix.code, fix.stdout + fix.stderr).toBe(0);
    expect(fix.stdout).toContain('  ledger ' + m.ledger + ': rejected 10, staged 230\n');

    const rep = await m.cli(['report', '--out', 'r2']);
    expect(rep.stdout.split('\n')[1]).toBe(
      '  source rows 240 → mapped 230 → accepted by staging 230 → valid 230 → imported 0; unaccounted 0',
    );
    // The old rows are no longer refused records of their own.
    expect(m.rows('SELECT legacy_key FROM records WHERE keyed = 0 AND file = ?', 'samples/crm/klanten.csv')).toEqual([]);
    expect(duplicates(m, 'r2')).toBe(1); // the organisation's duplicate kvk, left as it was
    const next = readCorrectionsCsv(join(m.dir, 'r2/klanten.corrections.csv'));
    const keys = next.rows.map((r) => r[next.header.indexOf('klantnr')]);
    expect(keys).not.toContain('100133');
    expect(keys).not.toContain('100081');
    expect(next.rows).toHaveLength(6);
    const md = readFileSync(join(m.dir, 'r2/report.md'), 'utf8');
    expect(md).toContain(
      '| Counterparties | 100133 | rejected in run 1 at samples/crm/klanten.csv:136 (SOURCE_ROW_INVALID) → corrected as key 100133: staged, read in run 2 from klanten-fixed.csv:2 |',
    );
    expect(md).toContain(
      '| Counterparties | 199999 | rejected in run 1 at samples/crm/klanten.csv:91 (DUPLICATE_LEGACY_KEY) → corrected as key 199999: staged, read in run 2 from klanten-fixed.csv:3 |',
    );

    // A plain migrate of the unchanged export: the two rows stay corrected, 240 rows, ledger = platform.
    const plain = await m.cli(['migrate', 'pipelines/crm.yaml', '--out', 'r3']);
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    const report = m.report('r3');
    expect(report.balanced, report.problems.join('\n')).toBe(true);
    expect([report.totals.sourceRows, report.totals.imported]).toEqual([240, 230]);
    expect(duplicates(m, 'r3')).toBe(1);
    expect(await m.platform(report.run.migrationId!)).toEqual({ staged: 230, imported: 230 });
  });

  it('ignores a column the engineer added, with one note naming it and the file; an unedited duplicate stays unedited and the next file keeps the source columns', async () => {
    const m = await firstRound();
    const csv = readCorrectionsCsv(join(m.dir, 'r1/klanten.corrections.csv'));
    const withRemark = { header: [...csv.header, 'opmerking'], rows: csv.rows.map((r) => [...r, 'nagekeken door Anke']) };
    setCell(withRemark, rowWhere(withRemark, 'klantnr', '100155'), 'postcode', '1234 AB');
    writeCorrectionsCsv(join(m.dir, 'klanten-fixed.csv'), withRemark);

    const fix = await m.cli(['run', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv']);
    expect(fix.code, fix.stdout + fix.stderr).toBe(0);
    expect(fix.stdout).toContain('\n  klanten-fixed.csv: column opmerking is not in the source klanten: ignored\n');
    expect(fix.stdout.match(/opmerking/g)).toHaveLength(1);
    expect(fix.stdout).toContain('\n  1 duplicate-key row(s) came back unedited: left refused, not sent\n');
    // The duplicate is still the one refusal at klanten.csv:91, not a new keyless record of the
    // corrections file; 100133's row, still a cell short, is refused again once, from that file.
    expect(m.rows('SELECT file, line, state FROM records WHERE keyed = 0 ORDER BY file, line')).toEqual([
      { file: 'klanten-fixed.csv', line: 8, state: 'rejected' },
      { file: 'samples/crm/bedrijven.json', line: 519, state: 'rejected' },
      { file: 'samples/crm/klanten.csv', line: 91, state: 'rejected' },
    ]);
    expect(m.rows("SELECT state FROM records WHERE legacy_key = '100155'")).toEqual([{ state: 'staged' }]);

    expect((await m.cli(['report', '--out', 'r2'])).code).toBe(0);
    const next = readCorrectionsCsv(join(m.dir, 'r2/klanten.corrections.csv'));
    expect(next.header).toEqual(csv.header);
    // A row refused again from the file with the remark is written under the source's columns, cell for cell.
    expect(rowWhere(next, 'klantnr', '100044')).toEqual(rowWhere(csv, 'klantnr', '100044'));

    const dup = await m.cli(['migrate', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv', '--out', 'r3']);
    expect(dup.stdout).toContain('\n  1 duplicate-key row(s) came back unedited: left refused, not sent\n');
  });
});
