/**
 * The CSV reader's stream wrapper: reads the file (or a byte range of it, file-chunks.ts) and
 * feeds the pure core (core.ts) through the loop every source core is fed by (feed-core.ts), one
 * read at a time, yielding the rows each read completed as one batch.
 */
import type { SourceEncoding } from '../encoding.js';
import type { CsvOptions } from './options.js';
import type { SourceTally } from '../tally.js';
import { detectEncoding } from '../encoding.js';
import { feedCore } from '../feed-core.js';
import { fileChunks } from '../file-chunks.js';
import { csvDialect } from './dialect.js';
import { CsvCore, type CsvItem, type CsvRange, type CsvReadOutcome } from './core.js';

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
  requiredColumns?: ReadonlySet<string> | undefined;
  signal?: AbortSignal | undefined;
  /** Read only a byte range of the file, which starts where a record starts (parallel/read-parallel.ts). */
  range?: CsvRange | undefined;
  /** Filled in as the read goes: the columns, and how the last record ended (a range's check). */
  outcome?: CsvReadOutcome | undefined;
  /** Filled in as the read goes: the file's two-way count (tally.ts). */
  tally?: SourceTally | undefined;
  /** Hash each row's fields into its provenance (default true); `plan`, which keeps no ledger, skips it. */
  hashRows?: boolean | undefined;
  /** Read plain lines without csv-parse (default true). Tests turn it off for a reference. */
  plainLines?: boolean | undefined;
  /** Bytes read at a time (default READ_BYTES); tests make it small so lines straddle reads. */
  readBytes?: number | undefined;
}

/**
 * Bytes read at a time. A read's rows are made at once and wait to be mapped, so the more a read
 * holds, the more rows are alive at each scavenge: `run` at 200,000 persons promoted 172 MB with
 * 32 KiB reads and 124 MB with 16 KiB (scavenge pauses 1.13 against 0.92 s, `--trace-gc-nvp`).
 * csv-parse slows down on big chunks too. `plan` measured the same either way.
 */
const READ_BYTES = 16 * 1024;

/**
 * Reads one CSV file.
 * @example for await (const row of readCsvFile({ source: 'klanten', path, file: 'klanten.csv', encoding: 'windows-1252', csv })) …
 */
export async function* readCsvFile(opts: CsvFileOptions): AsyncGenerator<CsvItem> {
  for await (const batch of readCsvBatches(opts)) yield* batch;
}

/** Same as `readCsvFile`, in batches of the rows one read completes (the fast path). */
export async function* readCsvBatches(opts: CsvFileOptions): AsyncGenerator<CsvItem[]> {
  const enc = await detectEncoding(opts.path, opts.file, opts.encoding);
  const core = new CsvCore({
    source: opts.source,
    file: opts.file,
    dialect: csvDialect(opts.csv, enc),
    range: opts.range,
    requiredColumns: opts.requiredColumns,
    hashRows: opts.hashRows,
    plainLines: opts.plainLines,
    tally: opts.tally,
    outcome: opts.outcome,
  });
  yield* feedCore(
    core,
    fileChunks(opts.path, opts.file, enc, { readBytes: opts.readBytes ?? READ_BYTES, range: opts.range, signal: opts.signal }),
  );
}
