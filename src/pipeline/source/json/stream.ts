/**
 * JSON sources on files: the thin wrapper that feeds a file's decoded text (decoded-text.ts) to
 * the pure cores in core.ts. Neither the document nor the array is held.
 */
import type { SourceRow, SourceRowError } from '../../types.js';
import type { SourceEncoding } from '../encoding.js';
import { decodedChunks } from '../decoded-text.js';
import type { SourceTally } from '../tally.js';
import { jsonArrayBatches, jsonLinesBatches } from './core.js';

export interface JsonFileOptions {
  source: string;
  path: string;
  file: string;
  encoding: SourceEncoding;
  /** Dotted path of the array inside the top-level object; none: the document is the array. */
  arrayPath?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Hash each row's text into its provenance (default true); `plan`, which keeps no ledger, skips it. */
  hashRows?: boolean;
  tally?: SourceTally | undefined;
}

const coreOptions = (opts: JsonFileOptions) => ({
  source: opts.source,
  file: opts.file,
  arrayPath: opts.arrayPath,
  ...(opts.hashRows === false ? { hashRows: false } : {}),
  ...(opts.tally ? { tally: opts.tally } : {}),
});

/**
 * The objects of a JSON array in a file (at the top level, or at `arrayPath`), in batches.
 * @example for await (const batch of readJsonArrayBatches({ source: 'bedrijven', path, file, encoding: 'auto', arrayPath: 'export.bedrijven' })) …
 */
export function readJsonArrayBatches(opts: JsonFileOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  return jsonArrayBatches(decodedChunks(opts.path, opts.file, opts.encoding, opts.signal), coreOptions(opts));
}

/**
 * The objects of a JSON Lines file, in batches.
 * @example for await (const batch of readJsonLinesBatches({ source: 'contacten', path, file, encoding: 'utf-8' })) …
 */
export function readJsonLinesBatches(opts: JsonFileOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  return jsonLinesBatches(decodedChunks(opts.path, opts.file, opts.encoding, opts.signal), coreOptions(opts));
}

/** JSON Lines row by row (the corrections reader). */
export async function* readJsonLinesFile(opts: JsonFileOptions): AsyncGenerator<SourceRow | SourceRowError> {
  for await (const batch of readJsonLinesBatches(opts)) yield* batch;
}

/** A JSON array row by row. */
export async function* readJsonArrayFile(opts: JsonFileOptions): AsyncGenerator<SourceRow | SourceRowError> {
  for await (const batch of readJsonArrayBatches(opts)) yield* batch;
}
