/**
 * What the main thread and a parallel reader's workers say to each other. A worker reads one
 * byte range of a file, maps and checks its rows (the half of the checks that needs only the
 * row) and, when asked, frames the clean records for upload; the main thread settles the rest in
 * file order. Results travel as columns (one per field, numbers in typed arrays, frames in one
 * transferred buffer) because cloning one small object per row cost more than the work saved. A
 * column of strings is a `StringColumn` (string-column.ts): a range's thousands of small
 * strings, cloned one by one, were what the main thread's scavenges copied while the range
 * waited its turn (a fifth of its time in `plan`).
 */
import type { RefColumns } from './ref-columns.js';
import type { RangeOutcome, RecordRange } from './splittable.js';
import type { MappedRow, RejectReason } from '../types.js';
import type { StreamFormat } from '../../codec/index.js';
import type { StringColumn } from './string-column.js';
import type { SourceTally } from '../source/tally.js';

export interface WorkerSetup {
  /** The pipeline file: each worker loads it and compiles its mappings itself. */
  pipelineFile: string;
  /** Frame clean records for upload (`run`), or only check them (`plan`). */
  encode: StreamFormat | undefined;
  /** Hash each row into its provenance (false for `plan`: see ReadPipelineOptions.hashRows). */
  hashRows: boolean;
}

export interface ChunkJob {
  id: number;
  /** Index of the source in the pipeline. */
  source: number;
  path: string;
  file: string;
  range: RecordRange;
}

/** Rows of a chunk, in file order. */
export interface ChunkPack {
  n: number;
  /** 0: mapped and checked (keyed); 1: refused whatever the other rows hold (in `finals`). */
  kinds: Uint8Array;
  lines: Uint32Array;
  byteOffsets: Float64Array;
  rowHashes: StringColumn;
  keys: StringColumn;
  referenceIds: StringColumn;
  /** Rows the mapping or the staging schema refused, with their reasons (defects: few). */
  extras: { i: number; mappingReasons?: RejectReason[]; checkReasons?: RejectReason[] }[];
  /** Every row's relations to other legacy keys, for the missing-target check. */
  refs: RefColumns;
  finals: { i: number; row: Extract<MappedRow, { kind: 'rejected' }> }[];
  /** Framed records (encode mode): UTF-8 lengths (0: none) and the frames back to back. */
  frameBytes: Uint32Array;
  contentHashes: StringColumn;
  /** '' where the row has none. */
  entityTypes: StringColumn;
  frames: Uint8Array;
  outcome: RangeOutcome;
  /** The range's two-way count (source/tally.ts), added to its file's when the range is settled. */
  tally: SourceTally;
}

export type WorkerReply =
  | { id: number; pack: ChunkPack }
  | { id: number; error: { code: string; message: string; context?: Record<string, unknown> } };
