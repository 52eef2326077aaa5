/**
 * What the parallel reader needs of a source format, and nothing more: cut a file into byte
 * ranges that each start at a record, and read one such range. Both come from the format's
 * contract (source/format.ts: its `splitter`, and its `read` from a start); the parallel reader
 * knows no format. A source whose format has a splitter is read in parallel, any other on one
 * thread.
 */
import type { SourceRow, SourceRowError } from '../types.js';
import type { PreparedSource } from '../prepare-pipeline.js';
import type { SourceTally } from '../source/tally.js';
import {
  formatOf,
  readSourceBatches,
  type FileSplit,
  type RangeOutcome,
  type RecordChunk,
  type SourceFile,
  type SourceStart,
} from '../source/index.js';

/** A byte range that starts at a record, with what its reader must know beforehand (the columns). */
export type RecordRange = SourceStart;
export type { FileSplit, RangeOutcome, RecordChunk };

export interface Splittable {
  /** Cuts the file into ranges of about `chunkBytes`; undefined when it cannot be cut. */
  split(file: SourceFile, chunkBytes: number, signal: AbortSignal | undefined): Promise<FileSplit | undefined>;
  /** Reads one range's rows, filling in `outcome` as it goes. */
  read(
    file: SourceFile,
    range: RecordRange,
    outcome: RangeOutcome,
    hashRows: boolean,
    tally?: SourceTally,
  ): AsyncGenerator<(SourceRow | SourceRowError)[]>;
}

/** Cuts a source's file into ranges instead of its format's splitter (tests give a careless one to see ranges refused). */
export type SplitOverride = (
  source: PreparedSource['def'],
  file: SourceFile,
  chunkBytes: number,
  signal: AbortSignal | undefined,
) => Promise<FileSplit | undefined>;

/**
 * How a source's files are split and read in ranges, or undefined when its format cannot be.
 * @example const sp = splittableFor(source); const split = sp && (await sp.split(file, 1 << 20, signal));
 */
export function splittableFor(s: PreparedSource, override?: SplitOverride): Splittable | undefined {
  const splitter = formatOf(s.def.format).splitter;
  if (!splitter) return undefined;
  return {
    split: (f, chunkBytes, signal) => (override ?? splitter.split)(s.def, f, chunkBytes, signal),
    read: (f, range, outcome, hashRows, tally) =>
      readSourceBatches(s.def, f, { from: range, outcome, hashRows, requiredColumns: s.mapping.columns, ...(tally ? { tally } : {}) }),
  };
}
