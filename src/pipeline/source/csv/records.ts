/**
 * What the CSV core's two engines (plain-engine.ts, parse-engine.ts) share: each hands its records
 * here, with the lines and byte offset it read them at, and this makes of them the header, rows
 * and row errors, with the same provenance, hash, messages and tally whichever engine read them.
 * It also holds where the last record ended (a read failure is reported there) and the record
 * delimiter once known, which both engines split records by.
 */
import type { SourceRow, SourceRowError } from '../../types.js';
import { addSwallowed } from '../tally.js';
import { StagecoachError } from '../../../contract/errors.js';
import { quotedNames as names } from '../../../contract/cut.js';
import { repairWindows1252, textDefect, textDefectHint } from '../encoding.js';
import { rowHash } from '../row-hash.js';
import { addRelaxedQuote } from '../tally.js';
import { QUOTE_SHAPE_TEXT, type QuoteDefect } from './quote-shape.js';
import type { CsvDialect } from './dialect.js';
import type { RecordDelimiter } from './plain-lines.js';
import type { CsvCoreOptions, CsvItem, CsvReadOutcome } from './types.js';

const RAW_LIMIT = 200;
const FIELD_SEPARATOR = '\u001f';

/** The records of one CSV input, from either engine, made into rows and row errors. */
export class CsvRecords {
  readonly o: CsvCoreOptions;
  readonly d: CsvDialect;
  readonly hashRows: boolean;
  readonly outcome: CsvReadOutcome;
  /** The columns (undefined until the header is read) and how many a row must have. */
  columns: string[] | undefined;
  width: number;
  /** Key-only mode: the key column's index (-1 otherwise, or while the header is unread). */
  keyAt = -1;
  /** The rows and errors made since the core last handed them out. */
  pending: CsvItem[] = [];
  /** A configuration error (a header the mapping cannot read): thrown when the core hands out. */
  failure: unknown;
  /** A plain line's text is checked for defects instead of its fields (no repair, clean delimiter). */
  private readonly lineShowsDefects: boolean;
  /** Where the last record ended: its last line and the file offset just past it. */
  prevEndLine: number;
  prevEndByte: number;
  /** LF, CRLF or CR CR LF once known (given, or found at the file's start). */
  recordDelimiter: RecordDelimiter | undefined;

  constructor(o: CsvCoreOptions) {
    this.o = o;
    const d = (this.d = o.dialect);
    const range = o.range;
    this.hashRows = o.hashRows !== false && !o.keys && !o.records;
    this.outcome = o.outcome ?? { endLine: 0, endByte: 0, endedAtRecord: true };
    this.columns = range?.columns ?? (d.header ? undefined : d.columns);
    if (!d.header && !this.columns)
      throw new StagecoachError('CONFIG_INVALID', `${o.file}: csv.header is false, so csv.columns must name the columns`, { file: o.file });
    this.width = this.columns?.length ?? 0;
    if (this.columns) this.keyAt = this.keyIndex(this.columns, 1);
    this.lineShowsDefects = !d.encoding.repair1252 && textDefect(d.delimiter) === undefined;
    this.prevEndLine = range ? range.line - 1 : 0;
    this.prevEndByte = range === undefined || range.start === 0 ? d.encoding.bomLength : range.start;
    this.recordDelimiter = range?.recordDelimiter ?? d.recordDelimiter;
  }

  /** A record ended on line `endLine`, just before the file offset `endByte`. */
  finish(endLine: number, endByte: number): void {
    this.prevEndLine = endLine;
    this.prevEndByte = endByte;
    this.outcome.endLine = endLine;
    this.outcome.endByte = endByte;
  }

  /** Where the key column is among `columns` (key-only mode); -1 otherwise. */
  private keyIndex(columns: readonly string[], line: number): number {
    const k = this.o.keys;
    if (!k) return -1;
    const at = columns.indexOf(k.column);
    if (at < 0)
      throw new StagecoachError(
        'CONFIG_INVALID',
        `${this.o.file}:${line}: the mapping reads column ${JSON.stringify(k.column)} that the header lacks`,
        {
          file: this.o.file,
          line,
        },
      );
    return at;
  }

