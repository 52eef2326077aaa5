/**
 * The CSV reader's pure core: bytes in (`push(chunk)`, then `end()`), rows, row errors and the
 * file's line accounting out. No I/O: read-csv.ts feeds it a file, tests feed it strings.
 *
 * Two readers behind one dialect (dialect.ts):
 * - plain lines (no quote character, no line-break byte but their record delimiter) are split
 *   natively (plain-lines.ts);
 * - csv-parse, through its public stream API only (`write`, `end`, `on_record`, `on_skip`,
 *   `info`, `options`), reads from a line that is not plain until plain lines follow again. Its
 *   stream is written to synchronously and never pushes a record to its readable side
 *   (`on_record` takes each record and answers null), so every record is in hand when `write`
 *   returns.
 * Both read the file's own bytes (decoding fields as utf8, latin1 or utf16le), so byte offsets are
 * offsets in the file whatever the encoding. Line numbers come from where the line breaks are in
 * those bytes (lines.ts), not from csv-parse's `info.lines`.
 *
 * A row with the wrong number of columns, or one csv-parse cannot read (an unclosed quote),
 * becomes a `SourceRowError` and the file goes on.
 *
 * Accounting (tally.ts): the physical and blank lines are counted from every byte pushed, apart
 * from both readers (lines.ts); the readers add the header's lines, the rows and row errors and
 * the lines each spans (a blank line inside a quoted field counts as blank, not as the row's).
 *
 * Swallowed lines. Only csv-parse makes a record of several lines. Such a record *swallowed* the
 * lines after its first when any of these holds:
 * - csv-parse refused it (`on_skip`), or the file ended inside it (an unclosed quote);
 * - it came out with a column count other than the header's;
 * - a field holding a line break starts with the quote character: the quote opened the field but
 *   did not close as a quote (`100009;"J.;Johannes;…` on line 11, a stray `"ab"cd` on line 21),
 *   and under `relax_quotes` csv-parse then reads the whole stretch as one unquoted field of the
 *   right width, whose line breaks are other rows' line ends. A well-quoted field comes back
 *   without its quotes.
 * A quoted field over several lines in a row of the right width (a street over two lines) is a
 * row and swallows nothing. A swallowing record is one error naming its whole span
 * (`klanten.csv:11–21: a quote opened on line 11 closes on line 21; 10 following rows were read
 * as part of this one`) and is listed in `tally.swallowed`. The rule's blind spot: a well-quoted
 * field over several lines whose text itself starts with a (doubled) quote reads as swallowing.
 *
 * A file with a header and no row sets `tally.truncated`; a file with nothing at all is also one
 * SOURCE_READ_FAILED, as before.
 */
import { parse, type CsvError, type Info, type Options, type Parser } from 'csv-parse';
import type { SourceRow, SourceRowError } from '../../types.js';
import { addSwallowed, type SourceTally } from '../tally.js';
import { StagecoachError } from '../../../contract/errors.js';
import { quotedNames as names } from '../../../contract/cut.js';
import { repairWindows1252, textDefect, textDefectHint } from '../encoding.js';
import { sha256Hex } from '../row-hash.js';
import { csvParseOptions, type CsvDialect } from './dialect.js';
import { LineIndex, PhysicalLines } from './lines.js';
import {
  plainLineFormat,
  plainLinesPossible,
  plainTail,
  recordDelimiterOf,
  walkPlainLines,
  type PlainLineFormat,
  type RecordDelimiter,
} from './plain-lines.js';

export type CsvItem = SourceRow | SourceRowError;

/** A slice of a CSV file that starts at a record: bytes [start, end), the columns already known. */
export interface CsvRange {
  start: number;
  /** Exclusive; the file's end when absent. */
  end?: number;
  /** The columns (from the header, or csv.columns): a range after the header holds none. */
  columns?: string[];
  /** Line of the range's first byte (1-based). */
  line: number;
  /** The record delimiter found at the file's start, so every range splits records alike. */
  recordDelimiter?: '\n' | '\r\n';
}

