import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { CsvCore, readCsvFile } from '../../src/pipeline/source/csv/index.js';
import { PhysicalLines } from '../../src/pipeline/source/csv/lines.js';
import { addTally, newTally, SWALLOWED_LISTED, tallyDisagreement, type SourceTally } from '../../src/pipeline/source/tally.js';
import { resolveEncoding } from '../../src/pipeline/source/encoding.js';
import type { SourceRow, SourceRowError } from '../../src/pipeline/types.js';

const CASES = join(import.meta.dirname, '..', 'cases', 'sources');
const csv = { delimiter: ';', quote: '"', header: true };
type Seen = [number, string | Record<string, unknown>];
const seen = (r: SourceRow | SourceRowError): Seen => [r.provenance.line, 'code' in r ? r.message : r.values];

/** Reads a corpus file with a tally: what came out, the tally's figures, and what tallyDisagreement says. */
async function read(file: string) {
  const tally = newTally('s', file, 'csv');
  const rows: Seen[] = [];
  for await (const r of readCsvFile({ source: 's', path: join(CASES, file), file, encoding: 'auto', csv, tally, hashRows: false }))
    rows.push(seen(r));
  const { source: _s, file: _f, format: _x, ...figures } = tally;
  return { rows, figures, disagreement: tallyDisagreement(tally) };
}

const person = (nr: number) => ({ klantnr: String(nr), voorletters: 'A.', voornaam: 'Anna', achternaam: 'Visser' });

describe('CSV accounting: every physical line counted, apart from the parser', () => {
  it('turns a quote opened by mistake that closes ten lines later into one error naming the whole span', async () => {
    const r = await read('swallowing-quote.csv');
    expect(r.rows).toEqual([
      ...[2, 3, 4, 5, 6, 7, 8, 9, 10].map((line) => [line, person(100000 + line - 2)]),
      [11, 'swallowing-quote.csv:11–21: a quote opened on line 11 closes on line 21; 10 following rows were read as part of this one'],
      [22, person(100020)],
    ]);
    expect(r.figures).toEqual({
      physicalLines: 22,
      blankLines: 0,
      headerLines: 1,
      rowsRead: 11,
      rowErrors: 1,
      linesInRows: 21,
      swallowed: [{ line: 11, from: 12, to: 21 }],
    });
    expect(r.disagreement).toBe('swallowing-quote.csv: 10 lines read as part of another row: 12–21 (in the row at line 11)');
  });

  it('names the span of a quote that closes lines later in a row of the wrong width', async () => {
    const r = await read('quote-wrong-width.csv');
    expect(r.rows).toEqual([
      [
        2,
        'quote-wrong-width.csv:2–4: a quote opened on line 2 closes on line 4; 2 following rows were read as part of this one (it came out with 5 columns, expected 3 as the header)',
      ],
      [5, { nr: '4', naam: 'Ans', plaats: 'Ede' }],
    ]);
    expect(r.figures.swallowed).toEqual([{ line: 2, from: 3, to: 4 }]);
    expect(r.disagreement).toBe('quote-wrong-width.csv: 2 lines read as part of another row: 3–4 (in the row at line 2)');
  });

  it('reads a quoted field over several lines (one of them empty) as a row of its own lines, and swallows nothing', async () => {
    const r = await read('multiline-fields.csv');
    expect(r.rows).toEqual([
      [2, { nr: '1', straat: 'Dorpsstraat 1\r\nachterhuis', plaats: 'Delft' }],
      [4, { nr: '2', straat: 'Kerkweg 2\r\n\r\nbus 3', plaats: 'Gouda' }],
      [7, { nr: '3', straat: 'Laan 4', plaats: 'Ede' }],
    ]);
    // The empty line inside the second street is a blank line, not a line of its row.
    expect(r.figures).toMatchObject({ physicalLines: 7, blankLines: 1, headerLines: 1, rowsRead: 3, linesInRows: 5, swallowed: [] });
    expect(r.disagreement).toBeUndefined();
  });

  it('says the file ends inside a quote opened on its last line', async () => {
    const r = await read('quote-at-eof.csv');
    expect(r.rows).toEqual([
      [2, { nr: '1', naam: 'Jan', plaats: 'Delft' }],
      [3, 'quote-at-eof.csv:3: a quote opened on line 3 is not closed before the file ends'],
    ]);
    expect(r.figures).toMatchObject({ physicalLines: 3, rowsRead: 2, rowErrors: 1, linesInRows: 2 });
    expect(r.disagreement).toBe('quote-at-eof.csv: the file ends inside a quoted value opened on line 3');
  });

  it('refuses stray quotes inside a field one row a line (csv.quotes strict), each counted once', async () => {
    const r = await read('stray-quotes.csv');
    expect(r.rows.map(([line, m]) => [line, String(m).replace(/ has malformed quotes: .*/, '')])).toEqual([
      [2, 'stray-quotes.csv:2: column "naam"'],
      [3, 'stray-quotes.csv:3: column "naam"'],
      [4, 'stray-quotes.csv:4: column "naam"'],
    ]);
    expect(r.figures).toMatchObject({ physicalLines: 4, headerLines: 1, rowsRead: 3, rowErrors: 3, linesInRows: 3 });
    expect(r.disagreement).toBeUndefined();
  });

  it('counts lone-CR line ends, CRLF lines in an LF file, blank lines of spaces, a BOM and a last line without a break', async () => {
    const cr = await read('cr-only.csv');
    expect(cr.rows).toEqual([
      [2, { nr: '1', naam: 'Zoë', plaats: 'Enschede' }],
      [4, { nr: '2', naam: 'Piet', plaats: 'Delft' }],
    ]);
    expect(cr.figures).toMatchObject({ physicalLines: 4, blankLines: 1, headerLines: 1, linesInRows: 2 });
    expect(cr.disagreement).toBeUndefined();
    // The first line decides the record delimiter (LF): a CRLF line keeps its CR in the last field, as csv-parse reads it.
    const mixed = await read('crlf-mixed.csv');
    expect(mixed.rows.map(([line]) => line)).toEqual([2, 3, 5]);
    expect(mixed.figures).toMatchObject({ physicalLines: 5, blankLines: 1, linesInRows: 3 });
    expect(mixed.disagreement).toBeUndefined();
    const bom = await read('bom-blank-lines.csv');
    expect(bom.rows).toEqual([[3, { nr: '1', naam: 'Zoë', plaats: 'Enschede' }]]);
    expect(bom.figures).toMatchObject({ physicalLines: 4, blankLines: 2, headerLines: 1, linesInRows: 1 });
    expect(bom.disagreement).toBeUndefined();
    const multi = await read('multiline-lf.csv');
    expect(multi.disagreement).toBeUndefined();
    const tricky = await read('tricky-crlf.csv');
    expect(tricky.figures).toMatchObject({ rowsRead: 5, rowErrors: 1 });
    expect(tricky.disagreement).toBeUndefined();
  });

  it('calls a file with a header and no rows, or with nothing at all, a read failure', async () => {
    const header = await read('header-only.csv');
    expect(header.rows).toEqual([]);
    expect(header.disagreement).toBe('header-only.csv: the file holds a header but no rows');
    const empty = await read('empty.csv');
    expect(empty.rows).toEqual([[1, 'empty.csv:1: the file is empty, expected a header line naming the columns']]);
    expect(empty.disagreement).toBe('empty.csv: the file is empty: not even a header');
  });
});

