/**
 * The fixed-width core with strings: columns by position, header lines, trimming, line ends,
 * a record of the wrong length, a cut-off last record, an empty file; each with its tally.
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { fixedWidthBatches } from '../../src/pipeline/source/fixed-width/core.js';
import { textChunks } from '../../src/pipeline/source/decoded-text.js';
import { newTally, tallyDisagreement } from '../../src/pipeline/source/tally.js';
import type { FixedWidthOptions } from '../../src/pipeline/source/fixed-width/options.js';
import type { SourceRow, SourceRowError } from '../../src/pipeline/types.js';
import { StagecoachError } from '../../src/contract/errors.js';

const LAYOUT: FixedWidthOptions = {
  columns: [
    { name: 'nr', start: 1, length: 4 },
    { name: 'naam', start: 5, length: 8 },
    { name: 'plaats', start: 14, length: 6 }, // column 13 is filler
  ],
  header: 1,
  trim: true,
};

async function read(texts: string[], layout: FixedWidthOptions = LAYOUT, requiredColumns?: Set<string>) {
  const tally = newTally('k', 'k.txt', 'fixed-width');
  const rows: (SourceRow | SourceRowError)[] = [];
  for await (const b of fixedWidthBatches(textChunks(...texts), {
    source: 'k',
    file: 'k.txt',
    fixedWidth: layout,
    hashRows: false,
    tally,
    ...(requiredColumns ? { requiredColumns } : {}),
  }))
    rows.push(...b);
  const shown = rows.map((r) =>
    'code' in r ? `${r.code} ${r.message}` : `${r.provenance.line}@${r.provenance.byteOffset} ${JSON.stringify(r.values)}`,
  );
  return { shown, tally };
}

describe('fixed-width core', () => {
  it('cuts each record at the declared positions, trims, skips the header and blank lines, and counts every line', async () => {
    const text = 'KLANTEN 2024\n0001Jan     *Zwolle\n\n0002Piet    *Assen \n';
    for (const cut of [0, 5, 14, 31, 32, text.length - 1]) {
      const { shown, tally } = await read([text.slice(0, cut), text.slice(cut)]);
      expect(shown).toEqual(['2@13 {"nr":"0001","naam":"Jan","plaats":"Zwolle"}', '4@34 {"nr":"0002","naam":"Piet","plaats":"Assen"}']);
      expect(tally).toMatchObject({ physicalLines: 4, blankLines: 1, headerLines: 1, rowsRead: 2, rowErrors: 0, linesInRows: 2 });
      expect(tallyDisagreement(tally)).toBeUndefined();
    }
  });

  it('keeps the padding with trim: false, and reads CRLF and lone CR line ends alike (also split between chunks)', async () => {
    const { shown, tally } = await read(['H\r', '\n0001Jan     *Zwolle\r', '0002Piet    *Assen \r\n'], { ...LAYOUT, trim: false });
    expect(shown).toEqual([
      '2@3 {"nr":"0001","naam":"Jan     ","plaats":"Zwolle"}',
      '3@23 {"nr":"0002","naam":"Piet    ","plaats":"Assen "}',
    ]);
    expect(tally).toMatchObject({ physicalLines: 3, headerLines: 1, rowsRead: 2 });
    expect(tallyDisagreement(tally)).toBeUndefined();
  });

  it('a line of the wrong length is a row error naming file:line and both lengths; the file goes on', async () => {
    const { shown, tally } = await read(['H\n0001Jan *Zwolle\n0002Piet    *Assen  extra\n0003Kees    *Ede   \n']);
    expect(shown).toEqual([
      'SOURCE_ROW_INVALID k.txt:2: the record is 15 characters long, expected 19 (the fixed-width layout)',
      'SOURCE_ROW_INVALID k.txt:3: the record is 25 characters long, expected 19 (the fixed-width layout)',
      '4@44 {"nr":"0003","naam":"Kees","plaats":"Ede"}',
    ]);
    expect(tally).toMatchObject({ physicalLines: 4, headerLines: 1, rowsRead: 3, rowErrors: 2, linesInRows: 3 });
    expect(tallyDisagreement(tally)).toBeUndefined();
  });

  it('a declared record length allows trailing filler', async () => {
    const { shown } = await read(['H\n0001Jan     *Zwolle   \n'], { ...LAYOUT, length: 22 });
    expect(shown).toEqual(['2@2 {"nr":"0001","naam":"Jan","plaats":"Zwolle"}']);
  });

  it('a last record cut short without a line break is a read failure (the export was cut off)', async () => {
    const { shown, tally } = await read(['H\n0001Jan     *Zwolle\n0002Pi']);
    expect(shown).toEqual([
      '2@2 {"nr":"0001","naam":"Jan","plaats":"Zwolle"}',
      'SOURCE_READ_FAILED k.txt:3: the file ends inside a record, 6 characters long, expected 19 and a line break; the export looks cut off',
    ]);
    expect(tally.truncated).toBe('the file ends inside the record on its last line (3), 6 of 19 characters: the export looks cut off');
    expect(tallyDisagreement(tally)).toBe(
      'k.txt: the file ends inside the record on its last line (3), 6 of 19 characters: the export looks cut off',
    );
  });

  it('an empty file, or one with only its header, is a read failure (no rows)', async () => {
    const empty = await read([]);
    expect(empty.shown).toEqual([
      'SOURCE_READ_FAILED k.txt:1: the file is empty, expected one record a line after 1 header line; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    expect(empty.tally.truncated).toBe('the file is empty: no rows');
    const header = await read(['KLANTEN 2024\n']);
    expect(header.shown).toEqual([
      'SOURCE_READ_FAILED k.txt:1: the file holds 1 line and no record, expected one record a line after 1 header line; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
  });

  it('a column the mapping reads but the layout does not declare is a configuration error', async () => {
    const err = await read(['H\n'], LAYOUT, new Set(['nr', 'postcode'])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StagecoachError);
    expect((err as StagecoachError).code).toBe('CONFIG_INVALID');
    expect((err as StagecoachError).message).toBe(
      'k.txt: the mapping reads column "postcode", expected it among fixedWidth.columns (nr, naam, plaats)',
    );
  });

  it('a trailer is no record; the record count it states is checked against the records read', async () => {
    const trailer = { ...LAYOUT, trailer: { count: { start: 4, length: 6 } } };
    const text = 'KLANTEN 2024\n0001Jan     *Zwolle\n0002Piet    *Assen \nTRL000002\n';
    for (const cut of [0, 20, 40, text.length - 3]) {
      const { shown, tally } = await read([text.slice(0, cut), text.slice(cut)], trailer);
      expect(shown).toEqual(['2@13 {"nr":"0001","naam":"Jan","plaats":"Zwolle"}', '3@33 {"nr":"0002","naam":"Piet","plaats":"Assen"}']);
      expect(tally).toMatchObject({ physicalLines: 4, headerLines: 2, rowsRead: 2, rowErrors: 0 });
      expect(tallyDisagreement(tally)).toBeUndefined();
    }
    const short = await read(['KLANTEN 2024\n0001Jan     *Zwolle\n0002Piet    *Assen \nTRL000003\n'], trailer);
    expect(short.shown.at(-1)).toBe(
      'SOURCE_READ_FAILED k.txt:4: the trailer states 3 records, expected the 2 records read; the export looks cut off or padded',
    );
    expect(short.tally.truncated).toBe('the trailer states 3 records, 2 were read');
  });

  it("hashes each record's line as the ledger keeps it: the first 128 bits of its sha256, padding counted, line end not", async () => {
    const lines = ['0001Jan     *Zwolle', '0002Piet    *Assen ', '0003Ans     *Emmen '];
    const rows: (SourceRow | SourceRowError)[] = [];
    for await (const b of fixedWidthBatches(textChunks(`H\r\n${lines.join('\r\n')}\n`), {
      source: 'k',
      file: 'k.txt',
      fixedWidth: LAYOUT,
      hashRows: true,
    }))
      rows.push(...b);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
    expect(rows.map((r) => r.provenance.hash)).toEqual(lines.map(sha));
    expect(rows.every((r) => /^[0-9a-f]{32}$/.test(r.provenance.hash))).toBe(true);
  });
});
