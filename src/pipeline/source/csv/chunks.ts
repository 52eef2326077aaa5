/**
 * Splits a CSV file into byte ranges that each start where a record starts, so that several
 * threads can parse, map and check one file at once (parallel/read-parallel.ts).
 *
 * A record boundary is a line break outside quotes, and whether a line break is inside quotes
 * depends on everything before it, so the file is scanned once from its start. The scan only
 * jumps between quotes and line feeds with `Buffer.indexOf` (native), so it runs far ahead of
 * the parsers: it is not a parser, and it does not need to be exact. It reads CSV simply
 * (a quote opens a field only at the field's start; a doubled quote inside
 * one is a literal); where csv-parse would read a file otherwise (a stray quote it treats
 * differently, a lone CR), the range's reader notices that its range did not end at a record,
 * and the caller reads on from the last good boundary on one thread. A range is cut only between
 * two non-blank lines, so a range's last record ends exactly at its end.
 */
import { createReadStream } from 'node:fs';
import type { ResolvedEncoding } from '../encoding.js';

export interface CsvChunk {
  /** Byte range [start, end); `end` is absent for the file's last range. */
  start: number;
  end?: number;
  /** Line of `start` (1-based), counting line breaks as the CSV reader does. */
  line: number;
}

export interface SplitCsvOptions {
  path: string;
  enc: ResolvedEncoding;
  delimiter: string;
  quote: string;
  /** Aim for ranges this large (the first one is an eighth of it, so a header comes back soon). */
  chunkBytes: number;
  signal?: AbortSignal | undefined;
}

export interface CsvSplit {
  recordDelimiter: '\n' | '\r\n';
  chunks: AsyncGenerator<CsvChunk>;
}

const LF = 10;
const CR = 13;

/**
 * Looks at the first line for the record delimiter; undefined when the file cannot be split
 * (UTF-16, or old-Mac lone CR line ends: those are read on one thread).
 * @example const split = await splitCsv({ path, enc, delimiter: ';', quote: '"', chunkBytes: 1 << 20 });
 *          for await (const c of split.chunks) …
 */
export async function splitCsv(opts: SplitCsvOptions): Promise<CsvSplit | undefined> {
  if (opts.enc.node === 'utf16le') return undefined;
  const recordDelimiter = await firstLineEnd(opts);
  if (recordDelimiter === undefined) return undefined;
  return { recordDelimiter, chunks: scanChunks(opts, recordDelimiter) };
}

/** The first line end outside quotes: LF or CRLF (undefined for a lone CR). */
async function firstLineEnd(opts: SplitCsvOptions): Promise<'\n' | '\r\n' | undefined> {
  const Q = opts.quote.charCodeAt(0);
  const D = opts.delimiter.charCodeAt(0);
  let inQuotes = false;
  let prev = LF;
  const input = createReadStream(opts.path, { start: opts.enc.bomLength, highWaterMark: 64 * 1024, signal: opts.signal });
  try {
    for await (const buf of input as AsyncIterable<Buffer>) {
      for (let i = 0; i < buf.length; i++) {
        const b = buf[i]!;
        if (inQuotes) {
          if (b === Q) {
            if (buf[i + 1] === Q)
              i++; // a doubled quote
            else inQuotes = false;
          }
        } else if (prev === CR) {
          return b === LF ? '\r\n' : undefined;
        } else if (b === LF) {
          return '\n';
        } else if (b === Q && (prev === D || prev === LF)) {
          inQuotes = true;
        }
        prev = b;
      }
    }
  } finally {
    input.destroy();
  }
  return '\n'; // one line without an end: one range anyway
}

async function* scanChunks(opts: SplitCsvOptions, recordDelimiter: '\n' | '\r\n'): AsyncGenerator<CsvChunk> {
  const Q = opts.quote.charCodeAt(0);
  const D = opts.delimiter.charCodeAt(0);
  const crlf = recordDelimiter === '\r\n';
  let inQuotes = false;
  let pendingQuote = false; // a quote ended the last block inside a quoted field
  let lastByte = LF; // the byte before the block: a field starts after D, LF or CR
  let chunkStart = 0;
  let chunkLine = 1;
  let lines = 1; // line of the scan position
  let target = Math.max(1, opts.chunkBytes >> 3);
  let base = opts.enc.bomLength;
  const input = createReadStream(opts.path, { start: base, highWaterMark: 1024 * 1024, signal: opts.signal });
  try {
    for await (const buf of input as AsyncIterable<Buffer>) {
      const n = buf.length;
      let i = 0;
      let counted = 0; // line feeds counted up to here in this block
      if (pendingQuote) {
        pendingQuote = false;
        if (buf[0] === Q)
          i = 1; // a doubled quote split over two blocks: still quoting
        else inQuotes = false;
      }
      let nextQ = -2;
      while (i < n) {
        if (inQuotes) {
          const q = buf.indexOf(Q, i);
          if (q < 0) break;
          if (q + 1 === n) {
            pendingQuote = true;
            i = n;
            break;
          }
          if (buf[q + 1] === Q) i = q + 2;
          else {
            inQuotes = false;
            i = q + 1;
          }
          continue;
        }
        const lf = buf.indexOf(LF, i);
        if (nextQ < i && nextQ !== -1) nextQ = buf.indexOf(Q, i);
        if (nextQ >= 0 && (lf < 0 || nextQ < lf)) {
          const before = nextQ === 0 ? lastByte : buf[nextQ - 1];
          if (before === D || before === LF || before === CR) inQuotes = true;
          i = nextQ + 1;
          continue;
        }
        if (lf < 0) break;
        const end = base + lf + 1;
        const next = lf + 1 < n ? buf[lf + 1] : undefined;
        // The line ending here must hold a record (not be blank) and the next one must not be blank:
        // blank lines belong to no record, and a range must end where its last record ends.
        const lineEnd = crlf ? lf - 1 : lf;
        const ended = lineEnd > 0 && (!crlf || buf[lineEnd] === CR) && buf[lineEnd - 1] !== LF;
        if (end - chunkStart >= target && ended && next !== undefined && next !== LF && next !== CR) {
          lines += countLineBreaks(buf, counted, lf + 1);
          counted = lf + 1;
          yield { start: chunkStart, end, line: chunkLine };
          chunkStart = end;
          chunkLine = lines;
          target = opts.chunkBytes;
        }
        i = lf + 1;
      }
      lines += countLineBreaks(buf, counted, n);
      if (n > 0) lastByte = buf[n - 1]!;
      base += n;
    }
  } finally {
    input.destroy();
  }
  yield { start: chunkStart, line: chunkLine };
}

/** Line breaks as the CSV reader counts them: LF, CRLF once, and a lone CR (inside a quoted field). */
function countLineBreaks(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let p = buf.indexOf(LF, from); p !== -1 && p < to; p = buf.indexOf(LF, p + 1)) n++;
  for (let p = buf.indexOf(CR, from); p !== -1 && p < to; p = buf.indexOf(CR, p + 1)) if (buf[p + 1] !== LF && p + 1 < buf.length) n++;
  return n;
}
