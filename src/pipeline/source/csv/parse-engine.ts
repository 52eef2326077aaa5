/**
 * The CSV core's csv-parse engine, through csv-parse's public stream API only (`write`, `end`,
 * `on_record`, `on_skip`, `info`, `options`). It reads from a line that is not plain until plain
 * lines follow again, then hands the input back to the plain-line engine (plain-engine.ts); it
 * reads everything when plain lines cannot be read at all (UTF-16, a multi-byte delimiter, old-Mac
 * CR lines). Its stream is written to synchronously and never pushes a record to its readable
 * side (`on_record` takes each record and answers null), so every record is in hand when `write`
 * returns. Line numbers come from where the line breaks are in the bytes (lines.ts), not from
 * csv-parse's `info.lines`.
 */
import { parse, type CsvError, type Info, type Options, type Parser } from 'csv-parse';
import type { SourceRowError } from '../../types.js';
import { csvParseOptions } from './dialect.js';
import type { CsvEngine, HandOver } from './engine.js';
import { LineIndex } from './lines.js';
import { quoteDefect, QuoteScanner, type QuoteDefect } from './quote-shape.js';
import type { PlainLineEngine } from './plain-engine.js';
import { plainLinesPossible } from './plain-lines.js';
import type { CsvRecords } from './records.js';

const LF_BYTE = 10;

/**
 * csv-parse's message, at the line of the file (or at `line`, where csv-parse's own count is off).
 * @param lineBase the line before csv-parse's first one
 */
export function csvParseMessage(err: Error | undefined, lineBase: number, line?: number): string {
  return (err?.message ?? 'unknown error').replace(/\bat line (\d+)/, (_, n: string) => `at line ${line ?? Number(n) + lineBase}`);
}

export class CsvParseEngine implements CsvEngine {
  private readonly parser: Parser;
  private parserAt: number; // file offset of the next byte csv-parse is given
  private readonly byteBase: number; // file offset and line before csv-parse's first byte
  readonly lineBase: number;
  private prevEmpty = 0; // csv-parse's empty-line count at the last record
  private readonly lines: LineIndex;
  private lastRecordEnd = -1; // file offset just past the last record csv-parse completed: a record boundary
  private skippedSince = false; // csv-parse refused a record after that one
  /** After `end()`, a refused record means the input stopped inside one (an unclosed quote). */
  private ending = false;
  /** The bytes given to csv-parse from the last record's end on (views, not copies): a record's own text. */
  private fed: { at: number; bytes: Buffer }[] = [];
  /** The quote's first byte in the input's encoding (a record without it has no quote to check). */
  private readonly quoteByte: number;

  /**
   * csv-parse, for the input from the file offset `at.at` on, at line `at.line`.
   * @param plain the plain-line engine to hand the input back to; none when plain lines cannot be read
   * @param bom the input starts at the file's first byte, where a BOM may be
   */
  constructor(
    private readonly r: CsvRecords,
    private plain: PlainLineEngine | undefined,
    bom: boolean,
    at: HandOver,
  ) {
    this.byteBase = at.at;
    this.lineBase = at.line - 1;
    this.parserAt = at.at;
    this.lines = new LineIndex(at.line, r.d.encoding.node === 'utf16le');
    this.quoteByte = Buffer.from(r.d.quote, r.d.encoding.node)[0]!;
    const options: Options = {
      ...csvParseOptions({ ...r.d, recordDelimiter: r.recordDelimiter }, bom && at.at === 0),
      on_record: (record: string[], info: Info) => {
        this.parsedRecord(record, info);
        return null; // taken here: nothing goes to the stream's readable side
      },
      on_skip: (err: CsvError | undefined) => {
        this.parsedSkip(err);
        return undefined;
      },
    };
    this.parser = parse(options);
    // An error csv-parse does not skip is taken from `errored` after each write (failed).
    this.parser.on('error', () => {});
  }

  read(data: Buffer | undefined, last: boolean): Buffer | undefined {
    if (data === undefined || data.length === 0) return undefined;
    if (!this.plain || last) {
      this.feed(data);
      return undefined;
    }
    return this.parseUntilPlain(data, this.plain);
  }

  handOver(): HandOver {
    // past the record's line, and past the empty line a CR CR LF's second CR makes
    return { at: this.lastRecordEnd, line: this.r.prevEndLine + (this.r.recordDelimiter === '\r\r\n' ? 2 : 1) };
  }

  end(): void {
    this.ending = true;
    this.parser.end(); // csv-parse flushes its last record synchronously
    this.failed();
  }

  close(): void {
    this.parser.destroy();
  }

  /** Where the record csv-parse is at starts: its first line and byte, past the empty lines before it. */
  private recordStart(info: Info): { line: number; byteOffset: number } {
    const empty = info.empty_lines - this.prevEmpty;
    this.prevEmpty = info.empty_lines;
    const rd = this.parser.options.record_delimiter;
    const rdBytes = rd && rd.length > 0 && rd[0] ? (rd[0] as Buffer).length : this.r.d.encoding.node === 'utf16le' ? 2 : 1;
    const byteOffset = this.r.prevEndByte + empty * rdBytes;
    return { line: this.lines.at(byteOffset), byteOffset };
  }

  /** A record csv-parse completed. */
  private parsedRecord(record: string[], info: Info): void {
    const r = this.r;
    const at = this.recordStart(info);
    const end = this.byteBase + info.bytes;
    // The row ends on the line of its delimiter's first byte: after CR CR LF, that is the line
    // before the empty one the second CR ends.
    const endLine = Math.max(at.line, this.lines.at(end - (r.recordDelimiter === '\r\r\n' ? 3 : 1)));
    r.finish(endLine, end);
    this.lastRecordEnd = end;
    this.skippedSince = false;
    r.takeRecord(record, at.line, endLine, at.byteOffset, undefined, this.quoteDefectIn(at.byteOffset, end));
  }

