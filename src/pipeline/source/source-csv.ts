/**
 * CSV source: one file in, `SourceRow`s and `SourceRowError`s out, in file order, streamed.
 *
 * Plain lines (no quote character, no line-break byte but their record delimiter) are split
 * natively (csv-plain-lines.ts); csv-parse reads from a line that is not plain until plain lines
 * follow again. Both read the file's own bytes (decoding fields as utf8, latin1 or utf16le), so
 * byte offsets are offsets in the file whatever the encoding. Line numbers come from where the
 * line breaks are in those bytes (LF, CRLF once, a lone CR), not from csv-parse's `info.lines`,
 * which counts a CRLF inside a quoted field, or a CRLF line in a file of LF lines, twice.
 * A row with the wrong number of columns, or one csv-parse cannot read (an unclosed quote),
 * becomes a `SourceRowError` and the file goes on.
 */
import { createReadStream } from 'node:fs';
import * as crypto from 'node:crypto';
import { parse, type CsvError, type Options, type Parser } from 'csv-parse';
import type { SourceRow, SourceRowError } from '../types.js';
import type { CsvOptions, SourceEncoding } from '../definition/schema.js';
import { StagecoachError } from '../../contract/errors.js';
import { detectEncoding, repairWindows1252, swap16Stream, textDefect, textDefectHint } from './encoding.js';
import { generated } from '../generated-code.js';
import { plainLinesPossible, plainTail, recordDelimiterOf, walkPlainLines, type PlainLineFormat } from './csv-plain-lines.js';

export interface CsvFileOptions {
  /** Source name (pipeline file). */
  source: string;
  /** Absolute path to read. */
  path: string;
  /** Path shown in provenance and messages. */
  file: string;
  encoding: SourceEncoding;
  csv: CsvOptions;
  /** Columns the mapping reads: a header without one of them is a configuration error. */
  requiredColumns?: ReadonlySet<string>;
  signal?: AbortSignal;
  /** Read only a byte range of the file, which starts where a record starts (parallel/read-parallel.ts). */
  range?: CsvRange;
  /** Filled in as the read goes: the columns, and how the last record ended (a range's check). */
  outcome?: CsvReadOutcome;
  /** Hash each row's fields into its provenance (default true); `plan`, which keeps no ledger, skips it. */
  hashRows?: boolean;
  /** Read plain lines without csv-parse (default true; csv-plain-lines.ts). Tests turn it off for a reference. */
  plainLines?: boolean;
  /** Bytes read at a time (default READ_BYTES); tests make it small so lines straddle reads. */
  readBytes?: number;
}

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

const RAW_LIMIT = 200;
const LF_BYTE = 10;
const CR_BYTE = 13;
/** Longest incomplete line the plain-line path holds while it waits for the line's end. */
const PLAIN_LINE_LIMIT = 1 << 20;
const FIELD_SEPARATOR = '\u001f';

/**
 * Bytes read at a time. A read's rows are made at once and wait to be mapped, so the more a read
 * holds, the more rows are alive at each scavenge: `run` at 200,000 persons promoted 172 MB with
 * 32 KiB reads and 124 MB with 16 KiB (scavenge pauses 1.13 against 0.92 s, `--trace-gc-nvp`).
 * csv-parse slows down on big chunks too. `plan` measured the same either way.
 */
const READ_BYTES = 16 * 1024;

/** sha256 (hex) of a row's fields in column order, joined by U+001F: quoting style does not count. */
export function hashFields(fields: readonly string[]): string {
  return sha256Hex(fields.join(FIELD_SEPARATOR));
}

