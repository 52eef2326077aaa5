/**
 * Malformed quotes in one CSV record's text, told apart from well-quoted fields. csv-parse reads
 * under `relax_quotes` (dialect.ts: without it a bad closing quote leaves csv-parse in quoting
 * mode, swallowing the rows after it), so it hands back `"ab"cd`, `"Sn3" ` and `Sn"1` as text
 * without a word; the record's own bytes say which field was malformed and how. A field is
 * well-formed when it holds no quote at all, or starts with one, doubles every quote inside and
 * ends with one followed by the delimiter or the record's end.
 */

/** How a field's quotes are malformed. */
export type QuoteShape = 'text-after-closing-quote' | 'quote-in-unquoted-field';

export interface QuoteDefect {
  /** 0-based field index. */
  column: number;
  shape: QuoteShape;
}

/** What each shape means, for messages. */
export const QUOTE_SHAPE_TEXT: Record<QuoteShape, string> = {
  'text-after-closing-quote': 'text follows its closing quote (expected the delimiter or the line end right after it)',
  'quote-in-unquoted-field': 'a quote inside a value that does not start with one',
};

const LF = 10;
const CR = 13;

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const AFTER_QUOTE = 3; // a quote inside a quoted field: a doubled one, or the closing one
const DONE = 4;

/**
 * Reads one record's bytes (from its first byte through its record delimiter, in any pieces)
 * and finds its first malformed field, without copying or decoding them: the quote, delimiter,
 * CR and LF are one code unit each (one byte, or two in UTF-16LE). An unclosed quote is not this
 * module's (the reader reports it with the lines it took).
 */
export class QuoteScanner {
  private state = FIELD_START;
  private column = 0;
  private odd = -1; // UTF-16LE: a code unit's first byte, cut off by the end of a piece
  defect: QuoteDefect | undefined;

  /** @param wide UTF-16LE: code units of two bytes */
  constructor(
    private readonly D: number,
    private readonly Q: number,
    private readonly wide: boolean,
  ) {}

  push(bytes: Buffer): void {
    if (this.state === DONE) return;
    if (!this.wide) {
      for (let i = 0; i < bytes.length && this.state !== DONE; i++) this.unit(bytes[i]!);
      return;
    }
    let i = 0;
    if (this.odd >= 0 && bytes.length > 0) {
      this.unit(this.odd | (bytes[0]! << 8));
      this.odd = -1;
      i = 1;
    }
    for (; i + 1 < bytes.length && this.state !== DONE; i += 2) this.unit(bytes[i]! | (bytes[i + 1]! << 8));
    if (i < bytes.length && this.state !== DONE) this.odd = bytes[i]!;
  }

  private unit(c: number): void {
    switch (this.state) {
      case FIELD_START:
        if (c === this.Q) this.state = QUOTED;
        else if (c === this.D) this.column++;
        else if (c === CR || c === LF) this.state = DONE;
        else this.state = UNQUOTED;
        return;
      case UNQUOTED:
        if (c === this.Q) this.fail('quote-in-unquoted-field');
        else if (c === this.D) this.next();
        else if (c === CR || c === LF) this.state = DONE;
        return;
      case QUOTED:
        if (c === this.Q) this.state = AFTER_QUOTE;
        return;
      case AFTER_QUOTE:
        if (c === this.Q) this.state = QUOTED;
        else if (c === this.D) this.next();
        else if (c === CR || c === LF) this.state = DONE;
        else this.fail('text-after-closing-quote');
        return;
    }
  }

  private next(): void {
    this.column++;
    this.state = FIELD_START;
  }

  private fail(shape: QuoteShape): void {
    this.defect = { column: this.column, shape };
    this.state = DONE;
  }
}

/**
 * The first malformed field of a record's text, or undefined when every field is well-formed.
 * @example quoteDefect('1;"ab"cd;x\n', ';', '"') // { column: 1, shape: 'text-after-closing-quote' }
 */
export function quoteDefect(text: string, delimiter: string, quote: string): QuoteDefect | undefined {
  const scanner = new QuoteScanner(delimiter.charCodeAt(0), quote.charCodeAt(0), true);
  scanner.push(Buffer.from(text, 'utf16le'));
  return scanner.defect;
}
