/**
 * JSON sources on files: the thin driver that feeds a file's decoded text (decoded-text.ts) to
 * the pure cores in core.ts, through the loop every source core is fed by (feed-core.ts).
 * Neither the document nor the array is held.
 */
import type { SourceEncoding } from '../encoding.js';
import { decodedChunks, type DecodedChunk } from '../decoded-text.js';
import { feedCore, type SourceItem } from '../feed-core.js';
import type { SourceTally } from '../tally.js';
import { JsonArrayCore, JsonLinesCore, type JsonCoreOptions } from './core.js';

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

type Chunks = Iterable<DecodedChunk> | AsyncIterable<DecodedChunk>;

const coreOptions = (opts: JsonFileOptions) => ({
  source: opts.source,
  file: opts.file,
  arrayPath: opts.arrayPath,
  ...(opts.hashRows === false ? { hashRows: false } : {}),
  ...(opts.tally ? { tally: opts.tally } : {}),
});

/**
 * The objects of a JSON array (at the top level, or at `arrayPath`) in decoded text, a batch per chunk.
 * @example for await (const batch of jsonArrayBatches(textChunks('[{"id":1},'), { source: 'bedrijven', file: 'b.json' })) …
 *          // [{ values: { id: 1 }, … }, SOURCE_READ_FAILED 'b.json:1: the file ends inside the array after 1 complete element …']
 */
export function jsonArrayBatches(chunks: Chunks, opts: JsonCoreOptions): AsyncGenerator<SourceItem[]> {
  return feedCore(new JsonArrayCore(opts), chunks);
}

/**
 * The objects of JSON Lines in decoded text, a batch per chunk.
 * @example for await (const batch of jsonLinesBatches(textChunks('{"id":1}\n{"id":'), { source: 'contacten', file: 'c.jsonl' })) …
 */
export function jsonLinesBatches(chunks: Chunks, opts: JsonCoreOptions): AsyncGenerator<SourceItem[]> {
  return feedCore(new JsonLinesCore(opts), chunks);
}

/**
 * The objects of a JSON array in a file (at the top level, or at `arrayPath`), in batches.
 * @example for await (const batch of readJsonArrayBatches({ source: 'bedrijven', path, file, encoding: 'auto', arrayPath: 'export.bedrijven' })) …
 */
export function readJsonArrayBatches(opts: JsonFileOptions): AsyncGenerator<SourceItem[]> {
  return jsonArrayBatches(decodedChunks(opts.path, opts.file, opts.encoding, opts.signal), coreOptions(opts));
}

/**
 * The objects of a JSON Lines file, in batches.
 * @example for await (const batch of readJsonLinesBatches({ source: 'contacten', path, file, encoding: 'utf-8' })) …
 */
export function readJsonLinesBatches(opts: JsonFileOptions): AsyncGenerator<SourceItem[]> {
  return jsonLinesBatches(decodedChunks(opts.path, opts.file, opts.encoding, opts.signal), coreOptions(opts));
}

/** JSON Lines row by row (the corrections reader). */
export async function* readJsonLinesFile(opts: JsonFileOptions): AsyncGenerator<SourceItem> {
  for await (const batch of readJsonLinesBatches(opts)) yield* batch;
}

/** A JSON array row by row. */
export async function* readJsonArrayFile(opts: JsonFileOptions): AsyncGenerator<SourceItem> {
  for await (const batch of readJsonArrayBatches(opts)) yield* batch;
}