export interface CsvReadOutcome {
  columns?: string[];
  /** Line of the last record's last line. */
  endLine: number;
  /** Byte offset just past the last record (its delimiter included). */
  endByte: number;
  /**
   * False when the input stopped inside a record (csv-parse refused the last one at the end, or
   * failed): for a range, its end was not at a record boundary.
   */
  endedAtRecord: boolean;
  /** Records read by the plain-line fast path rather than csv-parse. */
  plainRecords?: number;
}

export interface CsvCoreOptions {
  /** Source name (pipeline file) and the path shown in provenance and messages. */
  source: string;
  file: string;
  dialect: CsvDialect;
  /** The input is this slice of the file (it starts where a record starts); the whole file when absent. */
  range?: CsvRange | undefined;
  /** Columns the mapping reads: a header without one of them is a configuration error. */
  requiredColumns?: ReadonlySet<string> | undefined;
  /** Hash each row's fields into its provenance (default true). */
  hashRows?: boolean | undefined;
  /** Read plain lines without csv-parse (default true). Tests turn it off for a reference. */
  plainLines?: boolean | undefined;
  /** Filled in as the input goes (tally.ts). */
  tally?: SourceTally | undefined;
  /** Filled in as the input goes: the columns, and how the last record ended (a range's check). */
  outcome?: CsvReadOutcome | undefined;
  /**
   * Key-only mode: each record's (untrimmed) value of `column` goes to `take` and no row is made;
   * records of any width count, a record without that column gives none. No text checks.
   */
  keys?: { column: string; take: (value: string) => void } | undefined;
  /**
   * Records-only mode: each record after the header goes to `take` as its fields, whatever its
   * width (the corrections file and the report re-read single rows so). No rows, no text checks.
   */
  records?: { take: (fields: string[]) => void; refused?: (error: SourceRowError) => void } | undefined;
}

const RAW_LIMIT = 200;
const LF_BYTE = 10;
const CR_BYTE = 13;
/** Longest incomplete line the plain-line path holds while it waits for the line's end. */
const PLAIN_LINE_LIMIT = 1 << 20;
const FIELD_SEPARATOR = '\u001f';

/**
 * One CSV input. Not reusable: push its chunks in order, then call `end` once.
 * @example const core = new CsvCore({ source: 's', file: 'f.csv', dialect }); const rows = [...core.push(buf), ...core.end()];
 */
export class CsvCore {
  private readonly o: CsvCoreOptions;
  private readonly d: CsvDialect;
  private readonly wide: boolean;
  private readonly hashRows: boolean;
  private readonly fromStart: boolean;
  /** The input starts at the file's first byte, where a BOM may be. */
  private readonly bom: boolean;
  private readonly outcome: CsvReadOutcome;
  private readonly physical: PhysicalLines;
  private bomLeft: number; // BOM bytes not yet passed: not counted as a line's bytes

  // --- rows (takeRecord)
  private columns: string[] | undefined;
  private width: number;
  private pending: CsvItem[] = [];
  private failure: unknown;
  private keyAt = -1; // key-only mode: the key column's index
  /** A plain line's text is checked for defects instead of its fields (no repair, clean delimiter). */
  private readonly lineShowsDefects: boolean;

  // --- positions: where the last record ended (line and the file offset just past it)
  private prevEndLine: number;
  private prevEndByte: number;

  // --- the plain-line path
  private readonly plainAllowed: boolean;
  private plain: PlainLineFormat | undefined;
  private plainOn: boolean;
  private plainLost = false; // the record delimiter turned out to be one plain lines cannot have
  private recordDelimiter: RecordDelimiter | undefined;
  /**
   * The input's start, held until its first line break shows whether lines end in CR CR LF
   * (csv-parse alone would take the first CR for the record delimiter, and start every record
   * after it with the LF): both readers then take CR CR LF whole. Undefined once known.
   */
  private head: Buffer | undefined;
  private carry: Buffer | undefined; // the incomplete last line of the input so far
  private carryAt: number; // its offset in the file
  private nextLine: number; // line of carry's first byte
  private plainText: Buffer = Buffer.alloc(0);
  private plainBase = 0;
  private plainRecords = 0;