  /**
   * One record's fields, from csv-parse or the plain-line path (with its `text`), over the lines
   * `line`–`endLine` from byte `byteOffset`; `quote`: its first malformed quote (csv-parse's
   * records only: a plain line holds no quote).
   */
  takeRecord(record: string[], line: number, endLine: number, byteOffset: number, text?: string, quote?: QuoteDefect): void {
    const { file, source } = this.o;
    const repair = this.d.encoding.repair1252;
    if (repair) for (let i = 0; i < record.length; i++) record[i] = repairWindows1252(record[i]!);
    if (record.length === 1 && record[0]!.trim() === '' && this.width !== 1) return; // a line of blanks
    const t = this.o.tally;
    const columns = this.columns;
    if (columns === undefined) {
      this.takeHeader(record, line);
      if (t) t.headerLines += endLine - line + 1;
      return;
    }
    if (this.o.records) {
      this.o.records.take(record);
      return;
    }
    if (this.keyAt >= 0) {
      if (this.keyAt < record.length) this.o.keys!.take(record[this.keyAt]!);
      return;
    }
    const width = this.width;
    // Blank lines are the independent count's: one inside a quoted field, or a one-column row
    // of blanks, is not also counted as the row's.
    if (t)
      t.linesInRows +=
        endLine - line + 1 - (endLine > line ? blankLinesInside(record) : width === 1 && /^[ \t]*$/.test(record[0]!) ? 1 : 0);
    if (endLine > line && (record.length !== width || this.quoteTookLines(record))) {
      const why = record.length !== width ? `it came out with ${record.length} columns, expected ${width} as the header` : undefined;
      this.swallowed(line, endLine, byteOffset, false, why);
      return;
    }
    const checked = text !== undefined && this.lineShowsDefects ? text : undefined;
    const joined = this.hashRows || checked === undefined ? record.join(FIELD_SEPARATOR) : '';
    const provenance = { file, line, byteOffset, hash: this.hashRows ? rowHash(joined) : '' };
    if (quote && record.length === width) {
      const where = `column ${JSON.stringify(columns[quote.column] ?? String(quote.column + 1))}`;
      if (this.d.quotes !== 'relaxed') {
        this.rowError({
          source,
          provenance,
          code: 'SOURCE_ROW_INVALID',
          message: `${file}:${line}: ${where} has malformed quotes: ${QUOTE_SHAPE_TEXT[quote.shape]}; expected a value in quotes with every quote inside doubled, or no quote; csv.quotes: relaxed reads such rows as written`,
          raw: record.join(this.d.delimiter).slice(0, RAW_LIMIT),
        } satisfies SourceRowError);
        return;
      }
      if (t) addRelaxedQuote(t, { line, column: columns[quote.column] ?? String(quote.column + 1), shape: quote.shape });
    }
    if (record.length !== width) {
      this.rowError({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${line}: wrong number of columns, expected ${width} (as the header), got ${record.length}`,
        raw: record.join(this.d.delimiter).slice(0, RAW_LIMIT),
      } satisfies SourceRowError);
      return;
    }
    const defect = textDefect(checked ?? joined);
    if (defect) {
      const at = record.findIndex((f) => textDefect(f) !== undefined);
      this.rowError({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${line}: column ${JSON.stringify(columns[at] ?? String(at + 1))} holds ${defect}, expected text in ${this.d.encoding.name}; ${textDefectHint(defect, this.d.encoding.name)}`,
        raw: record.join(this.d.delimiter).slice(0, RAW_LIMIT),
      } satisfies SourceRowError);
      return;
    }
    // A plain object, filled in column order: a name the header repeats takes the later column's value.
    const values: Record<string, unknown> = {};
    for (let i = 0; i < width; i++) values[columns[i]!] = record[i];
    if (t) t.rowsRead++;
    this.pending.push({ source, values, provenance } satisfies SourceRow);
  }

  /**
   * Whether a field holding a line break starts with a quote that csv-parse kept as text: the
   * quote opened a field but did not close as one (`"J.;Johannes` … `"ab"cd`), and under
   * `relax_quotes` csv-parse then reads the whole stretch as one unquoted field, whose line
   * breaks are other rows' line ends. (A well-quoted field comes back without its quotes.)
   */
  private quoteTookLines(record: string[]): boolean {
    const q = this.d.quote;
    for (const f of record) if (f.startsWith(q) && (f.includes('\n') || f.includes('\r'))) return true;
    return false;
  }

