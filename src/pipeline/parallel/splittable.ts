/**
 * What the parallel reader needs of a source format, and nothing more: cut a file into byte
 * ranges that each start at a record, and read one such range. The parallel reader knows no
 * format; a source whose format can do both is read in parallel, any other on one thread.
 * Today CSV can (its splitter and its reader's `range` option); a new format that can read from a
 * byte offset plugs in here.
 */
import { detectEncoding } from '../source/encoding.js';
import { splitCsv, type CsvSplit, type SplitCsvOptions, readCsvBatches, type CsvRange, type CsvReadOutcome } from '../source/csv/index.js';
import type { SourceRow, SourceRowError } from '../types.js';
import type { PreparedSource } from '../prepare-pipeline.js';
import type { SourceTally } from '../source/tally.js';
import { formatOf } from '../source/index.js';

/** A byte range that starts at a record, with what its reader must know beforehand (the columns). */
export type RecordRange = CsvRange;
/** How a range's read ended: where, at a record or not, and the columns it found. */
export type RangeOutcome = CsvReadOutcome;

/** Where a range starts (and ends: absent for the file's last one), as the splitter found it. */
export interface RecordChunk {
  start: number;
  end?: number;
  line: number;
}

/** A file cut into ranges. */
export interface FileSplit {
  chunks: AsyncGenerator<RecordChunk>;
  /** The columns known before any range is read; undefined when the first range finds them (a header). */
  columns: string[] | undefined;
  /** The range that reads `chunk`, knowing the `columns` an earlier range found (none for the first). */
  range(chunk: RecordChunk, columns: string[] | undefined): RecordRange;
}

export interface Splittable {
  /** Cuts the file into ranges of about `chunkBytes`; undefined when it cannot be cut. */
  split(file: { path: string; file: string }, chunkBytes: number, signal: AbortSignal | undefined): Promise<FileSplit | undefined>;
  /** Reads one range's rows, filling in `outcome` as it goes. */
  read(
    file: { path: string; file: string },
    range: RecordRange,
    outcome: RangeOutcome,
    hashRows: boolean,
    tally?: SourceTally,
  ): AsyncGenerator<(SourceRow | SourceRowError)[]>;
}

/** The CSV splitter to use; tests give a careless one to see ranges refused. */
export type CsvSplitter = (options: SplitCsvOptions) => Promise<CsvSplit | undefined>;

/**
 * How a source's files are split and read in ranges, or undefined when its format cannot be.
 * @example const sp = splittableFor(source); const split = sp && (await sp.split(file, 1 << 20, signal));
 */
export function splittableFor(s: PreparedSource, splitter: CsvSplitter = splitCsv): Splittable | undefined {
  // Splitting is CSV's today (the only format with `canSplit`); a second one brings its splitter here.
  if (!formatOf(s.def.format).canSplit) return undefined;
  const { csv, encoding, name } = s.def;
  return {
    async split(f, chunkBytes, signal) {
      const enc = await detectEncoding(f.path, f.file, encoding);
      const split = await splitter({ path: f.path, enc, delimiter: csv.delimiter, quote: csv.quote, chunkBytes, signal });
      if (!split) return undefined;
      return {
        chunks: split.chunks,
        columns: csv.header ? undefined : csv.columns,
        range: (chunk, columns) => ({
          start: chunk.start,
          line: chunk.line,
          recordDelimiter: split.recordDelimiter,
          ...(chunk.end !== undefined ? { end: chunk.end } : {}),
          ...(columns ? { columns } : {}),
        }),
      };
    },
    read(f, range, outcome, hashRows, tally) {
      return readCsvBatches({
        ...(tally ? { tally } : {}),
        source: name,
        path: f.path,
        file: f.file,
        encoding,
        csv,
        requiredColumns: s.mapping.columns,
        range,
        outcome,
        hashRows,
      });
    },
  };
}
