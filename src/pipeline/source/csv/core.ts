/**
 * The CSV reader's pure core: bytes in (`push(chunk)`, then `end()`), rows, row errors and the
 * file's line accounting out. No I/O: read-csv.ts feeds it a file through the loop the JSON cores
 * are fed by too (feed-core.ts), tests feed it strings.
 *
 * Two engines behind one interface (engine.ts) and one dialect (dialect.ts):
 * - plain lines (no quote character, no line-break byte but their record delimiter) are split
 *   natively (plain-engine.ts, plain-lines.ts);
 * - csv-parse (parse-engine.ts) reads from a line that is not plain until plain lines follow
 *   again, and everything when plain lines cannot be read at all.
 * This module only chooses which engine reads on, and counts the physical lines; what the engines
 * share (header, row building, checks, error messages, tally) is records.ts, so a row reads the
 * same whichever engine read it. Both read the file's own bytes (decoding fields as utf8, latin1 or utf16le), so byte offsets are
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
import { StagecoachError } from '../../../contract/errors.js';
import type { SourceRowError } from '../../types.js';
import type { SourceCore } from '../feed-core.js';
import type { CsvEngine, HandOver } from './engine.js';
import { PhysicalLines } from './lines.js';
import { CsvParseEngine, csvParseMessage } from './parse-engine.js';
import { PLAIN_LINE_LIMIT, PlainLineEngine } from './plain-engine.js';
import { plainLinesPossible, recordDelimiterOf } from './plain-lines.js';
import { CsvRecords } from './records.js';
import type { CsvCoreOptions, CsvItem } from './types.js';

export type { CsvCoreOptions, CsvItem, CsvRange, CsvReadOutcome } from './types.js';

const LF_BYTE = 10;
const CR_BYTE = 13;

/**
 * One CSV input. Not reusable: push its chunks in order, then call `end` once.
 * @example const core = new CsvCore({ source: 's', file: 'f.csv', dialect }); const rows = [...core.push(buf), ...core.end()];
 */
export class CsvCore implements SourceCore<Buffer> {
  private readonly r: CsvRecords;
  private readonly fromStart: boolean;
  /** The input starts at the file's first byte, where a BOM may be. */
  private readonly bom: boolean;
  private readonly physical: PhysicalLines;
  private bomLeft: number; // BOM bytes not yet passed: not counted as a line's bytes
  /** Where the input starts: its file offset and line. */
  private readonly start: HandOver;

  /** The plain-line engine; none when plain lines cannot be read (UTF-16, a multi-byte delimiter) or are turned off. */
  private readonly plain: PlainLineEngine | undefined;
  /** The engine reading now; csv-parse's is started when it is first needed. */
  private engine: CsvEngine | undefined;
  /** The line before the last csv-parse engine's first one: csv-parse's messages count from there. */
  private parseLineBase = 0;
  /**
   * The input's start, held until its first line break shows whether lines end in CR CR LF
   * (csv-parse alone would take the first CR for the record delimiter, and start every record
   * after it with the LF): both engines then take CR CR LF whole. Undefined once known.
   */
  private head: Buffer | undefined;
  private done = false;

  constructor(o: CsvCoreOptions) {
    const r = (this.r = new CsvRecords(o));
    const d = o.dialect;
    const range = o.range;
    const wide = d.encoding.node === 'utf16le';
    this.fromStart = range === undefined || range.start === 0;
    this.bom = d.encoding.node !== 'latin1' && this.fromStart;
    this.physical = new PhysicalLines(wide);
    this.bomLeft = this.fromStart ? d.encoding.bomLength : 0;
    this.start = { at: range?.start ?? 0, line: (range ? range.line - 1 : 0) + 1 };
    if (o.plainLines !== false && !wide && plainLinesPossible(d)) this.engine = this.plain = new PlainLineEngine(r, this.bom, this.start);
    if (r.recordDelimiter === undefined && this.fromStart && !wide) this.head = Buffer.alloc(0);
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
    const r = this.r;
    if (!this.done) {
      this.guard(() => {
        this.read(undefined, true);
        this.engine?.end();
      });
      this.done = true;
    }
    this.engine?.close();
    this.engine = undefined;
    r.outcome.plainRecords = this.plain?.records ?? 0;
    this.physical.end();
    const t = r.o.tally;
    if (t) {
      t.physicalLines += this.physical.lines;
      t.blankLines += this.physical.blank;
    }
    if (r.columns === undefined && this.fromStart && r.pending.every((e) => (e as SourceRowError).code !== 'SOURCE_READ_FAILED')) {
      // Nothing at all, not even a header: an export that failed, not an empty one.
      r.pending.push({
        source: r.o.source,
        provenance: { file: r.o.file, line: 1, byteOffset: 0, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${r.o.file}:1: the file is empty, expected a header line naming the columns`,
      } satisfies SourceRowError);
      if (t) t.truncated ??= 'the file is empty: not even a header';
    } else if (t && this.fromStart && r.o.range?.end === undefined && t.rowsRead === 0 && !t.truncated) {
      t.truncated = r.d.header ? 'the file holds a header but no rows' : 'the file holds no rows';
    }
    return this.drain();
  }

  /** The input could not be read on (an I/O error): one SOURCE_READ_FAILED at where the rows stopped. */
  fail(err: unknown): CsvItem[] {
    if (!this.done) this.readFailed(err);
    return this.drain();
  }

  private drain(): CsvItem[] {
    const r = this.r;
    const batch = r.pending;
    r.pending = [];
    if (r.failure !== undefined) {
      const f = r.failure;
      r.failure = undefined;
      this.done = true;
      throw f;
    }
    return batch;
  }

  /** Counts the input's physical lines (the tally's independent count), past a BOM. */
  private count(chunk: Buffer): void {
    if (!this.r.o.tally) return;
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
        this.r.failure ??= err;
        return;
      }
      this.readFailed(err);
    }
  }

  private readFailed(err: unknown): void {
    const r = this.r;
    const line = r.prevEndLine + 1;
    r.outcome.endedAtRecord = false;
    this.done = true;
    r.pending.push({
      source: r.o.source,
      provenance: { file: r.o.file, line, byteOffset: r.prevEndByte, hash: '' },
      code: 'SOURCE_READ_FAILED',
      message: `${r.o.file}:${line}: the rest of the file cannot be read: ${csvParseMessage(err as Error, this.parseLineBase)}`,
    } satisfies SourceRowError);
    if (r.o.tally) r.o.tally.truncated ??= `the rest of the file from line ${line} cannot be read`;
  }

  /** csv-parse's engine, reading from `at` on. */
  private parseFrom(at: HandOver): CsvParseEngine {
    const engine = new CsvParseEngine(this.r, this.plain, this.bom, at);
    this.parseLineBase = engine.lineBase;
    return engine;
  }

  /**
   * Reads one chunk of input (or, with `last`, what is left). The plain-line engine reads until a
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
      if (recordDelimiterOf(head, this.r.d.quote.charCodeAt(0)) === '\r\r\n') this.r.recordDelimiter = '\r\r\n';
      data = head.length > 0 ? head : data;
    }
    for (;;) {
      const engine = (this.engine ??= this.parseFrom(this.start));
      const rest = engine.read(data, last);
      if (rest === undefined) return;
      // The engine stopped where the other one reads on.
      const at = engine.handOver();
      if (engine === this.plain) {
        this.engine = this.parseFrom(at);
      } else {
        engine.close();
        this.plain!.resume(at);
        this.engine = this.plain;
      }
      data = rest;
    }
  }
}
