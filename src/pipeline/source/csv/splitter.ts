/**
 * The CSV format's splitter (the format contract's `splitter`): a file cut into byte ranges that
 * each start at a record, for the parallel reader (chunks.ts finds the boundaries), and where a
 * resumed run starts reading, at the first byte of the row its previous run settled last (the
 * header read from the file's head first, so the range knows its columns).
 */
import type { FileSplit, RecordChunk, SourceFile, SourceStart } from '../format.js';
import { detectEncoding, type SourceEncoding } from '../encoding.js';
import { splitCsv, type CsvSplit, type SplitCsvOptions } from './chunks.js';
import type { CsvOptions } from './options.js';
import { readCsvBatches } from './read-csv.js';
import type { CsvReadOutcome } from './types.js';

/** What the splitter reads of a CSV source. */
interface CsvSource {
  name: string;
  encoding: SourceEncoding;
  csv: CsvOptions;
}

/** The format contract's Splitter, for a CSV source. */
export interface CsvSplitter {
  split(source: CsvSource, file: SourceFile, chunkBytes: number, signal: AbortSignal | undefined): Promise<FileSplit | undefined>;
  startAt(source: CsvSource, file: SourceFile, at: { byteOffset: number; line: number }): Promise<SourceStart | undefined>;
}

/** How a file is cut at record boundaries; tests give a careless one to see ranges refused. */
export type CsvCutter = (options: SplitCsvOptions) => Promise<CsvSplit | undefined>;

/** The CSV splitter, cutting with `cut` (chunks.ts's splitCsv). */
export function csvSplitter(cut: CsvCutter = splitCsv): CsvSplitter {
  return {
    async split(source, file, chunkBytes, signal) {
      const { csv, encoding } = source;
      const enc = await detectEncoding(file.path, file.file, encoding);
      const split = await cut({ path: file.path, enc, delimiter: csv.delimiter, quote: csv.quote, chunkBytes, signal });
      if (!split) return undefined;
      return {
        chunks: split.chunks,
        columns: csv.header ? undefined : csv.columns,
        range: (chunk: RecordChunk, columns: string[] | undefined): SourceStart => ({
          byteOffset: chunk.start,
          line: chunk.line,
          recordDelimiter: split.recordDelimiter,
          ...(chunk.end !== undefined ? { end: chunk.end } : {}),
          ...(columns ? { columns } : {}),
        }),
      };
    },
    async startAt(source, file, at) {
      const { csv } = source;
      let columns = csv.columns;
      if (csv.header) {
        const outcome: CsvReadOutcome = { endLine: 0, endByte: 0, endedAtRecord: true };
        const head = readCsvBatches({
          source: source.name,
          path: file.path,
          file: file.file,
          encoding: source.encoding,
          csv,
          outcome,
          hashRows: false,
        });
        await head.next();
        await head.return(undefined);
        columns = outcome.columns;
        if (!columns) return undefined;
      }
      return { byteOffset: at.byteOffset, line: at.line, ...(columns ? { columns } : {}) };
    },
  };
}
