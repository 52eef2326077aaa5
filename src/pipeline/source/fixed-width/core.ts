/**
 * Fixed-width core, pure (decoded text in, rows and row errors out, no I/O; fed by feed-core.ts,
 * as the CSV and JSON cores): one record a line, each column at a declared position (1-based
 * start, length), as mainframe and core-banking exports come. The first `header` lines are not records; blank lines are skipped; a line of
 * another length than the record's is a row error naming file:line and both lengths, and the
 * file goes on. Lines end at LF, CRLF or a lone CR, exactly as the tally's line counter sees
 * them, so the independent count (physical and blank lines) is comparable line for line.
 * A file with no record, or whose last line stops short without a line break, is a read failure
 * (the export was cut off), named at file:line and set in `tally.truncated`.
 */
import type { SourceRow, SourceRowError } from '../../types.js';
import type { FixedWidthOptions } from './options.js';
import { StagecoachError } from '../../../contract/errors.js';
import { textDefect, textDefectHint } from '../encoding.js';
import { rowHash } from '../row-hash.js';
import { afterBom, byteLength, type DecodedChunk } from '../decoded-text.js';
import { feedCore, type SourceCore } from '../feed-core.js';
import { isBlankLine, newTally, PhysicalLineCounter, type SourceTally } from '../tally.js';

export interface FixedWidthCoreOptions {
  source: string;
  /** The file as shown in provenance and messages. */
  file: string;
  fixedWidth: FixedWidthOptions;
  /** Columns the mapping reads: one the layout does not declare is a configuration error. */
  requiredColumns?: ReadonlySet<string>;
  /** Hash each line into its provenance (default true). */
  hashRows?: boolean;
  tally?: SourceTally;
}

const RAW_LIMIT = 200;

/** Characters in a record: declared, or where the last column ends. */
export function recordLength(o: FixedWidthOptions): number {
  return o.length ?? Math.max(...o.columns.map((c) => c.start + c.length - 1));
}

/** A record's values by the layout's column names (trimmed when the layout says so). */
export function fixedWidthFields(text: string, fixedWidth: FixedWidthOptions): Record<string, string> {
  const values: Record<string, string> = {};
  for (const c of fixedWidth.columns) {
    const v = text.slice(c.start - 1, c.start - 1 + c.length);
    values[c.name] = fixedWidth.trim ? v.trim() : v;
  }
  return values;
}

/**
 * The records of a fixed-width text, in batches (the lines each chunk completes).
 * @example for await (const batch of fixedWidthBatches(textChunks('0001Jan \n0002Piet\n'), { source: 'klanten', file: 'k.txt',
 *            fixedWidth: { columns: [{ name: 'nr', start: 1, length: 4 }, { name: 'naam', start: 5, length: 4 }], header: 0, trim: true } })) …
 *          // [{ values: { nr: '0001', naam: 'Jan' } }, { values: { nr: '0002', naam: 'Piet' } }]
 */
export async function* fixedWidthBatches(
  chunks: Iterable<DecodedChunk> | AsyncIterable<DecodedChunk>,
  opts: FixedWidthCoreOptions,
): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  // Made at the first batch asked for, as the reading starts: a layout without a column the mapping reads throws there.
  yield* feedCore(new FixedWidthCore(opts), chunks);
}

type Item = SourceRow | SourceRowError;

/**
 * One fixed-width input, fed by `feedCore`: decoded text in, the records of the lines each
 * chunk completes out. Not reusable: push the chunks in order, then `end` once.
 */
export class FixedWidthCore implements SourceCore<DecodedChunk> {
  private readonly o: FixedWidthCoreOptions;
  private readonly tally: SourceTally;
  private readonly hashRows: boolean;
  /** Characters in a record. */
  private readonly expected: number;
  private readonly counter = new PhysicalLineCounter();
  private line = 1;
  /** Byte offset of the line being read; -1 until the first chunk (a byte-order mark) is seen. */
  private byteOffset = -1;
  /** The start of a line the last chunk did not finish. */
  private carry = '';
  private enc: DecodedChunk['enc'] | undefined;
  /** With a trailer, each line waits for the next before it is read as a record: the last one is the trailer. */
  private held: [text: string, at: number, offset: number] | undefined;

  constructor(opts: FixedWidthCoreOptions) {
    const { source, file, fixedWidth } = opts;
    this.o = opts;
    this.tally = opts.tally ?? newTally(source, file, 'fixed-width');
    this.hashRows = opts.hashRows !== false;
    this.expected = recordLength(fixedWidth);
    const names = fixedWidth.columns.map((c) => c.name);
    for (const name of opts.requiredColumns ?? []) {
      if (!names.includes(name))
        throw new StagecoachError(
          'CONFIG_INVALID',
          `${file}: the mapping reads column ${JSON.stringify(name)}, expected it among fixedWidth.columns (${names.join(', ')})`,
          { file, field: name },
        );
    }
  }

