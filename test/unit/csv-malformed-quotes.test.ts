/**
 * Malformed CSV quotes (issue 41): `"ab"cd`, `"Sn3" `, `Sn"1` and the rest of their class (text
 * after a closing quote, a quote inside an unquoted value, in any column, after a quoted field
 * over several lines, with any delimiter and encoding) are refused at their line with the column
 * named — unless the source declares `csv.quotes: relaxed`, which reads them as written and
 * flags each row in the file's tally. Well-formed quoting (doubled quotes, quoted delimiters and
 * line breaks, empty quoted values) still reads as before.
 */
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { CsvCore } from '../../src/pipeline/source/csv/index.js';
import { quoteDefect } from '../../src/pipeline/source/csv/quote-shape.js';
import { resolveEncoding } from '../../src/pipeline/source/encoding.js';
import { newTally } from '../../src/pipeline/source/tally.js';
import type { SourceRow, SourceRowError } from '../../src/pipeline/types.js';

type Out = [number, string | Record<string, unknown>];

function read(text: string | Buffer, opts: { quotes?: 'strict' | 'relaxed'; delimiter?: string; encoding?: string } = {}) {
  const encoding = resolveEncoding((opts.encoding ?? 'utf-8') as 'utf-8', Buffer.alloc(0));
  const tally = newTally('s', 'f.csv', 'csv');
  const core = new CsvCore({
    source: 's',
    file: 'f.csv',
    dialect: { delimiter: opts.delimiter ?? ';', quote: '"', quotes: opts.quotes, header: true, encoding },
    tally,
    hashRows: false,
  });
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const items: (SourceRow | SourceRowError)[] = [];
  // fed in small pieces, so records cross chunk boundaries
  for (let i = 0; i < bytes.length; i += 7) items.push(...core.push(bytes.subarray(i, i + 7)));
  items.push(...core.end());
  const out: Out[] = items.map((r) => [r.provenance.line, 'code' in r ? r.message : r.values]);
  return { out, tally };
}

const HEAD = 'nr;naam;plaats\n';

describe('malformed CSV quotes', () => {
  it.each([
    ['text after a closing quote', '2;"ab"cd;Gouda\n', 'naam'],
    ['a space after a closing quote', '2;"Sn3" ;Gouda\n', 'naam'],
    ['a quote inside an unquoted value', '2;Sn"1;Gouda\n', 'naam'],
    ['a quote at the end of an unquoted value', '2;Sn1";Gouda\n', 'naam'],
    ['in the first column', '"2"x;Sn;Gouda\n', 'nr'],
    ['in the last column', '2;Sn;"Gouda"x\r\n', 'plaats'],
    ['after a quoted field over two lines', '2;"Dorps\nstraat";Gou"da\n', 'plaats'],
  ])('refuses %s at its line, naming the column', (_, row, column) => {
    const { out, tally } = read(`${HEAD}1;Jan;Delft\n${row}3;Piet;Ede\n`);
    expect(out[0]).toEqual([2, { nr: '1', naam: 'Jan', plaats: 'Delft' }]);
    expect(out[1]![0]).toBe(3);
    expect(out[1]![1]).toMatch(new RegExp(`^f\\.csv:3: column "${column}" has malformed quotes`));
    expect(out.at(-1)![1]).toMatchObject({ nr: '3', naam: 'Piet' });
    expect(tally.rowErrors).toBe(1);
  });

  it('refuses one on the last line without a line break', () => {
    expect(read(`${HEAD}1;Jan;"Delft"x`).out).toEqual([[2, expect.stringMatching(/^f\.csv:2: column "plaats" has malformed quotes/)]]);
  });

  it('refuses them with a comma delimiter and in windows-1252 too', () => {
    expect(read(`nr,naam\n1,"ab"cd\n`, { delimiter: ',' }).out[0]![1]).toMatch(/f\.csv:2: column "naam" has malformed quotes/);
    const latin = iconv.encode(`nr;naam\n1;Mü"ller\n2;Zoë\n`, 'windows-1252');
    const r = read(latin, { encoding: 'windows-1252' });
    expect(r.out[0]![1]).toMatch(/f\.csv:2: column "naam" has malformed quotes: a quote inside a value/);
    expect(r.out[1]).toEqual([3, { nr: '2', naam: 'Zoë' }]);
  });

  it('reads well-formed quoting as before', () => {
    const { out, tally } = read(`${HEAD}1;"O""Brien";"Delft; Zuid"\n2;"";"Dorps\r\nstraat"\n3;"""x""";Ede\n`);
    expect(out).toEqual([
      [2, { nr: '1', naam: 'O"Brien', plaats: 'Delft; Zuid' }],
      [3, { nr: '2', naam: '', plaats: 'Dorps\r\nstraat' }],
      [5, { nr: '3', naam: '"x"', plaats: 'Ede' }],
    ]);
    expect(tally.rowErrors).toBe(0);
  });

  it('reads them as written under csv.quotes: relaxed, each row flagged in the tally', () => {
    const { out, tally } = read(`${HEAD}1;"ab"cd;Delft\n2;"Sn3" ;Gouda\n3;Sn"1;Ede\n4;ok;Ede\n`, { quotes: 'relaxed' });
    expect(out.map(([line, v]) => [line, (v as Record<string, unknown>).naam])).toEqual([
      [2, '"ab"cd'],
      [3, '"Sn3" '],
      [4, 'Sn"1'],
      [5, 'ok'],
    ]);
    expect(tally.rowErrors).toBe(0);
    expect(tally.relaxedQuotes).toEqual({
      count: 3,
      listed: [
        { line: 2, column: 'naam', shape: 'text-after-closing-quote' },
        { line: 3, column: 'naam', shape: 'text-after-closing-quote' },
        { line: 4, column: 'naam', shape: 'quote-in-unquoted-field' },
      ],
    });
  });

  it('tells each shape from the text alone', () => {
    expect(quoteDefect('a;"b""c";d\n', ';', '"')).toBeUndefined();
    expect(quoteDefect('a;"b"\r\n', ';', '"')).toBeUndefined();
    expect(quoteDefect('a;"b"c\n', ';', '"')).toEqual({ column: 1, shape: 'text-after-closing-quote' });
    expect(quoteDefect('a;b"c;d', ';', '"')).toEqual({ column: 1, shape: 'quote-in-unquoted-field' });
    expect(quoteDefect('a;b;"c', ';', '"')).toBeUndefined(); // unclosed: the reader's own error
  });
});
