/**
 * The CSV reader's fast path for plain lines: a line with no quote character and no line-break
 * byte other than its own record delimiter. Such a line is one record whose fields are its text
 * split at the delimiter, whatever csv-parse's options; so core.ts splits it natively
 * (`Buffer.indexOf` for the line end, one decode, `String.split`) instead of csv-parse's
 * byte-by-byte state machine (the whole reader: 1.9–2.8 instead of 5.7–7.5 µs a row of 18
 * columns). At a line that is not plain, the reader hands its input to csv-parse, which reads
 * everything quoting can change, and takes it back after a record csv-parse completed when no
 * quote follows. `test/unit/pipeline-sources.test.ts` holds the two to the same rows,
 * provenance and errors.
 *
 * Plain needs a one-byte ASCII delimiter and quote (a multi-byte UTF-8 one is left to csv-parse)
 * and a record delimiter that is LF, CRLF or CR CR LF (a CRLF file whose line ends were converted
 * to CRLF a second time). Under CRLF every LF must follow a CR and every CR precede an LF; under
 * CR CR LF every LF follows two CRs and there is no other CR; under LF there is no CR at all.
 * Anything else (a lone CR, a bare LF inside a CRLF file) makes a line not plain.
 */

const LF = 10;
const CR = 13;

/** The record delimiters a CSV file's lines can end in, for the plain path and csv-parse alike. */
export type RecordDelimiter = '\n' | '\r\n' | '\r\r\n';

/** What a walk needs to know: the quote character and how many CRs come before each line's LF. */
export interface PlainLineFormat {
  quote: string;
  crs: 0 | 1 | 2;
}

/** The format of plain lines ending in `rd`. */
export function plainLineFormat(quote: string, rd: RecordDelimiter): PlainLineFormat {
  return { quote, crs: (rd.length - 1) as 0 | 1 | 2 };
}

/** Whether lines can be read plainly in this format at all (see the module comment). */
export function plainLinesPossible(f: { delimiter: string; quote: string }): boolean {
  const ascii = (c: string) => c.length === 1 && c.charCodeAt(0) < 0x80 && c !== '\n' && c !== '\r';
  return ascii(f.delimiter) && ascii(f.quote) && f.delimiter !== f.quote;
}

/**
 * The record delimiter of a file that starts with `data` (the first line break outside quotes,
 * which csv-parse takes too; CR CR LF is taken whole, where csv-parse alone would take the lone
 * CR): undefined when it cannot be told from `data` alone, or when it is a lone CR, or when the
 * first line holds a quote (so csv-parse reads it anyway).
 * @example recordDelimiterOf(Buffer.from('a;b\r\n1;2\r\n'), 34) // '\r\n'
 */
export function recordDelimiterOf(data: Buffer, quote: number): RecordDelimiter | undefined {
  const lf = data.indexOf(LF);
  if (lf < 0) return undefined;
  const q = data.indexOf(quote);
  if (q >= 0 && q < lf) return undefined;
  const cr = data.indexOf(CR);
  if (cr < 0 || cr > lf) return '\n';
  if (cr === lf - 1) return '\r\n';
  if (cr === lf - 2 && data[lf - 1] === CR) return '\r\r\n';
  return undefined; // a lone CR comes first
}

/**
 * Walks the complete plain lines of `data` from `from`: `take(start, end)` gets each line's text
 * range (without its record delimiter; empty for a blank line). Stops before the first line
 * that is not plain or is not complete.
 * @returns the offset it stopped at, and whether it stopped at a line that is not plain
 *          (rather than at the end of the complete lines).
 * @example const r = walkPlainLines(buf, 0, { quote: '"', crs: 1 }, (s, e) => rows.push(buf.toString('utf8', s, e).split(';')));
 */
export function walkPlainLines(
  data: Buffer,
  from: number,
  f: PlainLineFormat,
  take: (start: number, end: number) => void,
): { at: number; stopped: boolean } {
  const quote = f.quote.charCodeAt(0);
  let s = from;
  const nextQuote = data.indexOf(quote, s);
  let nextCr = data.indexOf(CR, s);
  for (;;) {
    const lf = data.indexOf(LF, s);
    if (lf < 0) return { at: s, stopped: false };
    if (nextQuote >= 0 && nextQuote < lf) return { at: s, stopped: true };
    let end = lf;
    if (f.crs > 0) {
      // the line's only CRs are the f.crs right before its LF
      end = lf - f.crs;
      if (end < s || nextCr !== end || (f.crs === 2 && data[lf - 1] !== CR) || data[lf - f.crs] !== CR) return { at: s, stopped: true };
      nextCr = data.indexOf(CR, lf + 1);
    } else if (nextCr >= 0 && nextCr < lf) {
      return { at: s, stopped: true };
    }
    take(s, end);
    s = lf + 1;
  }
}

/** Whether the last line of an input, `data[from..]` without a record delimiter, is plain. */
export function plainTail(data: Buffer, from: number, f: PlainLineFormat): boolean {
  return data.indexOf(f.quote.charCodeAt(0), from) < 0 && data.indexOf(CR, from) < 0 && data.indexOf(LF, from) < 0;
}