  push(chunk: DecodedChunk): Item[] {
    const enc = (this.enc = chunk.enc);
    let text = chunk.text;
    if (this.byteOffset < 0) ({ text, byteOffset: this.byteOffset } = afterBom(text, enc));
    this.counter.push(text);
    text = this.carry + text;
    this.carry = '';
    const batch: Item[] = [];
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 13 && i === text.length - 1) break; // a CR at the chunk's end: its LF may follow
      const end = c === 13 && text.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
      const row = this.emit(text.slice(from, i), this.line, this.byteOffset);
      if (row) batch.push(row);
      this.byteOffset += byteLength(text.slice(from, end), enc);
      this.line++;
      from = end;
      i = end - 1;
    }
    this.carry = text.slice(from);
    return batch;
  }

  end(): Item[] {
    const { source, file, fixedWidth } = this.o;
    const { tally, carry, line, byteOffset, expected } = this;
    const out: Item[] = [];
    this.counter.end(tally);
    if (carry.endsWith('\r')) {
      const row = this.emit(carry.slice(0, -1), line, byteOffset);
      if (row) out.push(row);
    } else if (carry !== '' && fixedWidth.trailer) {
      const row = this.emit(carry, line, byteOffset);
      if (row) out.push(row);
    } else if (carry !== '') {
      const row = this.record(carry, line, byteOffset);
      if (row && 'code' in row && carry.length < expected && line > fixedWidth.header) {
        tally.truncated = `the file ends inside the record on its last line (${line}), ${carry.length} of ${expected} characters: the export looks cut off`;
        out.push({
          ...row,
          code: 'SOURCE_READ_FAILED',
          message: `${file}:${line}: the file ends inside a record, ${carry.length} characters long, expected ${expected} and a line break; the export looks cut off`,
        });
        return out;
      }
      if (row) out.push(row);
    }
    if (fixedWidth.trailer) {
      const held = this.held;
      const failure = trailerFailure(held, fixedWidth, tally.rowsRead, file);
      if (held) tally.headerLines++;
      if (failure) {
        tally.truncated = failure.why;
        out.push({
          source,
          provenance: { file, line: held?.[1] ?? line, byteOffset: held?.[2] ?? 0, hash: '' },
          code: 'SOURCE_READ_FAILED',
          message: failure.message,
        });
        return out;
      }
    }
    if (tally.rowsRead === 0) {
      const what =
        tally.physicalLines === 0
          ? 'the file is empty'
          : `the file holds ${tally.physicalLines} line${tally.physicalLines === 1 ? '' : 's'} and no record`;
      tally.truncated = `${what}: no rows`;
      out.push({
        source,
        provenance: { file, line: 1, byteOffset: 0, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${file}:1: ${what}, expected one record a line after ${fixedWidth.header} header line${fixedWidth.header === 1 ? '' : 's'}; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
      });
    }
    return out;
  }

  /** Nothing to name as rows: a read failure is already decodedChunks' SOURCE_READ_FAILED, so anything else is a defect. */
  fail(err: unknown): Item[] {
    throw err;
  }

  private emit(text: string, at: number, offset: number): Item | undefined {
    if (!this.o.fixedWidth.trailer || at <= this.o.fixedWidth.header || isBlankLine(text)) return this.record(text, at, offset);
    const previous = this.held;
    this.held = [text, at, offset];
    return previous ? this.record(...previous) : undefined;
  }

  private record(text: string, at: number, offset: number): Item | undefined {
    const { source, file, fixedWidth } = this.o;
    const tally = this.tally;
    if (at <= fixedWidth.header) {
      tally.headerLines++;
      return undefined;
    }
    if (isBlankLine(text)) return undefined;
    const provenance = { file, line: at, byteOffset: offset, hash: this.hashRows ? rowHash(text) : '' };
    tally.rowsRead++;
    tally.linesInRows++;
    if (text.length !== this.expected) {
      tally.rowErrors++;
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${at}: the record is ${text.length} characters long, expected ${this.expected} (the fixed-width layout)`,
        raw: text.slice(0, RAW_LIMIT),
      };
    }
    const defect = textDefect(text);
    if (defect) {
      tally.rowErrors++;
      const name = this.enc?.name ?? 'utf-8';
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${at}: the record holds ${defect}, expected text in ${name}; ${textDefectHint(defect, name)}`,
        raw: text.slice(0, RAW_LIMIT),
      };
    }
    return { source, values: fixedWidthFields(text, fixedWidth), provenance };
  }
}

/** What is wrong with a file's trailer: missing, or stating another record count than was read. */
function trailerFailure(
  held: [string, number, number] | undefined,
  o: FixedWidthOptions,
  read: number,
  file: string,
): { why: string; message: string } | undefined {
  if (!held)
    return {
      why: 'no trailer line',
      message: `${file}: no trailer line, expected one after the records (fixedWidth.trailer); the export looks cut off`,
    };
  const count = o.trailer?.count;
  if (!count) return undefined;
  const [text, at] = held;
  const stated = text.slice(count.start - 1, count.start - 1 + count.length).trim();
  if (!/^\d+$/.test(stated))
    return {
      why: `the trailer states no record count`,
      message: `${file}:${at}: the trailer holds no record count at ${count.start}-${count.start + count.length - 1}, expected digits, got \`${stated}\``,
    };
  if (Number(stated) === read) return undefined;
  return {
    why: `the trailer states ${Number(stated)} records, ${read} were read`,
    message: `${file}:${at}: the trailer states ${Number(stated)} records, expected the ${read} records read; the export looks cut off or padded`,
  };
}