  // --- csv-parse
  private parser: Parser | undefined;
  private parserAt = 0; // file offset of the next byte csv-parse is given
  private byteBase = 0; // file offset and line before csv-parse's first byte
  private lineBase = 0;
  private prevEmpty = 0; // csv-parse's empty-line count at the last record
  private lines: LineIndex;
  private lastRecordEnd = -1; // file offset just past the last record csv-parse completed: a record boundary
  private skippedSince = false; // csv-parse refused a record after that one
  /** After `end()`, a refused record means the input stopped inside one (an unclosed quote). */
  private ending = false;
  private done = false;

  constructor(o: CsvCoreOptions) {
    this.o = o;
    const d = (this.d = o.dialect);
    const range = o.range;
    this.wide = d.encoding.node === 'utf16le';
    this.hashRows = o.hashRows !== false && !o.keys && !o.records;
    this.fromStart = range === undefined || range.start === 0;
    this.bom = d.encoding.node !== 'latin1' && this.fromStart;
    this.outcome = o.outcome ?? { endLine: 0, endByte: 0, endedAtRecord: true };
    this.physical = new PhysicalLines(this.wide);
    this.bomLeft = this.fromStart ? d.encoding.bomLength : 0;
    this.columns = range?.columns ?? (d.header ? undefined : d.columns);
    if (!d.header && !this.columns)
      throw new StagecoachError('CONFIG_INVALID', `${o.file}: csv.header is false, so csv.columns must name the columns`, { file: o.file });
    this.width = this.columns?.length ?? 0;
    if (this.columns) this.keyAt = this.keyIndex(this.columns, 1);
    this.lineShowsDefects = !d.encoding.repair1252 && textDefect(d.delimiter) === undefined;
    const lineBase = range ? range.line - 1 : 0;
    this.prevEndLine = lineBase;
    this.prevEndByte = range === undefined || range.start === 0 ? d.encoding.bomLength : range.start;
    this.plainAllowed = o.plainLines !== false && !this.wide && plainLinesPossible(d);
    this.plainOn = this.plainAllowed;
    this.recordDelimiter = range?.recordDelimiter ?? d.recordDelimiter;
    if (this.recordDelimiter === undefined && this.fromStart && !this.wide) this.head = Buffer.alloc(0);
    this.carryAt = range?.start ?? 0;
    this.nextLine = lineBase + 1;
    this.lines = new LineIndex(1, this.wide);
  }

  /** Reads the next bytes of the input; returns the rows and errors they completed. */
  push(chunk: Buffer): CsvItem[] {
    if (!this.done) {
      this.count(chunk);
      this.guard(() => this.read(chunk, false));
    }
    return this.drain();
  }

