/**
 * Exports every counterparty of the tenant to a file (JSON Lines, json-seq or CSV), resumably:
 * when the file already exists, its last complete record says where to continue
 * (continue-from = its sequenceNumber + 1), and a record cut short by a crash is first cut off.
 * Records are appended in whole-record writes with backpressure and the file is fsynced at the
 * end, so at any moment the file is a valid export up to its last complete record.
 */
import { createReadStream, existsSync, promises as fsp } from 'node:fs';
import { parse as parseCsv } from 'csv-parse';
import { encodeFrame } from '../codec/index.js';
import { StagecoachError } from '../contract/errors.js';
import { readCounter } from '../contract/shared.js';
import type { Counterparty } from './api-counterparties.js';
import type { StagecoachClient } from './index.js';

export type ExportFormat = 'jsonl' | 'json-seq' | 'csv';

export interface ExportOptions {
  format: ExportFormat;
  out: string;
  signal?: AbortSignal;
  /** Called every `progressEvery` records (default 1,000) and at the end. */
  onProgress?: (written: number) => void;
  progressEvery?: number;
  /** Start over instead of continuing an existing file. */
  fresh?: boolean;
}

export interface ExportReport {
  file: string;
  format: ExportFormat;
  /** Records written by this run. */
  written: number;
  /** Counter of the last record already in the file when this run started (undefined: new file). */
  resumedAfter: number | undefined;
  /** Bytes of a record cut short by an earlier crash, removed before continuing. */
  repairedBytes: number;
  /** Counter of the last record in the file now. */
  lastSequenceNumber: number | undefined;
}

/** CSV columns: flat fields of both counterparty types; nested arrays are in the JSON formats. */
export const CSV_COLUMNS = [
  'sequenceNumber',
  'referenceId',
  'type',
  'lifecycleStatus',
  'countryCode',
  'preferredCommunicationLanguage',
  'organisationName',
  'cocNumber',
  'countryOfIncorporation',
  'salutation',
  'initials',
  'firstName',
  'surnamePrefix',
  'surname',
  'sex',
  'dateOfBirth',
  'nationalities',
  'emailAddress',
] as const;

/** How many records are joined into one write (bounded: memory stays flat). */
const RECORDS_PER_WRITE = 256;

/**
 * @example
 *   const report = await exportCounterparties(client, { format: 'jsonl', out: 'cps.jsonl' });
 *   console.log(report.written, report.resumedAfter);
 */