describe('CSV core (bytes in, rows out, no I/O)', () => {
  const dialect = { ...csv, encoding: resolveEncoding('utf-8', Buffer.alloc(0)) };
  /** The core fed `text` in pieces of `size` bytes (all at once when absent). */
  const feed = (text: string, size?: number) => {
    const tally: SourceTally = newTally('s', 'f.csv', 'csv');
    const core = new CsvCore({ source: 's', file: 'f.csv', dialect, tally, hashRows: false });
    const bytes = Buffer.from(text);
    const out: Seen[] = [];
    for (let i = 0; i < bytes.length; i += size ?? bytes.length)
      out.push(...core.push(bytes.subarray(i, i + (size ?? bytes.length))).map(seen));
    out.push(...core.end().map(seen));
    return { out, tally };
  };

  it('reads strings to the same rows and tally in one piece or byte by byte', () => {
    const text = 'a;b\r\n1;"x\r\ny"\r\n\r\n2;"open\r\n3;z\r\n4;"q"\r\n';
    const whole = feed(text);
    expect(whole.out).toEqual([
      [2, { a: '1', b: 'x\r\ny' }],
      [5, 'f.csv:5–7: a quote opened on line 5 closes on line 7; 2 following rows were read as part of this one'],
    ]);
    expect(whole.tally).toMatchObject({
      physicalLines: 7,
      blankLines: 1,
      headerLines: 1,
      linesInRows: 5,
      swallowed: [{ line: 5, from: 6, to: 7 }],
    });
    for (const size of [1, 2, 5]) expect(feed(text, size)).toEqual(whole);
  });

  it('reads CR CR LF line ends (a CRLF converted twice) to clean rows, each followed by the empty line its second CR makes, and balances', () => {
    // plain lines, a quoted value over lines (csv-parse's path), a blank record, a last row
    const text = 'a;b\r\r\n1;x\r\r\n2;"y\r\r\nz"\r\r\n\r\r\n3;w\r\r\n';
    const whole = feed(text);
    expect(whole.out).toEqual([
      [3, { a: '1', b: 'x' }],
      [5, { a: '2', b: 'y\r\r\nz' }],
      [11, { a: '3', b: 'w' }],
    ]);
    // lines 2, 4, 6, 8, 9, 10 and 12 are the empty lines the second CRs make
    expect(whole.tally).toMatchObject({ physicalLines: 12, blankLines: 7, headerLines: 1, rowsRead: 3, linesInRows: 4, swallowed: [] });
    expect(tallyDisagreement(whole.tally)).toBeUndefined();
    for (const size of [1, 2, 3, 7]) expect(feed(text, size)).toEqual(whole);
    // a quote opened by mistake swallows the lines up to the next quote: named, every line still counted once
    const broken = feed('a;b\r\r\n1;"open\r\r\n2;z\r\r\n3;"q"\r\r\n4;w\r\r\n');
    // (its "n following rows" counts the span's lines, empty ones included)
    expect(broken.out).toEqual([
      [3, expect.stringMatching(/^f\.csv:3–7: a quote opened on line 3 closes on line 7; /)],
      [9, { a: '4', b: 'w' }],
    ]);
    expect(tallyDisagreement(broken.tally)).toBe('f.csv: 4 lines read as part of another row: 4–7 (in the row at line 3)');
    // and every physical line is counted once: 10 = header 1 + blank 5 (lines 2, 4, 6, 8, 10) + in rows 4 (3, 5, 7 and 9)
    const t = broken.tally;
    expect([t.physicalLines, t.headerLines, t.blankLines, t.linesInRows]).toEqual([10, 1, 5, 4]);
  });

  it('counts a one-column row of blanks once, as a blank line', () => {
    const tally = newTally('s', 'f.csv', 'csv');
    const core = new CsvCore({
      source: 's',
      file: 'f.csv',
      dialect: { ...dialect, header: false, columns: ['a'] },
      tally,
      hashRows: false,
    });
    const rows = [...core.push(Buffer.from('1\n  \n2\n')), ...core.end()].map(seen);
    expect(rows).toEqual([
      [1, { a: '1' }],
      [2, { a: '  ' }],
      [3, { a: '2' }],
    ]);
    expect(tally).toMatchObject({ physicalLines: 3, blankLines: 1, linesInRows: 2, rowsRead: 3 });
    expect(tallyDisagreement(tally)).toBeUndefined();
  });

  it('lists a bounded number of swallowed spans and counts the rest, in a file and across the ranges of one', () => {
    // Each `n;"open` opens a quote that the `"q"` two lines on closes: every such row swallows two lines.
    const broken = (from: number, n: number) => Array.from({ length: n }, (_, i) => `${from + i};"open\n1;z\n2;"q"\n`).join('');
    const rows = SWALLOWED_LISTED + 50;
    const whole = feed(`a;b\n${broken(0, rows)}`);
    expect(whole.tally.swallowed).toHaveLength(SWALLOWED_LISTED);
    expect(whole.tally.unlisted).toEqual({ spans: 50, lines: 100 });
    const said = tallyDisagreement(whole.tally)!;
    expect(said).toMatch(/^f\.csv: 2100 lines read as part of another row: 3–4 \(in the row at line 2\), 6–7 \(in the row at line 5\), /);
    expect(said).toMatch(/ and 1030 more spans$/);
    // Two ranges' tallies add up to the whole file's, the listed spans still bounded.
    const file = newTally('s', 'f.csv', 'csv');
    const half = feed(`a;b\n${broken(0, rows)}`).tally;
    addTally(file, half);
    addTally(file, half);
    expect(file.swallowed).toHaveLength(SWALLOWED_LISTED);
    expect(file.unlisted).toEqual({ spans: 2 * rows - SWALLOWED_LISTED, lines: 2 * (2 * rows - SWALLOWED_LISTED) });
    expect(file.physicalLines).toBe(2 * whole.tally.physicalLines);
  });

  it('counts physical lines from the bytes alone: LF, CRLF once, lone CR, a last line without a break', () => {
    const count = (text: string, wide = false) => {
      const p = new PhysicalLines(wide);
      const bytes = wide ? Buffer.from(text, 'utf16le') : Buffer.from(text);
      for (let i = 0; i < bytes.length; i++) p.add(bytes.subarray(i, i + 1));
      p.end();
      return [p.lines, p.blank];
    };
    expect(count('')).toEqual([0, 0]);
    expect(count('a')).toEqual([1, 0]);
    expect(count('a\n')).toEqual([1, 0]);
    expect(count('a\r\nb\rc\n\n \t\r\nd')).toEqual([6, 2]);
    expect(count('a\r\nb\rc\n\n \t\r\nd', true)).toEqual([6, 2]);
  });
});
