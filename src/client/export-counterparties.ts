/**
 * Exports every counterparty of the tenant to a file (JSON Lines, json-seq or CSV), resumably:
 * when the file already exists and is a cut-off export of the same format (export-resume.ts), its
 * last complete record says where to continue (continue-from = its sequenceNumber + 1), and a
 * record cut short by a crash is first cut off; any other existing file is refused, untouched.
 * Records are appended in whole-record writes with backpressure and the file is fsynced at the
 * end, so at any moment the file is a valid export up to its last complete record.
 */
import { existsSync, promises as fsp } from 'node:fs';
import { encodeFrame } from '../codec/index.js';
import { StagecoachError } from '../contract/errors.js';
import type { Counterparty } from './api-counterparties.js';
import { CSV_COLUMNS, CSV_HEADER, type ExistingExport, type ExportFormat, inspectExistingExport } from './export-resume.js';
import type { StagecoachClient } from './index.js';

export { CSV_COLUMNS, type ExportFormat } from './export-resume.js';

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

/** How many records are joined into one write (bounded: memory stays flat). */
const RECORDS_PER_WRITE = 256;

/**
 * @example
 *   const report = await exportCounterparties(client, { format: 'jsonl', out: 'cps.jsonl' });
 *   console.log(report.written, report.resumedAfter);
 */
export async function exportCounterparties(client: StagecoachClient, options: ExportOptions): Promise<ExportReport> {
  const { format, out } = options;
  let tail: ExistingExport = { last: undefined, validBytes: 0, totalBytes: 0, hasHeader: false };
  if (existsSync(out) && !options.fresh) {
    // Refuses (untouched) anything but a cut-off export of this format, before cutting a byte.
    tail = await inspectExistingExport(out, format);
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
    if (format === 'csv' && !tail.hasHeader) await write(CSV_HEADER);
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
