/**
 * The key pass over a CSV file: the values of one column, nothing else, at a fraction of a full
 * parse. A byte-level scanner that knows just enough CSV for that (delimiter, quote, doubled
 * quotes, quoted line breaks, CRLF/LF/CR, blank lines); it does not check column counts, so a row
 * the real reader later refuses still lends its key to the set. The set only answers "does some
 * row hold this key" for the missing-relation check; duplicates and every row error come from
 * the real reader in the second pass.
 * UTF-16 files are not scanned here (the caller reads them with the real reader instead).
 *
 * Only the key's field is looked at byte by byte. Past it, and inside quotes, the scanner jumps
 * with `Buffer.indexOf` to the next byte that can change its state (a quote, CR or LF): the pass
 * over 1,000,000 persons went from 1.1–1.2 s to 0.3–0.4 s (three rounds each).
 */
import { createReadStream } from 'node:fs';
import { StagecoachError } from '../../contract/errors.js';
import { repairWindows1252, type ResolvedEncoding } from './encoding.js';

export interface ScanCsvKeysOptions {
  path: string;
  file: string;
  enc: ResolvedEncoding;
  delimiter: string;
  quote: string;
  /** Header row present (its names give the column's position). */
  header: boolean;
  /** Column names when given in the pipeline (no header, or renamed). */
  columns?: string[] | undefined;
  column: string;
  signal?: AbortSignal | undefined;
  /** Bytes read at a time (default 1 MiB); tests use a few bytes to put chunk ends everywhere. */
  chunkBytes?: number;
  /** Look at every byte instead of jumping (default false): the plain state machine, which tests hold the jumps to. */
  everyByte?: boolean;
}

const LF = 10;
const CR = 13;

/** Position of the next `byte` in `buf` from `from`, or buf.length when there is none. */
function next(buf: Buffer, byte: number, from: number): number {
  const at = buf.indexOf(byte, from);
  return at < 0 ? buf.length : at;
}

/**
 * Calls `onKey` with the raw (untrimmed) value of `column` of every record after the header.
 * @example await scanCsvKeys({ path, file, enc, delimiter: ';', quote: '"', header: true, column: 'klantnr' }, (k) => keys.add(k));
 */
