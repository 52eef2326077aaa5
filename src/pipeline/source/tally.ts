/**
 * What a source file holds, counted two ways: by the parser (rows, row errors, the lines each
 * spans) and, independently of it, by a simpler count of the file itself (physical lines and
 * blank lines for line-oriented formats; top-level array items for a JSON array). A file is
 * accounted for only when both agree and no row swallowed the lines of others: the promise that
 * every legacy row is accounted for must not rest on the parser agreeing with itself.
 *
 * A reader fills in the tally it is given as it reads; the figures are final when its batches
 * end. Plan, ledger and report carry it per file.
 */

// The tally's shape is the ledger's (it keeps one per run and file), so it is declared there.
export type { RelaxedQuoteRow, SourceTally, SwallowedSpan } from '../../ledger/types.js';
import type { RelaxedQuoteRow, SourceTally, SwallowedSpan } from '../../ledger/types.js';

/** How many swallowed spans a tally lists; past these it only counts them. */
export const SWALLOWED_LISTED = 1000;
/** How many spans a disagreement message names. */
const SPANS_NAMED = 20;

/** A fresh tally for one file. */
export function newTally(source: string, file: string, format: string): SourceTally {
  return {
    source,
    file,
    format,
    physicalLines: 0,
    blankLines: 0,
    headerLines: 0,
    rowsRead: 0,
    rowErrors: 0,
    linesInRows: 0,
    swallowed: [],
  };
}

/**
 * Why a file is not accounted for, or undefined when the parser's count and the independent
 * count agree. Line-oriented formats: every physical line is a header line, a blank line or a
 * line of some row; JSON: every top-level item was yielded as a row or a row error.
 * @example tallyDisagreement(t) // 'klanten.csv: 1,001 physical lines, but 991 accounted for (…)'
 */
export function tallyDisagreement(t: SourceTally): string | undefined {
  if (t.truncated) return `${t.file}: ${t.truncated}`;
  if (t.swallowed.length > 0) {
    const lines = t.swallowed.reduce((n, s) => n + (s.to - s.from + 1), 0) + (t.unlisted?.lines ?? 0);
    const more = t.swallowed.length - SPANS_NAMED + (t.unlisted?.spans ?? 0);
    const named = t.swallowed.slice(0, SPANS_NAMED).map((s) => `${s.from}–${s.to} (in the row at line ${s.line})`);
    const spans = named.join(', ') + (more > 0 ? ` and ${more} more span${more === 1 ? '' : 's'}` : '');
    return `${t.file}: ${lines} line${lines === 1 ? '' : 's'} read as part of another row: ${spans}`;
  }
  if (t.items !== undefined) {
    if (t.items !== t.rowsRead) return `${t.file}: ${t.items} items in the file, but ${t.rowsRead} rows read`;
    return undefined;
  }
  const accounted = t.headerLines + t.blankLines + t.linesInRows;
  if (accounted !== t.physicalLines)
    return `${t.file}: ${t.physicalLines} physical lines, but ${accounted} accounted for (header ${t.headerLines}, blank ${t.blankLines}, in rows ${t.linesInRows})`;
  return undefined;
}

/** Lists a swallowed span, or only counts it once the tally lists `SWALLOWED_LISTED`. */
export function addSwallowed(tally: SourceTally, span: SwallowedSpan): void {
  if (tally.swallowed.length < SWALLOWED_LISTED) {
    tally.swallowed.push(span);
    return;
  }
  tally.unlisted ??= { spans: 0, lines: 0 };
  tally.unlisted.spans++;
  tally.unlisted.lines += span.to - span.from + 1;
}

/** Flags a row read as written under `csv.quotes: relaxed` (listed up to `SWALLOWED_LISTED`, all counted). */
export function addRelaxedQuote(tally: SourceTally, row: RelaxedQuoteRow): void {
  const r = (tally.relaxedQuotes ??= { listed: [], count: 0 });
  r.count++;
  if (r.listed.length < SWALLOWED_LISTED) r.listed.push(row);
}

/**
 * Adds the count of one part of a file (a range read on a worker) to the file's tally: the parts
 * partition the file at record boundaries, so their counts add up to the whole file's.
 */
export function addTally(into: SourceTally, part: SourceTally): void {
  into.physicalLines += part.physicalLines;
  into.blankLines += part.blankLines;
  into.headerLines += part.headerLines;
  into.rowsRead += part.rowsRead;
  into.rowErrors += part.rowErrors;
  into.linesInRows += part.linesInRows;
  if (part.items !== undefined) into.items = (into.items ?? 0) + part.items;
  for (const span of part.swallowed) addSwallowed(into, span);
  if (part.unlisted) {
    into.unlisted ??= { spans: 0, lines: 0 };
    into.unlisted.spans += part.unlisted.spans;
    into.unlisted.lines += part.unlisted.lines;
  }
  if (part.truncated !== undefined) into.truncated ??= part.truncated;
  if (part.relaxedQuotes) {
    for (const row of part.relaxedQuotes.listed) addRelaxedQuote(into, row);
    into.relaxedQuotes!.count += part.relaxedQuotes.count - part.relaxedQuotes.listed.length;
  }
}

/** Whitespace as `String.prototype.trim` sees it: a line of only these is blank. */
const WHITESPACE = /\s/;
function isSpace(c: number, text: string, i: number): boolean {
  if (c === 32 || c === 9 || c === 13) return true;
  if (c < 128 && c !== 11 && c !== 12) return false;
  return WHITESPACE.test(text[i]!);
}

/** Whether a line holds nothing but whitespace (the readers' and the counter's one definition). */
export function isBlankLine(text: string): boolean {
  return text.trim() === '';
}

/**
 * The independent count of a line-oriented file: physical lines and blank lines, from the text
 * alone. LF and CRLF end a line; so does a lone CR unless the format says otherwise (JSON Lines:
 * only LF separates lines; a CR is part of the line); a last line without a break counts. Fed the
 * same decoded text the parser gets, in any pieces; written apart from every parser on purpose.
 * @example const c = new PhysicalLineCounter(); c.push('a\r\n\nb'); c.end(tally) // tally.physicalLines 3, blankLines 1
 */
export class PhysicalLineCounter {
  private lines = 0;
  private blanks = 0;
  private open = false;
  private content = false;
  private afterCr = false;
  private readonly loneCr: boolean;

  constructor(options: { loneCr?: boolean } = {}) {
    this.loneCr = options.loneCr !== false;
  }

  push(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || (c === 13 && this.loneCr)) {
        if (c === 10 && this.afterCr) {
          this.afterCr = false;
          continue; // the LF of a CRLF: the CR ended the line
        }
        this.lines++;
        if (!this.content) this.blanks++;
        this.open = false;
        this.content = false;
        this.afterCr = c === 13;
        continue;
      }
      this.afterCr = false;
      this.open = true;
      if (!this.content && !isSpace(c, text, i)) this.content = true;
    }
  }

  /** Lines counted so far (the open last line included). */
  get physicalLines(): number {
    return this.lines + (this.open ? 1 : 0);
  }

  /** Writes the figures into the tally. */
  end(tally: SourceTally): void {
    tally.physicalLines = this.physicalLines;
    tally.blankLines = this.blanks + (this.open && !this.content ? 1 : 0);
  }
}