  /** The input ended: returns the last rows and errors, and settles the tally. */
  end(): CsvItem[] {
    if (!this.done) {
      this.guard(() => {
        this.read(undefined, true);
        if (this.parser) {
          this.ending = true;
          this.parser.end(); // csv-parse flushes its last record synchronously
          this.parserFailed();
        }
      });
      this.done = true;
    }
    this.parser?.destroy();
    this.parser = undefined;
    this.outcome.plainRecords = this.plainRecords;
    this.physical.end();
    const t = this.o.tally;
    if (t) {
      t.physicalLines += this.physical.lines;
      t.blankLines += this.physical.blank;
    }
    if (this.columns === undefined && this.fromStart && this.pending.every((r) => (r as SourceRowError).code !== 'SOURCE_READ_FAILED')) {
      // Nothing at all, not even a header: an export that failed, not an empty one.
      this.pending.push({
        source: this.o.source,
        provenance: { file: this.o.file, line: 1, byteOffset: 0, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${this.o.file}:1: the file is empty, expected a header line naming the columns`,
      } satisfies SourceRowError);
      if (t) t.truncated ??= 'the file is empty: not even a header';
    } else if (t && this.fromStart && this.o.range?.end === undefined && t.rowsRead === 0 && !t.truncated) {
      t.truncated = this.d.header ? 'the file holds a header but no rows' : 'the file holds no rows';
    }
    return this.drain();
  }

  /** The input could not be read on (an I/O error): one SOURCE_READ_FAILED at where the rows stopped. */
  fail(err: unknown): CsvItem[] {
    if (!this.done) this.readFailed(err);
    return this.drain();
  }

  private drain(): CsvItem[] {
    const batch = this.pending;
    this.pending = [];
    if (this.failure !== undefined) {
      const f = this.failure;
      this.failure = undefined;
      this.done = true;
      throw f;
    }
    return batch;
  }

  /** Counts the input's physical lines (the tally's independent count), past a BOM. */
  private count(chunk: Buffer): void {
    if (!this.o.tally) return;
    if (this.bomLeft > 0) {
      const skip = Math.min(this.bomLeft, chunk.length);
      this.bomLeft -= skip;
      this.physical.add(chunk.subarray(skip));
    } else this.physical.add(chunk);
  }

  /** Runs a step; an error that is not the pipeline's own ends the input with one SOURCE_READ_FAILED. */
  private guard(step: () => void): void {
    try {
      step();
    } catch (err) {
      if (err instanceof StagecoachError) {
        this.failure ??= err;
        return;
      }
      this.readFailed(err);
    }
  }

  private readFailed(err: unknown): void {
    const line = this.prevEndLine + 1;
    this.outcome.endedAtRecord = false;
    this.done = true;
    this.pending.push({
      source: this.o.source,
      provenance: { file: this.o.file, line, byteOffset: this.prevEndByte, hash: '' },
      code: 'SOURCE_READ_FAILED',
      message: `${this.o.file}:${line}: the rest of the file cannot be read: ${this.csvParseMessage(err as Error)}`,
    } satisfies SourceRowError);
    if (this.o.tally) this.o.tally.truncated ??= `the rest of the file from line ${line} cannot be read`;
  }

  /** csv-parse's message, at the line of the file (or at `line`, where csv-parse's own count is off). */
  private csvParseMessage(err: Error | undefined, line?: number): string {
    return (err?.message ?? 'unknown error').replace(/\bat line (\d+)/, (_, n: string) => `at line ${line ?? Number(n) + this.lineBase}`);
  }

  private finish(endLine: number, endByte: number): void {
    this.prevEndLine = endLine;
    this.prevEndByte = endByte;
    this.outcome.endLine = endLine;
    this.outcome.endByte = endByte;
  }

  // ---------------------------------------------------------------- rows

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
   * `line`–`endLine` from byte `byteOffset`.
   */
  private takeRecord(record: string[], line: number, endLine: number, byteOffset: number, text?: string): void {
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
    const provenance = { file, line, byteOffset, hash: this.hashRows ? sha256Hex(joined) : '' };
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
  private swallowed(line: number, endLine: number, byteOffset: number, atEnd: boolean, why: string | undefined): void {
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
  private rowError(error: SourceRowError): void {
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
        // what the check before a run (checks/configuration.ts) needs to point at the mapping instead
        ...(missing.length > 0 ? { missingColumns: missing, headerColumns: columns, headerDefect: headerDefect !== undefined } : {}),
      });
  }

  // ---------------------------------------------------------------- driving the two readers

  /**
   * Reads one chunk of input (or, with `last`, what is left). The plain-line path reads until a
   * line that is not plain; csv-parse reads from there, until it has ended a record and no quote
   * follows in the chunk at hand, and plain lines are read again after that record. UTF-16 is
   * csv-parse's throughout.
   */
  private read(chunk: Buffer | undefined, last: boolean): void {
    let data = chunk;
    if (this.head) {
      const head = data ? Buffer.concat([this.head, data]) : this.head;
      const lf = head.indexOf(LF_BYTE);
      const cr = head.indexOf(CR_BYTE);
      // a CR or two at the end may still be the start of CRLF or CR CR LF
      const open = lf < 0 && (cr < 0 || (cr >= head.length - 2 && head.subarray(cr).every((b) => b === CR_BYTE)));
      if (open && !last && head.length <= PLAIN_LINE_LIMIT) {
        this.head = head;
        return;
      }
      this.head = undefined;
      if (recordDelimiterOf(head, this.d.quote.charCodeAt(0)) === '\r\r\n') this.recordDelimiter = '\r\r\n';
      data = head.length > 0 ? head : data;
    }
    for (;;) {
      if (this.plainOn) {
        const carry = this.carry;
        const joined = carry === undefined ? data : data === undefined ? carry : Buffer.concat([carry, data]);
        this.carry = joined === undefined ? undefined : this.readPlain(joined, this.carryAt, last);
        if (this.plainOn) return;
        this.parser = this.startParser(this.carryAt, this.nextLine);
        data = this.carry;
        this.carry = undefined;
      }
      this.parser ??= this.startParser(this.carryAt, this.nextLine);
      if (data === undefined || data.length === 0) return;
      if (!this.plainAllowed || this.plainLost || last) {
        this.feed(this.parser, data);
        return;
      }
      data = this.parseUntilPlain(data);
      if (data === undefined) return;
    }
  }

  // ---------------------------------------------------------------- plain lines

  /** The file's record delimiter is known (LF, CRLF, CR CR LF): plain lines can be told from here on. */
  private adoptRecordDelimiter(rd: RecordDelimiter): PlainLineFormat {
    this.recordDelimiter = rd;
    return (this.plain = plainLineFormat(this.d.quote, rd));
  }

  /** A plain line: its text is [s, e) of `plainText`, the next line starts at `next`. */
  private takePlain(s: number, e: number, next: number): void {
    const line = this.nextLine;
    // CR CR LF ends two physical lines (a lone CR ends one, lines.ts): the row's, and an empty one
    this.nextLine += this.recordDelimiter === '\r\r\n' && next > e ? 2 : 1;
    if (s === e) return; // a blank line: csv-parse skips it too
    this.finish(line, this.plainBase + next);
    this.plainRecords++;
    const keyAt = this.keyAt;
    if (keyAt >= 0 && this.columns !== undefined && !this.d.encoding.repair1252) {
      // Key-only: just the key's field is decoded.
      const D = this.d.delimiter.charCodeAt(0);
      const buf = this.plainText;
      let f = s;
      for (let k = 0; k < keyAt && f >= 0; k++) {
        const at = buf.indexOf(D, f);
        f = at >= 0 && at < e ? at + 1 : -1;
      }
      if (f < 0 || ((buf[s] === 32 || buf[s] === 9) && this.width !== 1 && blankBytes(buf, s, e))) return;
      const to = buf.indexOf(D, f);
      this.o.keys!.take(buf.toString(this.d.encoding.node, f, to >= 0 && to < e ? to : e));
      return;
    }
    const text = this.plainText.toString(this.d.encoding.node, s, e);
    this.takeRecord(text.split(this.d.delimiter), line, line, this.plainBase + s, text);
  }

  /**
   * Reads the complete plain lines of `data` (at `dataAt` in the file) and returns the rest. At
   * the first line that is not plain it turns `plainOn` off: the rest is then csv-parse's.
   */
  private readPlain(data: Buffer, dataAt: number, last: boolean): Buffer {
    const handOver = (from: number): Buffer => {
      this.plainOn = false;
      this.carryAt = dataAt + from;
      this.prevEndLine = this.nextLine - 1;
      this.prevEndByte = dataAt + from;
      return data.subarray(from);
    };
    let from = 0;
    if (dataAt === 0 && this.bom) {
      // csv-parse strips a UTF-8 BOM, and reads on as UTF-16 after a UTF-16LE one.
      if (data.length < 3) return last ? handOver(0) : data;
      if (data[0] === 0xff && data[1] === 0xfe) return handOver(0);
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) from = 3;
    }
    let format = this.plain;
    if (!format) {
      const rd = this.recordDelimiter ?? recordDelimiterOf(data.subarray(from), this.d.quote.charCodeAt(0));
      if (rd === undefined) {
        // Wait for the first line's end, unless a CR says it may be old-Mac CR lines (csv-parse's).
        const waiting =
          !last && data.indexOf(LF_BYTE, from) < 0 && data.indexOf(CR_BYTE, from) < 0 && data.length - from <= PLAIN_LINE_LIMIT;
        return waiting ? data : handOver(from);
      }
      format = this.adoptRecordDelimiter(rd);
    }
    this.plainText = data;
    this.plainBase = dataAt;
    const step = format.crs + 1;
    const walked = walkPlainLines(data, from, format, (s, e) => this.takePlain(s, e, e + step));
    from = walked.at;
    // A line longer than the limit goes to csv-parse, which reads it without copying it again and again.
    if (walked.stopped || data.length - from > PLAIN_LINE_LIMIT) return handOver(from);
    if (last && from < data.length) {
      if (!plainTail(data, from, format)) return handOver(from);
      this.takePlain(from, data.length, data.length);
      from = data.length;
    }
    this.carryAt = dataAt + from;
    return data.subarray(from);
  }

  // ---------------------------------------------------------------- csv-parse

  /** csv-parse, for the input from the file offset `at` on, at line `line`. */
  private startParser(at: number, line: number): Parser {
    this.byteBase = at;
    this.lineBase = line - 1;
    this.prevEmpty = 0;
    this.parserAt = at;
    this.lines = new LineIndex(line, this.wide);
    this.lastRecordEnd = -1;
    this.skippedSince = false;
    const options: Options = {
      ...csvParseOptions({ ...this.d, recordDelimiter: this.recordDelimiter }, this.bom && at === 0),
      on_record: (record: string[], info: Info) => {
        this.parsedRecord(p, record, info);
        return null; // taken here: nothing goes to the stream's readable side
      },
      on_skip: (err: CsvError | undefined) => {
        this.parsedSkip(p, err);
        return undefined;
      },
    };
    const p: Parser = parse(options);
    // An error csv-parse does not skip is taken from `errored` after each write (parserFailed).
    p.on('error', () => {});
    return p;
  }

  /** Where the record csv-parse is at starts: its first line and byte, past the empty lines before it. */
  private recordStart(p: Parser, info: Info): { line: number; byteOffset: number } {
    const empty = info.empty_lines - this.prevEmpty;
    this.prevEmpty = info.empty_lines;
    const rd = p.options.record_delimiter;
    const rdBytes = rd && rd.length > 0 && rd[0] ? (rd[0] as Buffer).length : this.wide ? 2 : 1;
    const byteOffset = this.prevEndByte + empty * rdBytes;
    return { line: this.lines.at(byteOffset), byteOffset };
  }

  /** A record csv-parse completed. */
  private parsedRecord(p: Parser, record: string[], info: Info): void {
    const at = this.recordStart(p, info);
    const end = this.byteBase + info.bytes;
    // The row ends on the line of its delimiter's first byte: after CR CR LF, that is the line
    // before the empty one the second CR ends.
    const endLine = Math.max(at.line, this.lines.at(end - (this.recordDelimiter === '\r\r\n' ? 3 : 1)));
    this.finish(endLine, end);
    this.lastRecordEnd = end;
    this.skippedSince = false;
    this.takeRecord(record, at.line, endLine, at.byteOffset);
  }

  /** A record csv-parse could not read: reported where it started, then the file goes on. */
  private parsedSkip(p: Parser, err: CsvError | undefined): void {
    const info = p.info;
    const at = this.recordStart(p, info);
    // At the end of the input it is an unclosed quote, which took every line after it.
    const end = this.ending ? this.parserAt : this.byteBase + info.bytes;
    const endLine = Math.max(at.line, this.lines.at(end - (!this.ending && this.recordDelimiter === '\r\r\n' ? 3 : 1)));
    this.finish(endLine, end);
    this.skippedSince = true;
    if (this.ending) this.outcome.endedAtRecord = false;
    const t = this.o.tally;
    if (t) t.linesInRows += endLine - at.line + 1;
    if (this.ending && t) t.truncated ??= `the file ends inside a quoted value opened on line ${at.line}`;
    if (this.ending && endLine === at.line) {
      const { file, source } = this.o;
      this.rowError({
        source,
        provenance: { file, line: at.line, byteOffset: at.byteOffset, hash: '' },
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${at.line}: a quote opened on line ${at.line} is not closed before the file ends`,
      } satisfies SourceRowError);
      return;
    }
    if (endLine > at.line) {
      this.swallowed(at.line, endLine, at.byteOffset, this.ending, this.ending ? undefined : this.csvParseMessage(err));
      return;
    }
    const { file, source } = this.o;
    this.rowError({
      source,
      provenance: { file, line: at.line, byteOffset: at.byteOffset, hash: '' },
      code: 'SOURCE_ROW_INVALID',
      message: `${file}:${at.line}: unreadable CSV row: ${this.csvParseMessage(err, this.ending ? endLine : undefined)}`,
    } satisfies SourceRowError);
  }

  /** Gives csv-parse the next bytes of the input. */
  private feed(p: Parser, bytes: Buffer): void {
    this.lines.add(bytes, this.parserAt);
    p.write(bytes);
    this.parserAt += bytes.length;
    this.parserFailed();
  }

  /** csv-parse stopped with an error it does not skip: the rest of the input cannot be read. */
  private parserFailed(): void {
    const err = this.parser?.errored;
    if (err) throw err;
  }

  /**
   * Gives `data` to csv-parse up to where plain lines can be read again, and returns the rest
   * (undefined when csv-parse took it all). That is after a record csv-parse completed, when
   * the rest of `data` holds no quote: the record's end is a record boundary, so the lines after
   * it read the same either way, and what csv-parse holds of them is dropped and read again.
   * Past the last quote, csv-parse is given a line at a time, so that it hands back soon.
   * Not after a record it refused (that one would be reported twice).
   */
  private parseUntilPlain(data: Buffer): Buffer | undefined {
    const p = this.parser!;
    const dataAt = this.parserAt;
    const lastQuote = data.lastIndexOf(this.d.quote.charCodeAt(0));
    let s = 0;
    while (s < data.length) {
      const lf = data.indexOf(LF_BYTE, Math.max(s, lastQuote));
      const e = lf < 0 ? data.length : lf + 1;
      this.feed(p, data.subarray(s, e));
      s = e;
      if (this.skippedSince || this.lastRecordEnd - dataAt <= lastQuote || this.failure !== undefined) continue;
      if (!this.plain) {
        // The record delimiter csv-parse found (it read the first line, which was not plain).
        const found = (p.options.record_delimiter as Buffer[] | undefined)?.[0]?.toString('latin1');
        if (found !== '\n' && found !== '\r\n') {
          this.plainLost = true; // old-Mac CR lines: csv-parse reads the rest
          if (s < data.length) this.feed(p, data.subarray(s));
          return undefined;
        }
        this.adoptRecordDelimiter(found);
      }
      p.destroy();
      this.parser = undefined;
      this.plainOn = true;
      this.carryAt = this.lastRecordEnd;
      // past the record's line, and past the empty line a CR CR LF's second CR makes
      this.nextLine = this.prevEndLine + (this.recordDelimiter === '\r\r\n' ? 2 : 1);
      return data.subarray(this.lastRecordEnd - dataAt);
    }
    return undefined;
  }
}

/** Whether bytes [s, e) are all spaces and tabs (a line of blanks, which is no record). */
function blankBytes(buf: Buffer, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (buf[i] !== 32 && buf[i] !== 9) return false;
  return true;
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
