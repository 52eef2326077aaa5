/**
 * The CSV core's plain-line engine: it reads plain lines (plain-lines.ts) natively, and at the
 * first line that is not plain hands the rest of the input to csv-parse (parse-engine.ts), which
 * hands it back after a record it completed when no quote follows.
 */
import type { CsvEngine, HandOver } from './engine.js';
import {
  plainLineFormat,
  plainTail,
  recordDelimiterOf,
  walkPlainLines,
  type PlainLineFormat,
  type RecordDelimiter,
} from './plain-lines.js';
import type { CsvRecords } from './records.js';

const LF_BYTE = 10;
const CR_BYTE = 13;
/** Longest incomplete line the plain-line engine holds while it waits for the line's end. */
export const PLAIN_LINE_LIMIT = 1 << 20;

export class PlainLineEngine implements CsvEngine {
  /** The format of plain lines, once the record delimiter is known. */
  private format: PlainLineFormat | undefined;
  private carry: Buffer | undefined; // the incomplete last line of the input so far
  private carryAt: number; // its offset in the file
  private nextLine: number; // line of carry's first byte
  private text: Buffer = Buffer.alloc(0); // the bytes being walked, at `base` in the file
  private base = 0;
  /** Records read here rather than by csv-parse. */
  records = 0;

  /**
   * @param r where the records go
   * @param bom the input starts at the file's first byte, where a BOM may be
   * @param at the file offset and line of the input's first byte
   */
  constructor(
    private readonly r: CsvRecords,
    private readonly bom: boolean,
    at: HandOver,
  ) {
    this.carryAt = at.at;
    this.nextLine = at.line;
  }

  /** Whether the record delimiter is known, so plain lines can be told. */
  get knowsLines(): boolean {
    return this.format !== undefined;
  }

  /** The file's record delimiter is known (LF, CRLF, CR CR LF): plain lines can be told from here on. */
  adopt(rd: RecordDelimiter): PlainLineFormat {
    this.r.recordDelimiter = rd;
    return (this.format = plainLineFormat(this.r.d.quote, rd));
  }

  /** csv-parse hands the input back at a record boundary. */
  resume(at: HandOver): void {
    this.carryAt = at.at;
    this.nextLine = at.line;
  }

  read(data: Buffer | undefined, last: boolean): Buffer | undefined {
    const carry = this.carry;
    const joined = carry === undefined ? data : data === undefined ? carry : Buffer.concat([carry, data]);
    this.carry = undefined;
    return joined === undefined ? undefined : this.readPlain(joined, this.carryAt, last);
  }

  handOver(): HandOver {
    return { at: this.carryAt, line: this.nextLine };
  }

  end(): void {} // `read(undefined, true)` took the last line

  close(): void {}

  /** A plain line: its text is [s, e) of `text`, the next line starts at `next`. */
  private take(s: number, e: number, next: number): void {
    const r = this.r;
    const line = this.nextLine;
    // CR CR LF ends two physical lines (a lone CR ends one, lines.ts): the row's, and an empty one
    this.nextLine += r.recordDelimiter === '\r\r\n' && next > e ? 2 : 1;
    if (s === e) return; // a blank line: csv-parse skips it too
    r.finish(line, this.base + next);
    this.records++;
    const keyAt = r.keyAt;
    const d = r.d;
    if (keyAt >= 0 && r.columns !== undefined && !d.encoding.repair1252) {
      // Key-only: just the key's field is decoded.
      const D = d.delimiter.charCodeAt(0);
      const buf = this.text;
      let f = s;
      for (let k = 0; k < keyAt && f >= 0; k++) {
        const at = buf.indexOf(D, f);
        f = at >= 0 && at < e ? at + 1 : -1;
      }
      if (f < 0 || ((buf[s] === 32 || buf[s] === 9) && r.width !== 1 && blankBytes(buf, s, e))) return;
      const to = buf.indexOf(D, f);
      r.o.keys!.take(buf.toString(d.encoding.node, f, to >= 0 && to < e ? to : e));
      return;
    }
    const text = this.text.toString(d.encoding.node, s, e);
    r.takeRecord(text.split(d.delimiter), line, line, this.base + s, text);
  }

  /**
   * Reads the complete plain lines of `data` (at `dataAt` in the file) and keeps the rest. At
   * the first line that is not plain it returns the rest from there: csv-parse's.
   */
  private readPlain(data: Buffer, dataAt: number, last: boolean): Buffer | undefined {
    const r = this.r;
    const handOver = (from: number): Buffer => {
      this.carryAt = dataAt + from;
      r.prevEndLine = this.nextLine - 1;
      r.prevEndByte = dataAt + from;
      return data.subarray(from);
    };
    const keep = (from: number): undefined => {
      this.carry = from === 0 ? data : data.subarray(from);
      return undefined;
    };
    let from = 0;
    if (dataAt === 0 && this.bom) {
      // csv-parse strips a UTF-8 BOM, and reads on as UTF-16 after a UTF-16LE one.
      if (data.length < 3) return last ? handOver(0) : keep(0);
      if (data[0] === 0xff && data[1] === 0xfe) return handOver(0);
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) from = 3;
    }
    let format = this.format;
    if (!format) {
      const rd = r.recordDelimiter ?? recordDelimiterOf(data.subarray(from), r.d.quote.charCodeAt(0));
      if (rd === undefined) {
        // Wait for the first line's end, unless a CR says it may be old-Mac CR lines (csv-parse's).
        const waiting =
          !last && data.indexOf(LF_BYTE, from) < 0 && data.indexOf(CR_BYTE, from) < 0 && data.length - from <= PLAIN_LINE_LIMIT;
        return waiting ? keep(0) : handOver(from);
      }
      format = this.adopt(rd);
    }
    this.text = data;
    this.base = dataAt;
    const step = format.crs + 1;
    const walked = walkPlainLines(data, from, format, (s, e) => this.take(s, e, e + step));
    from = walked.at;
    // A line longer than the limit goes to csv-parse, which reads it without copying it again and again.
    if (walked.stopped || data.length - from > PLAIN_LINE_LIMIT) return handOver(from);
    if (last && from < data.length) {
      if (!plainTail(data, from, format)) return handOver(from);
      this.take(from, data.length, data.length);
      from = data.length;
    }
    this.carryAt = dataAt + from;
    return keep(from);
  }
}

/** Whether bytes [s, e) are all spaces and tabs (a line of blanks, which is no record). */
function blankBytes(buf: Buffer, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (buf[i] !== 32 && buf[i] !== 9) return false;
  return true;
}