  /** The first malformed quote of the record in bytes [start, end) of the file (quote-shape.ts). */
  private quoteDefectIn(start: number, end: number): QuoteDefect | undefined {
    const parts = this.recordBytes(start, end);
    if (!parts.some((p) => p.includes(this.quoteByte))) return undefined;
    const d = this.r.d;
    const wide = d.encoding.node === 'utf16le';
    if (!wide && !plainLinesPossible(d)) return quoteDefect(Buffer.concat(parts).toString(d.encoding.node), d.delimiter, d.quote);
    // scanned in place: a quoted field of many megabytes is not copied again
    const scanner = new QuoteScanner(d.delimiter.charCodeAt(0), d.quote.charCodeAt(0), wide);
    for (const p of parts) scanner.push(p);
    return scanner.defect;
  }

  /**
   * Keeps a view of bytes given to csv-parse. Pieces of one chunk given a line at a time
   * (parseUntilPlain) join into one view: a million short lines are not a million views.
   */
  private remember(bytes: Buffer): void {
    const last = this.fed.at(-1);
    if (last && last.bytes.buffer === bytes.buffer && last.bytes.byteOffset + last.bytes.length === bytes.byteOffset) {
      last.bytes = Buffer.from(bytes.buffer, last.bytes.byteOffset, last.bytes.length + bytes.length);
      return;
    }
    this.fed.push({ at: this.parserAt, bytes });
  }

  /** The views of bytes [start, end) among those fed; forgets the ones before `start`. */
  private recordBytes(start: number, end: number): Buffer[] {
    const fed = this.fed;
    let drop = 0;
    while (drop < fed.length && fed[drop]!.at + fed[drop]!.bytes.length <= start) drop++;
    if (drop > 0) fed.splice(0, drop);
    const parts: Buffer[] = [];
    for (const c of fed) {
      if (c.at >= end) break;
      parts.push(c.bytes.subarray(Math.max(start - c.at, 0), Math.min(end - c.at, c.bytes.length)));
    }
    return parts;
  }

  /** A record csv-parse could not read: reported where it started, then the file goes on. */
  private parsedSkip(err: CsvError | undefined): void {
    const r = this.r;
    const info = this.parser.info;
    const at = this.recordStart(info);
    // At the end of the input it is an unclosed quote, which took every line after it.
    const end = this.ending ? this.parserAt : this.byteBase + info.bytes;
    const endLine = Math.max(at.line, this.lines.at(end - (!this.ending && r.recordDelimiter === '\r\r\n' ? 3 : 1)));
    r.finish(endLine, end);
    this.recordBytes(end, end); // what a refused record held is no longer needed
    this.skippedSince = true;
    if (this.ending) r.outcome.endedAtRecord = false;
    const t = r.o.tally;
    if (t) t.linesInRows += endLine - at.line + 1;
    if (this.ending && t) t.truncated ??= `the file ends inside a quoted value opened on line ${at.line}`;
    const { file, source } = r.o;
    if (this.ending && endLine === at.line) {
      r.rowError({
        source,
        provenance: { file, line: at.line, byteOffset: at.byteOffset, hash: '' },
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${at.line}: a quote opened on line ${at.line} is not closed before the file ends`,
      } satisfies SourceRowError);
      return;
    }
    if (endLine > at.line) {
      r.swallowed(at.line, endLine, at.byteOffset, this.ending, this.ending ? undefined : csvParseMessage(err, this.lineBase));
      return;
    }
    r.rowError({
      source,
      provenance: { file, line: at.line, byteOffset: at.byteOffset, hash: '' },
      code: 'SOURCE_ROW_INVALID',
      message: `${file}:${at.line}: unreadable CSV row: ${csvParseMessage(err, this.lineBase, this.ending ? endLine : undefined)}`,
    } satisfies SourceRowError);
  }

  /** Gives csv-parse the next bytes of the input. */
  private feed(bytes: Buffer): void {
    this.lines.add(bytes, this.parserAt);
    this.remember(bytes);
    this.parser.write(bytes);
    this.parserAt += bytes.length;
    this.failed();
  }

  /** csv-parse stopped with an error it does not skip: the rest of the input cannot be read. */
  private failed(): void {
    const err = this.parser.errored;
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
  private parseUntilPlain(data: Buffer, plain: PlainLineEngine): Buffer | undefined {
    const dataAt = this.parserAt;
    const lastQuote = data.lastIndexOf(this.r.d.quote.charCodeAt(0));
    let s = 0;
    while (s < data.length) {
      const lf = data.indexOf(LF_BYTE, Math.max(s, lastQuote));
      const e = lf < 0 ? data.length : lf + 1;
      this.feed(data.subarray(s, e));
      s = e;
      if (this.skippedSince || this.lastRecordEnd - dataAt <= lastQuote || this.r.failure !== undefined) continue;
      if (!plain.knowsLines) {
        // The record delimiter csv-parse found (it read the first line, which was not plain).
        const found = (this.parser.options.record_delimiter as Buffer[] | undefined)?.[0]?.toString('latin1');
        if (found !== '\n' && found !== '\r\n') {
          this.plain = undefined; // old-Mac CR lines: csv-parse reads the rest
          if (s < data.length) this.feed(data.subarray(s));
          return undefined;
        }
        plain.adopt(found);
      }
      return data.subarray(this.lastRecordEnd - dataAt);
    }
    return undefined;
  }
}