export async function exportCounterparties(client: StagecoachClient, options: ExportOptions): Promise<ExportReport> {
  const { format, out } = options;
  let tail: TailInfo = { last: undefined, validBytes: 0, totalBytes: 0, hasHeader: false };
  if (existsSync(out) && !options.fresh) {
    tail = await readTail(out, format);
    if (tail.validBytes < tail.totalBytes) await fsp.truncate(out, tail.validBytes);
  } else if (options.fresh) {
    await fsp.rm(out, { force: true });
  }
  const report: ExportReport = {
    file: out,
    format,
    written: 0,
    resumedAfter: tail.last,
    repairedBytes: tail.totalBytes - tail.validBytes,
    lastSequenceNumber: tail.last,
  };
  // Appends through a file handle: each awaited write is whole records (backpressure for free).
  const file = await fsp.open(out, 'a');
  const write = async (text: string) => {
    try {
      await file.write(text);
    } catch (err) {
      throw new StagecoachError('SOURCE_READ_FAILED', `cannot write ${out}: ${(err as Error).message}`, { file: out });
    }
  };
  const every = options.progressEvery ?? 1000;
  let pending: string[] = [];
  try {
    if (format === 'csv' && !tail.hasHeader) await write(`${CSV_COLUMNS.join(',')}\n`);
    const flush = async () => {
      if (pending.length === 0) return;
      const text = pending.join('');
      pending = [];
      await write(text);
    };
    const stream = client.counterparties.stream({
      format: format === 'csv' ? 'jsonl' : format,
      ...(tail.last !== undefined ? { continueFrom: tail.last + 1 } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for await (const cp of stream) {
      pending.push(format === 'csv' ? csvLine(cp) : encodeFrame(format, cp));
      report.written++;
      report.lastSequenceNumber = cp.sequenceNumber;
      if (pending.length >= RECORDS_PER_WRITE) await flush();
      if (report.written % every === 0) options.onProgress?.(report.written);
    }
    await flush();
    options.onProgress?.(report.written);
  } finally {
    // Whatever was received before an abort is kept: the next run continues after it.
    if (pending.length) await write(pending.join('')).catch(() => undefined);
    // fsync so that a crash after "done" cannot lose the tail of the export.
    await file.sync().catch(() => undefined);
    await file.close();
  }
  return report;
}

interface TailInfo {
  /** Counter of the last complete record. */
  last: number | undefined;
  /** Length of the file up to the end of its last complete record. */
  validBytes: number;
  totalBytes: number;
  hasHeader: boolean;
}

/** Finds the last complete record of an existing export (and where a cut-short one begins). */
async function readTail(file: string, format: ExportFormat): Promise<TailInfo> {
  const { size } = await fsp.stat(file);
  if (size === 0) return { last: undefined, validBytes: 0, totalBytes: 0, hasHeader: false };
  if (format === 'csv') return readCsvTail(file, size);
  const handle = await fsp.open(file, 'r');
  try {
    // Read backwards in growing windows until a complete record is found (records are small).
    for (let window = 64 * 1024; ; window *= 4) {
      const start = Math.max(0, size - window);
      const buf = Buffer.alloc(size - start);
      await handle.read(buf, 0, buf.length, start);
      if (start === 0) checkFormat(buf, format, file);
      const found = lastCompleteRecord(buf, format, start, file);
      if (found === 'need-more') continue;
      if (found === 'none') return { last: undefined, validBytes: 0, totalBytes: size, hasHeader: false };
      return { last: found.counter, validBytes: start + found.end, totalBytes: size, hasHeader: false };
    }
  } finally {
    await handle.close();
  }
}

function checkFormat(head: Buffer, format: ExportFormat, file: string): void {
  const startsWithRs = head[0] === 0x1e;
  if (!startsWithRs && head[0] !== 0x7b) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${file} exists but is not an export of counterparties (it does not start with a record); choose another --out, or --fresh to start over`,
      { file },
    );
  }
  if ((format === 'json-seq') !== startsWithRs) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${file} exists but is not a ${format} export (it ${startsWithRs ? 'is json-seq' : 'does not start with RS'}); choose its format, another --out, or --fresh to start over`,
      { file },
    );
  }
}

/**
 * The last complete record of `buf` (the file from `offset` on). JSON.stringify never writes a
 * raw LF or RS, so LF only ends records and RS only starts them: bytes after the last LF are a
 * record cut short by a crash, and the record before it must be whole, or the file is not ours.
 */
function lastCompleteRecord(
  buf: Buffer,
  format: 'jsonl' | 'json-seq',
  offset: number,
  file: string,
): { end: number; counter: number } | 'none' | 'need-more' {
  const end = buf.lastIndexOf(0x0a);
  if (end < 0) return offset > 0 ? 'need-more' : 'none';
  const start = format === 'json-seq' ? buf.lastIndexOf(0x1e, end) : buf.lastIndexOf(0x0a, end - 1) + 1;
  if ((format === 'json-seq' && start < 0) || (format === 'jsonl' && start === 0 && offset > 0)) return 'need-more';
  const text = buf.subarray(format === 'json-seq' ? start + 1 : start, end).toString('utf8');
  const found = tryRecord(text, end + 1);
  if (!found) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${file} exists but its last complete record (byte ${offset + start}) is not a counterparty with a sequenceNumber; choose another --out, or --fresh to start over`,
      { file },
    );
  }
  return found;
}

function tryRecord(text: string, end: number): { end: number; counter: number } | undefined {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const counter = readCounter(value);
    return counter === undefined ? undefined : { end, counter };
  } catch {
    return undefined;
  }
}

async function readCsvTail(file: string, size: number): Promise<TailInfo> {
  const parser = createReadStream(file).pipe(parseCsv({ info: true, relax_column_count: true, skip_empty_lines: true }));
  let header: string[] | undefined;
  let headerEnd = 0;
  // The last two whole-looking records: the very last may still lack its line end.
  let prev: { counter: number; end: number } | undefined;
  let last: { counter: number; end: number } | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      if (!header) {
        header = record;
        headerEnd = info.bytes;
        if (header[0] !== CSV_COLUMNS[0]) {
          throw new StagecoachError(
            'CONFIG_INVALID',
            `${file} exists but is not a CSV export of counterparties (its first column is ${JSON.stringify(header[0])}); choose another --out, or --fresh to start over`,
            { file },
          );
        }
        continue;
      }
      if (record.length !== header.length || !/^\d+$/.test(record[0] ?? '')) break; // cut short
      prev = last;
      last = { counter: Number(record[0]), end: info.bytes };
    }
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    // A quote left open by a cut-short last record: what came before it stands.
  }
  const endsWithLf = async (at: number) => {
    if (at <= 0) return false;
    const handle = await fsp.open(file, 'r');
    try {
      const byte = Buffer.alloc(1);
      await handle.read(byte, 0, 1, at - 1);
      return byte[0] === 0x0a;
    } finally {
      await handle.close();
    }
  };
  if (last && !(await endsWithLf(last.end))) [last, prev] = [prev, undefined];
  if (last) return { last: last.counter, validBytes: last.end, totalBytes: size, hasHeader: true };
  if (header && (await endsWithLf(headerEnd))) return { last: undefined, validBytes: headerEnd, totalBytes: size, hasHeader: true };
  return { last: undefined, validBytes: 0, totalBytes: size, hasHeader: false };
}

function csvLine(cp: Counterparty): string {
  const record = cp as Record<string, unknown>;
  return (
    CSV_COLUMNS.map((col) => {
      const v = record[col];
      if (v === undefined || v === null) return '';
      const text = Array.isArray(v) ? v.join(';') : typeof v === 'object' ? JSON.stringify(v) : String(v);
      return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    }).join(',') + '\n'
  );
}
