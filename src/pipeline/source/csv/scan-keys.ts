/**
 * The key pass over a CSV file: the values of one column, nothing else. It is the CSV reader's
 * core (core.ts) in key-only mode, read in big chunks: plain lines decode just the key's field,
 * other lines go through csv-parse as in the full read, so the keys are exactly the full
 * reader's. Column counts are not checked, so a row the real reader later refuses still lends
 * its key to the set: the set only answers "does some row hold this key" for the missing-relation
 * check; duplicates and every row error come from the real reader in the second pass.
 */
import { StagecoachError } from '../../../contract/errors.js';
import type { ResolvedEncoding } from '../encoding.js';
import { CsvCore } from './core.js';
import { feedCore } from '../feed-core.js';
import { fileChunks } from '../file-chunks.js';

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
  /** Read plain lines without csv-parse (default true); tests turn it off for a reference. */
  plainLines?: boolean;
}

/**
 * Calls `onKey` with the raw (untrimmed) value of `column` of every record after the header.
 * @example await scanCsvKeys({ path, file, enc, delimiter: ';', quote: '"', header: true, column: 'klantnr' }, (k) => keys.add(k));
 */
export async function scanCsvKeys(opts: ScanCsvKeysOptions, onKey: (value: string) => void): Promise<void> {
  const { path, file, enc } = opts;
  const core = new CsvCore({
    source: '',
    file,
    dialect: { delimiter: opts.delimiter, quote: opts.quote, header: opts.header, columns: opts.columns, encoding: enc },
    keys: { column: opts.column, take: onKey },
    plainLines: opts.plainLines,
  });
  for await (const batch of feedCore(
    core,
    fileChunks(path, file, enc, { readBytes: opts.chunkBytes ?? 1024 * 1024, signal: opts.signal }),
  )) {
    const failed = batch.find((r) => 'code' in r && r.code === 'SOURCE_READ_FAILED');
    if (failed && 'message' in failed) throw new StagecoachError('SOURCE_READ_FAILED', `Cannot read ${file}: ${failed.message}`, { file });
  }
}