// crypto.hash (Node ≥ 20.12) is the one-shot form: half the cost of createHash per row.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;
/** sha256 of a string (UTF-8), hex. */
export const sha256Hex: (text: string) => string = oneShot
  ? (text) => oneShot('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * A row's fields by column name, built by one object literal written for the header
 * (generated-code.ts; the names only ever appear as JSON string literals). A loop of
 * `values[columns[i]] = record[i]` is a keyed store V8 cannot specialise: 0.46 against 0.11 µs a
 * row for 15 columns. The loop remains where code generation is disallowed. Either way a name the
 * header repeats takes the later column's value.
 */
function valuesOf(columns: readonly string[], width: number): (record: string[]) => Record<string, unknown> {
  const fields = columns.slice(0, width).map((c, i) => `${JSON.stringify(c)}: r[${i}]`);
  return (
    generated<(record: string[]) => Record<string, unknown>>(['r'], `return { ${fields.join(', ')} };`) ??
    ((record) => {
      const values: Record<string, unknown> = {};
      for (let i = 0; i < width; i++) values[columns[i]!] = record[i];
      return values;
    })
  );
}

/**
 * Reads one CSV file.
 * @example for await (const row of readCsvFile({ source: 'klanten', path, file: 'klanten.csv', encoding: 'windows-1252', csv })) …
 */
export async function* readCsvFile(opts: CsvFileOptions): AsyncGenerator<SourceRow | SourceRowError> {
  for await (const batch of readCsvBatches(opts)) yield* batch;
}

/** Same as `readCsvFile`, in batches of the rows one file chunk completes (the fast path). */
export async function* readCsvBatches(opts: CsvFileOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { source, file, csv, range } = opts;
  const hashRows = opts.hashRows !== false;
  const enc = await detectEncoding(opts.path, file, opts.encoding);
  const repair = enc.repair1252;
  const fromStart = range === undefined || range.start === 0;

  let columns: string[] | undefined = range?.columns ?? (csv.header ? undefined : csv.columns);
  if (!csv.header && !columns)
    throw new StagecoachError('CONFIG_INVALID', `${file}: csv.header is false, so csv.columns must name the columns`, { file });
  let width = columns?.length ?? 0;

  // Position bookkeeping (see the module comment).
  // csv-parse counts bytes and lines from what it was given: from the range's start, or, once the
  // plain-line fast path hands over to it, from where that stopped.
  let byteBase = fromStart ? 0 : range.start;
  let lineBase = range ? range.line - 1 : 0;
  let prevEndLine = lineBase;
  let prevEndByte = fromStart ? enc.bomLength : range.start;
  let prevEmpty = 0;
  let recordDelimiterBytes = enc.node === 'utf16le' ? 2 : 1;

  const start = (p: Parser, info: { lines: number; bytes: number; empty_lines: number }) => {
    const empty = info.empty_lines - prevEmpty;
    const rd = p.options.record_delimiter;
    if (rd && rd.length > 0 && rd[0]) recordDelimiterBytes = (rd[0] as Buffer).length;
    const byteOffset = prevEndByte + empty * recordDelimiterBytes;
    return { line: lines.at(byteOffset), byteOffset, empty };
  };
  /** csv-parse's message, at the line of the file (or at `line`, where csv-parse's own count is off). */
  const csvParseMessage = (err: Error | undefined, line?: number) =>
    (err?.message ?? 'unknown error').replace(/\bat line (\d+)/, (_, n: string) => `at line ${line ?? Number(n) + lineBase}`);
  // After parser.end(), a refused record means the input stopped inside one (an unclosed quote).
  // A record completed then is normal: csv-parse holds a record back until it sees what follows.
  let ending = false;
  const outcome: CsvReadOutcome = opts.outcome ?? { endLine: 0, endByte: 0, endedAtRecord: true };
  const finish = (endLine: number, endByte: number) => {
    prevEndLine = endLine;
    prevEndByte = endByte;
    outcome.endLine = endLine;
    outcome.endByte = endByte;
  };

  // Rows go straight into this batch from the callbacks (never through the stream's readable
  // side): the input is read one file chunk at a time and the batch taken after each.
  let pending: (SourceRow | SourceRowError)[] = [];
  let failure: unknown;
  let toValues: ((record: string[]) => Record<string, unknown>) | undefined;
  // A plain line's text holds its fields and delimiters only: where no repair changes the fields
  // afterwards and the delimiter is clean, a defect in a field is one in the line, so the line is
  // looked at instead of the joined fields, which are then joined only for the row's hash.
  const lineShowsDefects = !repair && textDefect(csv.delimiter) === undefined;
  /** One record's fields, from csv-parse or the plain-line path (with its `text`), at its first line and byte. */
  const takeRecord = (record: string[], line: number, byteOffset: number, text?: string): void => {
    if (repair) for (let i = 0; i < record.length; i++) record[i] = repairWindows1252(record[i]!);
    if (record.length === 1 && record[0]!.trim() === '' && width !== 1) return; // a line of blanks
    if (columns === undefined) {
      columns = (csv.columns ?? record).map((c, i) => (i === 0 ? c.replace(/^\ufeff/, '') : c).trim());
      outcome.columns = columns;
      width = csv.columns?.length ?? record.length;
      if (csv.columns && csv.columns.length !== record.length) {
        failure = new StagecoachError(
          'CONFIG_INVALID',
          `${file}:${line}: csv.columns names ${csv.columns.length} columns but the header has ${record.length}`,
          { file, line },
        );
      }
      const missing = [...(opts.requiredColumns ?? [])].filter((c) => !columns!.includes(c) && !c.includes('.'));
      const headerDefect = csv.columns ? undefined : textDefect(record.join(FIELD_SEPARATOR));
      const doubled = [...(opts.requiredColumns ?? [])].filter((c) => columns!.indexOf(c) !== columns!.lastIndexOf(c));
      if (missing.length > 0 && headerDefect) {
        failure = new StagecoachError(
          'CONFIG_INVALID',
          `${file}:${line}: the header is not text in ${enc.name}: it holds ${headerDefect}; ${textDefectHint(headerDefect, enc.name)}; expected a header naming the columns ${missing.map((c) => JSON.stringify(c)).join(', ')}`,
          { file, line },
        );
      } else if (missing.length > 0) {
        // Not thrown: csv-parse would turn it into a stream error, reported a tick later.
        failure = new StagecoachError(
          'CONFIG_INVALID',
          `${file}:${line}: the mapping reads column${missing.length > 1 ? 's' : ''} ${missing.map((c) => JSON.stringify(c)).join(', ')} that the header lacks; expected one of ${columns.map((c) => JSON.stringify(c)).join(', ')}`,
          { file, line },
        );
      } else if (doubled.length > 0) {
        // Which of the two would the mapping read? Neither guess is safe.
        failure = new StagecoachError(
          'CONFIG_INVALID',
          `${file}:${line}: the header names column${doubled.length > 1 ? 's' : ''} ${doubled.map((c) => JSON.stringify(c)).join(', ')} more than once and the mapping reads ${doubled.length > 1 ? 'them' : 'it'}; rename the columns with csv.columns`,
          { file, line },
        );
      }
      return;
    }
    const checked = text !== undefined && lineShowsDefects ? text : undefined;
    const joined = hashRows || checked === undefined ? record.join(FIELD_SEPARATOR) : '';
    const provenance = { file, line, byteOffset, hash: hashRows ? sha256Hex(joined) : '' };
    if (record.length !== width) {
      pending.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${line}: wrong number of columns, expected ${width} (as the header), got ${record.length}`,
        raw: record.join(csv.delimiter).slice(0, RAW_LIMIT),
      } satisfies SourceRowError);
      return;
    }
    const defect = textDefect(checked ?? joined);
    if (defect) {
      const at2 = record.findIndex((f) => textDefect(f) !== undefined);
      pending.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${line}: column ${JSON.stringify(columns[at2] ?? String(at2 + 1))} holds ${defect}, expected text in ${enc.name}; ${textDefectHint(defect, enc.name)}`,
        raw: record.join(csv.delimiter).slice(0, RAW_LIMIT),
      } satisfies SourceRowError);
      return;
    }
    toValues ??= valuesOf(columns, width);
    pending.push({ source, values: toValues(record), provenance } satisfies SourceRow);
  };

  // The plain-line fast path (csv-plain-lines.ts) reads until a line that is not plain; csv-parse
  // reads from there, until it has ended a record and no quote follows in the chunk at hand, and
  // plain lines are read again after that record. UTF-16 is csv-parse's throughout.
  const plainAllowed = opts.plainLines !== false && enc.node !== 'utf16le' && plainLinesPossible(csv);
  let plain: PlainLineFormat | undefined;
  let plainOn = plainAllowed;
  let plainLost = false; // the record delimiter turned out to be one plain lines cannot have
  const Q = csv.quote.charCodeAt(0);
  /** The file's record delimiter is known (LF or CRLF): plain lines can be told from here on. */
  const adoptRecordDelimiter = (rd: '\n' | '\r\n'): PlainLineFormat => {
    recordDelimiter = rd;
    return (plain = { quote: csv.quote, crlf: rd === '\r\n' });
  };
  let plainRecords = 0;
  let recordDelimiter = range?.recordDelimiter;
  let carry: Buffer | undefined; // the incomplete last line of the input so far
  let carryAt = fromStart ? 0 : range.start; // its offset in the file
  let nextLine = lineBase + 1; // line of carry's first byte
  const bom = enc.node !== 'latin1' && fromStart;
  const D = csv.delimiter;
  let plainText: Buffer = Buffer.alloc(0);
  let plainBase = 0;
  /** A plain line: its text is [s, e) of `plainText`, the next line starts at `next`. */
  const takePlain = (s: number, e: number, next: number): void => {
    const line = nextLine++;
    if (s === e) return; // a blank line: csv-parse skips it too
    finish(line, plainBase + next);
    plainRecords++;
    const text = plainText.toString(enc.node, s, e);
    takeRecord(text.split(D), line, plainBase + s, text);
  };
  const takePlainLine = (s: number, e: number): void => takePlain(s, e, e + (plain!.crlf ? 2 : 1));
  /**
   * Reads the complete plain lines of `data` (at `dataAt` in the file) and returns the rest. At
   * the first line that is not plain it turns `plainOn` off: the rest is then csv-parse's.
   */
  const readPlain = (data: Buffer, dataAt: number, last: boolean): Buffer => {
    const handOver = (from: number): Buffer => {
      plainOn = false;
      carryAt = dataAt + from;
      prevEndLine = nextLine - 1;
      prevEndByte = dataAt + from;
      return data.subarray(from);
    };
    let from = 0;
    if (dataAt === 0 && bom) {
      // csv-parse strips a UTF-8 BOM, and reads on as UTF-16 after a UTF-16LE one.
      if (data.length < 3) return last ? handOver(0) : data;
      if (data[0] === 0xff && data[1] === 0xfe) return handOver(0);
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) from = 3;
    }
    let format = plain;
    if (!format) {
      const rd = recordDelimiter ?? recordDelimiterOf(data.subarray(from), Q);
      if (rd === undefined) {
        // Wait for the first line's end, unless a CR says it may be old-Mac CR lines (csv-parse's).
        const waiting =
          !last && data.indexOf(LF_BYTE, from) < 0 && data.indexOf(CR_BYTE, from) < 0 && data.length - from <= PLAIN_LINE_LIMIT;
        return waiting ? data : handOver(from);
      }
      format = adoptRecordDelimiter(rd);
    }
    plainText = data;
    plainBase = dataAt;
    const walked = walkPlainLines(data, from, format, takePlainLine);
    from = walked.at;
    // A line longer than the limit goes to csv-parse, which reads it without copying it again and again.
    if (walked.stopped || data.length - from > PLAIN_LINE_LIMIT) return handOver(from);
    if (last && from < data.length) {
      if (!plainTail(data, from, format)) return handOver(from);
      takePlain(from, data.length, data.length);
      from = data.length;
    }
    carryAt = dataAt + from;
    return data.subarray(from);
  };

  let parser: Parser | undefined;
  let parserAt = 0; // file offset of the next byte csv-parse is given
  // Lines of csv-parse's records, from where the line breaks are in the bytes it was given: its
  // own count takes a CRLF inside quotes, or a CRLF line in a file of LF lines, for two.
  let lines = new LineIndex(1, enc.node === 'utf16le');
  /** Gives csv-parse the next bytes of the input. */
  const feed = (p: Parser, bytes: Buffer): void => {
    lines.add(bytes, parserAt);
    p.write(bytes);
    parserAt += bytes.length;
  };
  let lastRecordEnd = -1; // file offset just past the last record csv-parse completed: a record boundary
  let skippedSince = false; // csv-parse refused a record after that one
  /** csv-parse, for the input from the file offset `at` on, at line `line`. */
  const startParser = (at: number, line: number): Parser => {
    byteBase = at;
    lineBase = line - 1;
    prevEmpty = 0;
    parserAt = at;
    lines = new LineIndex(line, enc.node === 'utf16le');
    lastRecordEnd = -1;
    skippedSince = false;
    const p: Parser = parse({
      delimiter: csv.delimiter,
      quote: csv.quote,
      escape: csv.quote,
      encoding: enc.node,
      bom: bom && at === 0,
      ...(recordDelimiter ? { record_delimiter: recordDelimiter } : {}),
      relax_column_count: true,
      // A quote inside a field that does not start with one (Jan"sen, "Sm"it) is a literal, as
      // spreadsheets read it. Without this, csv-parse stayed in quoting mode after skipping such a
      // row and swallowed the valid rows after it, up to the next quote, into one error.
      relax_quotes: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      on_skip: (err: CsvError | undefined) => {
        // A record csv-parse could not read: report it where it started, then go on.
        const info = p.info;
        const at = start(p, info);
        // At the end of the input it is an unclosed quote, which took every line after it.
        const end = ending ? parserAt : byteBase + info.bytes;
        const endLine = Math.max(at.line, lines.at(end - 1));
        finish(endLine, end);
        prevEmpty = info.empty_lines;
        skippedSince = true;
        if (ending) outcome.endedAtRecord = false;
        // An unclosed quote takes the lines after it into the same row: say which lines it holds.
        const span = endLine > at.line ? ` (lines ${at.line}–${endLine} read as one row)` : '';
        const error: SourceRowError = {
          source,
          provenance: { file, line: at.line, byteOffset: at.byteOffset, hash: '' },
          code: 'SOURCE_ROW_INVALID',
          message: `${file}:${at.line}: unreadable CSV row${span}: ${csvParseMessage(err, ending ? endLine : undefined)}`,
        };
        pending.push(error);
        return undefined;
      },
    } as Options);
    // A record csv-parse completed. Taken where the parser pushes it to its readable side rather
    // than through `on_record`: for `on_record` csv-parse builds an info object (two object
    // spreads) per record, a third of the parse's cost (7.1 against 4.8 µs a row, 200,000 rows).
    // `parser.info` is the same at both places.
    const push = p.push.bind(p);
    p.push = (record: unknown): boolean => {
      if (record === null) return push(null);
      const fields = record as string[];
      const info = p.info;
      const at = start(p, info);
      const end = byteBase + info.bytes;
      finish(Math.max(at.line, lines.at(end - 1)), end);
      prevEmpty = info.empty_lines;
      lastRecordEnd = prevEndByte;
      skippedSince = false;
      takeRecord(fields, at.line, at.byteOffset);
      return true;
    };
    p.on('error', (err) => (failure ??= err));
    return p;
  };

  // The input is driven by hand: each file chunk is read (plainly or by csv-parse), then every
  // record it completed is taken at once, so rows travel in batches (one await per chunk, not
  // per row) and the file is read no faster than the batches are taken.
  const input = createReadStream(opts.path, {
    highWaterMark: opts.readBytes ?? READ_BYTES,
    signal: opts.signal,
    ...(range ? { start: range.start, ...(range.end !== undefined ? { end: range.end - 1 } : {}) } : {}),
  });
  const body: AsyncIterable<Buffer> = enc.swap16 ? input.pipe(swap16Stream()) : input;
  const drain = (): (SourceRow | SourceRowError)[] => {
    const batch = pending;
    pending = [];
    return batch;
  };
  /** Reads one chunk of input (or, with `last`, what is left). */
  const read = (chunk: Buffer | undefined, last: boolean): void => {
    let data = chunk;
    for (;;) {
      if (plainOn) {
        const joined = carry === undefined ? data : data === undefined ? carry : Buffer.concat([carry, data]);
        carry = joined === undefined ? undefined : readPlain(joined, carryAt, last);
        if (plainOn) return;
        parser = startParser(carryAt, nextLine);
        data = carry;
        carry = undefined;
      }
      parser ??= startParser(carryAt, nextLine);
      if (data === undefined || data.length === 0) return;
      if (!plainAllowed || plainLost || last) {
        feed(parser, data);
        return;
      }
      data = parseUntilPlain(data);
      if (data === undefined) return;
    }
  };
  /**
   * Gives `data` to csv-parse up to where plain lines can be read again, and returns the rest
   * (undefined when csv-parse took it all). That is after a record csv-parse completed, when
   * the rest of `data` holds no quote: the record's end is a record boundary, so the lines after
   * it read the same either way, and what csv-parse holds of them is dropped and read again.
   * Past the last quote, csv-parse is given a line at a time, so that it hands back soon.
   * Not after a record it refused (that one would be reported twice).
   */
  const parseUntilPlain = (data: Buffer): Buffer | undefined => {
    const p = parser!;
    const dataAt = parserAt;
    const lastQuote = data.lastIndexOf(Q);
    let s = 0;
    while (s < data.length) {
      const lf = data.indexOf(LF_BYTE, Math.max(s, lastQuote));
      const e = lf < 0 ? data.length : lf + 1;
      feed(p, data.subarray(s, e));
      s = e;
      if (skippedSince || lastRecordEnd - dataAt <= lastQuote || failure !== undefined) continue;
      if (!plain) {
        // The record delimiter csv-parse found (it read the first line, which was not plain).
        const found = (p.options.record_delimiter as Buffer[] | undefined)?.[0]?.toString('latin1');
        if (found !== '\n' && found !== '\r\n') {
          plainLost = true; // old-Mac CR lines: csv-parse reads the rest
          if (s < data.length) feed(p, data.subarray(s));
          return undefined;
        }
        adoptRecordDelimiter(found);
      }
      p.destroy();
      parser = undefined;
      plainOn = true;
      carryAt = lastRecordEnd;
      nextLine = prevEndLine + 1;
      return data.subarray(lastRecordEnd - dataAt);
    }
    return undefined;
  };
  try {
    for await (const chunk of body) {
      read(chunk, false);
      const batch = drain();
      if (failure) throw failure;
      if (batch.length > 0) yield batch;
    }
    read(undefined, true);
    if (parser) {
      const p = parser;
      ending = true;
      p.end();
      await new Promise<void>((res) => {
        if (p.writableFinished || p.destroyed) return res();
        p.once('finish', () => res());
        p.once('close', () => res());
      });
    }
    outcome.plainRecords = plainRecords;
    const batch = drain();
    if (failure) throw failure;
    if (batch.length > 0) yield batch;
    if (columns === undefined && fromStart) {
      // Nothing at all, not even a header: an export that failed, not an empty one.
      yield [
        {
          source,
          provenance: { file, line: 1, byteOffset: 0, hash: '' },
          code: 'SOURCE_READ_FAILED',
          message: `${file}:1: the file is empty, expected a header line naming the columns`,
        } satisfies SourceRowError,
      ];
    }
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    if ((err as Error).name === 'AbortError') throw new StagecoachError('ABORTED', 'Reading stopped', { file }, { cause: err });
    const e = err as CsvError & { lines?: number };
    const line = prevEndLine + 1;
    outcome.endedAtRecord = false;
    yield [
      {
        source,
        provenance: { file, line, byteOffset: prevEndByte, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${file}:${line}: the rest of the file cannot be read: ${csvParseMessage(e)}`,
      } satisfies SourceRowError,
    ];
  } finally {
    input.destroy();
    parser?.destroy();
  }
}

/**
 * Where the line breaks are in a stretch of input given in order (LF, CRLF once, a lone CR), so
 * that the line of any later byte is known. Asked in order too, so it forgets the breaks behind.
 */
class LineIndex {
  private ends: number[] = []; // file offsets just past each break not yet passed
  private head = 0;
  private passed: number; // line of the first byte at `head`
  private pendingCr = -1; // offset of a CR that ended the last bytes (a break unless an LF follows)
  private oddByte = -1; // UTF-16: the first byte of a code unit the last bytes cut in two

  /**
   * @param line the line of the first byte that will be added
   * @param wide UTF-16LE: line breaks are code units, at even offsets from the first byte
   */
  constructor(
    line: number,
    private readonly wide = false,
  ) {
    this.passed = line;
  }

  add(bytes: Buffer, at: number): void {
    if (this.wide) {
      this.addWide(bytes, at);
      return;
    }
    if (this.pendingCr >= 0 && bytes[0] !== LF_BYTE) this.ends.push(this.pendingCr + 1);
    this.pendingCr = -1;
    let lf = bytes.indexOf(LF_BYTE);
    let cr = bytes.indexOf(CR_BYTE);
    while (lf >= 0 || cr >= 0) {
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        if (cr === bytes.length - 1) this.pendingCr = at + cr;
        else if (bytes[cr + 1] !== LF_BYTE) this.ends.push(at + cr + 1);
        cr = bytes.indexOf(CR_BYTE, cr + 1);
      } else {
        this.ends.push(at + lf + 1);
        lf = bytes.indexOf(LF_BYTE, lf + 1);
      }
    }
  }

  private addWide(bytes: Buffer, at: number): void {
    let i = 0;
    const unit = (lo: number, hi: number, end: number) => {
      const u = lo | (hi << 8);
      if (this.pendingCr >= 0 && u !== LF_BYTE) this.ends.push(this.pendingCr + 2);
      this.pendingCr = -1;
      if (u === LF_BYTE) this.ends.push(end);
      else if (u === CR_BYTE) this.pendingCr = end - 2;
    };
    if (this.oddByte >= 0 && bytes.length > 0) {
      unit(this.oddByte, bytes[0]!, at + 1);
      this.oddByte = -1;
      i = 1;
    }
    for (; i + 1 < bytes.length; i += 2) unit(bytes[i]!, bytes[i + 1]!, at + i + 2);
    if (i < bytes.length) this.oddByte = bytes[i]!;
  }

  /** The line of the byte at `offset` (never before the last one asked about). */
  at(offset: number): number {
    const ends = this.ends;
    let head = this.head;
    while (head < ends.length && ends[head]! <= offset) head++;
    this.passed += head - this.head;
    this.head = head;
    if (head > 4096) {
      ends.splice(0, head);
      this.head = 0;
    }
    return this.passed;
  }
}