export async function scanCsvKeys(opts: ScanCsvKeysOptions, onKey: (value: string) => void): Promise<void> {
  if (opts.enc.node === 'utf16le') throw new Error('scanCsvKeys reads single-byte-delimited encodings only');
  const D = opts.delimiter.charCodeAt(0);
  const Q = opts.quote.charCodeAt(0);
  const encoding = opts.enc.node;
  const repair = opts.enc.repair1252;
  let target = opts.header ? -1 : (opts.columns ?? []).indexOf(opts.column);
  if (!opts.header && target < 0)
    throw new StagecoachError('CONFIG_INVALID', `${opts.file}: no column ${opts.column}`, { file: opts.file });
  let headerNames: string[] | undefined = opts.header ? [] : undefined;

  // Record state, carried across chunks.
  let field = 0;
  let inQuotes = false;
  let pendingQuote = false; // a quote ended the last chunk inside a quoted field
  let pendingCR = false;
  let atFieldStart = true;
  let quoted = false;
  let anyInRecord = false;
  let open = false; // collecting the current field's bytes
  let partStart = 0;
  let parts: Buffer[] = [];

  const collecting = () => (headerNames !== undefined ? true : field === target);
  const takeField = (buf: Buffer, end: number): string => {
    if (open) parts.push(buf.subarray(partStart, end));
    open = false;
    let text = parts.length === 1 ? parts[0]!.toString(encoding) : Buffer.concat(parts).toString(encoding);
    parts = [];
    if (quoted) {
      // strip the surrounding quotes, undouble the inner ones
      const q = opts.quote;
      if (text.startsWith(q)) text = text.slice(1);
      const close = text.lastIndexOf(q);
      if (close >= 0) text = text.slice(0, close) + text.slice(close + 1);
      text = text.split(q + q).join(q);
    }
    return repair ? repairWindows1252(text) : text;
  };
  const endField = (buf: Buffer, at: number) => {
    if (open || collecting()) {
      const text = takeField(buf, at);
      if (headerNames) headerNames.push(field === 0 ? text.replace(/^\ufeff/, '').trim() : text.trim());
      else onKey(text);
    }
    field++;
    atFieldStart = true;
    quoted = false;
  };
  const endRecord = () => {
    if (headerNames) {
      const names = opts.columns ?? headerNames;
      target = names.indexOf(opts.column);
      headerNames = undefined;
      if (target < 0)
        throw new StagecoachError(
          'CONFIG_INVALID',
          `${opts.file}:1: the mapping reads column ${JSON.stringify(opts.column)} that the header lacks`,
          { file: opts.file, line: 1 },
        );
    }
    field = 0;
    anyInRecord = false;
  };

  const jump = opts.everyByte !== true;
  const input = createReadStream(opts.path, {
    highWaterMark: opts.chunkBytes ?? 1024 * 1024,
    start: opts.enc.bomLength,
    signal: opts.signal,
  });
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const buf = chunk;
      const n = buf.length;
      partStart = 0;
      // The next quote, CR and LF at or after the scan position (-1: not looked for yet in this chunk).
      let nextQuote = -1;
      let nextCr = -1;
      let nextLf = -1;
      for (let i = 0; i < n; i++) {
        const b = buf[i]!;
        if (pendingCR) {
          pendingCR = false;
          if (b === LF) continue;
        }
        if (pendingQuote) {
          pendingQuote = false;
          if (b === Q) continue; // a doubled quote split over two chunks: still quoting
          inQuotes = false;
        }
        if (inQuotes) {
          if (b === Q) {
            if (i + 1 === n)
              pendingQuote = true; // decide with the next chunk's first byte
            else if (buf[i + 1] === Q) i++;
            else inQuotes = false;
          } else if (jump) {
            // Nothing but a quote ends a quoted field: on to the next one.
            if (nextQuote < i) nextQuote = next(buf, Q, i);
            i = nextQuote - 1;
          }
          continue;
        }
        if (jump && field > target && headerNames === undefined) {
          // Past the key's field, only a quote (which may open a quoted field), CR or LF matters:
          // the delimiters and text before it change nothing but where the next field starts.
          if (nextQuote < i) nextQuote = next(buf, Q, i);
          if (nextCr < i) nextCr = next(buf, CR, i);
          if (nextLf < i) nextLf = next(buf, LF, i);
          const stop = Math.min(nextQuote, nextCr, nextLf);
          if (stop > i) {
            anyInRecord = true;
            atFieldStart = buf[stop - 1] === D;
            i = stop - 1;
            continue;
          }
        }
        if (atFieldStart) {
          atFieldStart = false;
          if (collecting()) {
            open = true;
            partStart = i;
          }
          if (b === Q) {
            inQuotes = true;
            quoted = true;
            anyInRecord = true;
            continue;
          }
        }
        if (b === D) {
          anyInRecord = true;
          endField(buf, i);
          continue;
        }
        if (b === LF || b === CR) {
          pendingCR = b === CR;
          if (anyInRecord || field > 0) {
            endField(buf, i);
            endRecord();
          } else {
            atFieldStart = true; // a blank line
            open = false;
          }
          continue;
        }
        anyInRecord = true;
      }
      if (pendingQuote) inQuotes = true; // provisional; settled by the next byte
      if (open) parts.push(Buffer.from(buf.subarray(partStart)));
    }
    if (anyInRecord || field > 0) {
      partStart = 0;
      endField(Buffer.alloc(0), 0);
      endRecord();
    }
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    if ((err as Error).name === 'AbortError') throw new StagecoachError('ABORTED', 'Reading stopped', { file: opts.file }, { cause: err });
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `Cannot read ${opts.file}: ${(err as Error).message}`,
      { file: opts.file },
      { cause: err },
    );
  } finally {
    input.destroy();
  }
}