  /**
   * A record that took the lines after its first into itself and is not a row: one error naming
   * the whole span, and the span listed in the tally.
   * @param atEnd the file ended inside the record (the quote never closed)
   * @param why what else was wrong with it
   */
  swallowed(line: number, endLine: number, byteOffset: number, atEnd: boolean, why: string | undefined): void {
    const { file, source } = this.o;
    const n = endLine - line;
    const following = `${n} following row${n === 1 ? ' was' : 's were'} read as part of this one`;
    const message = atEnd
      ? `${file}:${line}–${endLine}: a quote opened on line ${line} is not closed before the file ends; ${following}`
      : `${file}:${line}–${endLine}: a quote opened on line ${line} closes on line ${endLine}; ${following}${why ? ` (${why})` : ''}`;
    if (this.o.tally) addSwallowed(this.o.tally, { line, from: line + 1, to: endLine });
    this.rowError({
      source,
      provenance: { file, line, byteOffset, hash: '' },
      code: 'SOURCE_ROW_INVALID',
      message,
    } satisfies SourceRowError);
  }

  /** A row error, counted in the tally (which counts errors among the rows read). */
  rowError(error: SourceRowError): void {
    const t = this.o.tally;
    if (t) {
      t.rowsRead++;
      t.rowErrors++;
    }
    this.o.records?.refused?.(error);
    this.pending.push(error);
  }

  /** The header record (or the first record, with csv.columns): the columns, checked against the mapping. */
  private takeHeader(record: string[], line: number): void {
    const { file } = this.o;
    const given = this.d.columns;
    const columns = (given ?? record).map((c, i) => (i === 0 ? c.replace(/^\ufeff/, '') : c).trim());
    this.columns = columns;
    this.outcome.columns = columns;
    this.width = given?.length ?? record.length;
    if (given && given.length !== record.length) {
      this.failure ??= new StagecoachError(
        'CONFIG_INVALID',
        `${file}:${line}: csv.columns names ${given.length} columns but the header has ${record.length}`,
        { file, line },
      );
    }
    this.keyAt = this.keyIndex(columns, line);
    const required = [...(this.o.requiredColumns ?? [])];
    const missing = required.filter((c) => !columns.includes(c) && !c.includes('.'));
    const headerDefect = given ? undefined : textDefect(record.join(FIELD_SEPARATOR));
    const doubled = required.filter((c) => columns.indexOf(c) !== columns.lastIndexOf(c));
    const s = (list: string[]) => (list.length > 1 ? 's' : '');
    let problem: string | undefined;
    if (missing.length > 0 && headerDefect) {
      const enc = this.d.encoding.name;
      problem = `the header is not text in ${enc}: it holds ${headerDefect}; ${textDefectHint(headerDefect, enc)}; expected a header naming the columns ${names(missing)}`;
    } else if (missing.length > 0) {
      problem = `the mapping reads column${s(missing)} ${names(missing)} that the header lacks; expected one of ${names(columns)}`;
    } else if (doubled.length > 0) {
      // Which of the two would the mapping read? Neither guess is safe.
      problem = `the header names column${s(doubled)} ${names(doubled)} more than once and the mapping reads ${doubled.length > 1 ? 'them' : 'it'}; rename the columns with csv.columns`;
    }
    if (problem)
      this.failure ??= new StagecoachError('CONFIG_INVALID', `${file}:${line}: ${problem}`, {
        file,
        line,
        // what the check before a run (read/configuration.ts) needs to point at the mapping instead
        ...(missing.length > 0 ? { missingColumns: missing, headerColumns: columns, headerDefect: headerDefect !== undefined } : {}),
      });
  }
}

/**
 * Physical lines inside a multi-line record's fields that hold nothing but blanks (a quoted field
 * with an empty line in it). The independent count sees them as blank lines, so the row does not
 * count them among its lines: each physical line is counted once.
 */
function blankLinesInside(record: readonly string[]): number {
  let n = 0;
  for (const f of record) {
    if (f.indexOf('\n') < 0 && f.indexOf('\r') < 0) continue;
    // Scanned in place, not split: a quoted field of a million lines must not become a million strings.
    let inner = false; // past the field's first line break: the current line is an inner one
    let blank = true;
    for (let i = 0; i < f.length; i++) {
      const c = f.charCodeAt(i);
      if (c === 10 || c === 13) {
        if (c === 13 && f.charCodeAt(i + 1) === 10) i++;
        if (inner && blank) n++;
        inner = true;
        blank = true;
      } else if (c !== 32 && c !== 9) blank = false;
    }
  }
  return n;
}
