/**
 * The format contract: everything a source format is, as one `Format` object its folder exports
 * (`<format>/format.ts`) and the registry (index.ts) lists on one line. The pipeline schema, the
 * editor JSON Schemas, reading, splitting (`splitter`), reading a record back, and the corrections file are
 * all built from these objects; nothing outside a format's folder asks which format it is.
 * Every member is required, so the compiler points a new format at each decision it must make.
 */
import type { z } from 'zod';
import type { SourceRow, SourceRowError } from '../types.js';
import type { SourceEncoding } from './encoding.js';
import type { RawRow } from './row-at.js';
import type { SourceTally } from './tally.js';

export interface SourceFile {
  /** Absolute path. */
  path: string;
  /** Path for provenance and messages (relative to the working folder when below it). */
  file: string;
}

/** Where to start reading when not at the file's start (a record boundary the format found before). */
export interface SourceStart {
  byteOffset: number;
  /** Line of that byte (1-based). */
  line: number;
  /** The columns, when the header that names them lies before the start. */
  columns?: string[];
  /** Exclusive end byte (a parallel range); the file's end when absent. */
  end?: number;
  /** The record delimiter the splitter found at the file's start, so every range splits records alike (formats of lines). */
  recordDelimiter?: '\n' | '\r\n';
}

/** How the read of a range ended (filled in by `read` when `outcome` is given): the check that a range lines up with the next. */
export interface RangeOutcome {
  /** The columns the read found (a header), for the ranges after it. */
  columns?: string[];
  /** Line of the last record's last line. */
  endLine: number;
  /** Byte offset just past the last record (its delimiter included). */
  endByte: number;
  /** False when the input stopped inside a record: the range's end was not at a record boundary. */
  endedAtRecord: boolean;
}

/** Where a range of a file starts (and ends: absent for the file's last one), as a splitter found it. */
export interface RecordChunk {
  start: number;
  end?: number;
  line: number;
}

/** A file cut into ranges that each start at a record. */
export interface FileSplit {
  chunks: AsyncGenerator<RecordChunk>;
  /** The columns known before any range is read; undefined when the first range finds them (a header). */
  columns: string[] | undefined;
  /** Where reading `chunk` starts, knowing the `columns` an earlier range found (none for the first). */
  range(chunk: RecordChunk, columns: string[] | undefined): SourceStart;
}

/**
 * A format's splitter: how a file of it is cut into ranges that start at records (parallel
 * reading) and where a read that starts at a record's first byte starts (resume). The format's
 * `read` then honours `from` (and fills in `outcome`).
 */
export interface Splitter<Key extends string, Field extends z.ZodType> {
  /** Cuts the file into ranges of about `chunkBytes`; undefined when this file cannot be cut (it is read on one thread). */
  split(
    source: FormatSource<Key, Field>,
    file: SourceFile,
    chunkBytes: number,
    signal: AbortSignal | undefined,
  ): Promise<FileSplit | undefined>;
  /**
   * Where a read starting at the record at `at` starts (with the columns a header before it
   * names); undefined when reading cannot start there (a header that cannot be read).
   */
  startAt(source: FormatSource<Key, Field>, file: SourceFile, at: { byteOffset: number; line: number }): Promise<SourceStart | undefined>;
}

/** What every format's `read` takes. */
export interface ReadOptions {
  signal?: AbortSignal | undefined;
  /** Hash each row into its provenance (default true); `plan`, which keeps no ledger, skips it. */
  hashRows?: boolean | undefined;
  /** Columns the mapping reads: a header without one of them is a configuration error. */
  requiredColumns?: ReadonlySet<string> | undefined;
  /** Start at a record boundary instead of byte 0 (formats with a `splitter`). */
  from?: SourceStart | undefined;
  /** Filled in as the read goes: how it ended (formats with a `splitter`, reading a range). */
  outcome?: RangeOutcome | undefined;
  /** The file's two-way count, filled in as the read goes (formats with `tallies`). */
  tally?: SourceTally | undefined;
}

/** A problem a format finds in a source's options, located below its options key. */
export interface OptionsProblem {
  path: (string | number)[];
  message: string;
}

/**
 * A format's options: the key of a pipeline source that holds them (`csv:`, `fixedWidth:`) and
 * their declaration, which the pipeline schema and the editor JSON Schemas are built from.
 */
export interface FormatOptions<Key extends string, Field extends z.ZodType> {
  key: Key;
  /**
   * The options as a source writes them, described: with their defaults (`.default(…)`) when
   * every file of the format can be read without them, `.optional()` when `check` requires them.
   */
  field: Field;
  /** Problems of a source of this format that the field alone cannot see (options that need each other); [] when none. */
  check(options: z.output<Field>): OptionsProblem[];
}

/** What a format reads of a source: its name, its encoding and its own options (nothing of other formats). */
export type FormatSource<Key extends string, Field extends z.ZodType> = { name: string; encoding: SourceEncoding } & {
  [K in Key]: z.output<Field>;
};

/** What reading one record back needs: the encoding and the format's options (defaults filled in by `readRowAt`). */
export type RecordFormat<Key extends string, Field extends z.ZodType> = { encoding: SourceEncoding } & {
  [K in Key]?: z.output<Field>;
};

/** Columns a mapping reads that a file of a source lacks, as the configuration check reports them. */
export interface MissingColumns {
  /** The columns read and lacking, in the mapping's order. */
  missing: string[];
  /** The columns there are (the message's "expected one of"). */
  present: string[];
  /** Where those columns are declared or read, as the message names it: `the header of k.csv (k.csv:1)`. */
  where: string;
}

/** What the configuration check gives a format's `missingColumns`. */
export interface ColumnsCheck {
  /** The columns the source's mapping reads. */
  required: ReadonlySet<string>;
  /** The pipeline file, as messages show it (where declared columns are written). */
  pipelineFile: string;
  signal?: AbortSignal | undefined;
}

/** One format. `Key`/`Field`: its options (`never`/`z.ZodNever` for a format without any). */
export interface Format<Key extends string = never, Field extends z.ZodType = z.ZodNever> {
  /** How the `format:` list of the pipeline schema names and explains it, e.g. `jsonl (one object a line)`. */
  summary: string;
  /** Its options, or null when it has none. */
  options: FormatOptions<Key, Field> | null;
  read(source: FormatSource<Key, Field>, file: SourceFile, options: ReadOptions): AsyncGenerator<(SourceRow | SourceRowError)[]>;
  /**
   * How a file is cut into ranges that start at records and read from one (parallel reading,
   * resume); `read` then honours `from`. Null: every read of a file starts at its start, a
   * resumed run re-reads the file (the ledger skips what it holds) and one thread reads it.
   */
  splitter: Splitter<Key, Field> | null;
  /**
   * The character between a record's cells when a record is shown on one line and in a
   * corrections file of shape `csv` (CSV: its delimiter); null for the default, a comma.
   */
  cellDelimiter: ((source: FormatSource<Key, Field>) => string) | null;
  /** The reader fills in the tally it is given: the independent count of docs/reconciliation.md. */
  tallies: boolean;
  /** The record at a provenance's byte offset, in the source's columns (`columns`: the file's header, when known). */
  rowAt(path: string, byteOffset: number, format: RecordFormat<Key, Field>, columns?: string[]): Promise<RawRow>;
  /** The columns every record of a file has (a header, declared columns or a layout); undefined when records name their own (JSON). */
  header(path: string, format: RecordFormat<Key, Field>): Promise<string[] | undefined>;
  /**
   * The configuration check before a run touches the platform (read/configuration.ts): the
   * columns of `check.required` that `file` lacks, found from what the format declares (a layout)
   * or reads of the file's head only (a header), so a mapping that reads a column no record has
   * stops the run before a migration is created; undefined when it lacks none. A configuration
   * error met on the way (a header that is no text in the declared encoding) is thrown; any other
   * (a file that cannot be opened) is left to the run, which reports it where it reads. Null when
   * the format cannot tell before reading: its records name their own fields (JSON), or its
   * columns cannot be read without reading the whole file (say why where it is defined).
   */
  missingColumns: ((source: FormatSource<Key, Field>, file: SourceFile, check: ColumnsCheck) => Promise<MissingColumns | undefined>) | null;
  /**
   * The shape of its corrections file: `csv` (one column per header column, read back as CSV: the
   * source's columns must be its header's) or `jsonl` (one object a line, types and nesting kept).
   */
  corrections: 'csv' | 'jsonl';
  /**
   * The key pass's fast path: marks the key column's value of every record without building
   * rows, and says whether it could (false: the pass reads rows instead). Null when the format has none.
   */
  scanKeys:
    | ((
        source: FormatSource<Key, Field>,
        file: SourceFile,
        column: string,
        signal: AbortSignal | undefined,
        mark: (raw: string) => void,
      ) => Promise<boolean>)
    | null;
}

/**
 * Declares a format (the types of its options flow from `options.field` into its readers).
 * @example export const jsonlFormat = defineFormat({ summary: 'jsonl (one object a line)', options: null, … });
 */
export function defineFormat<Key extends string = never, Field extends z.ZodType = z.ZodNever>(
  format: Format<Key, Field>,
): Format<Key, Field> {
  return format;
}

/** What every file reader takes from the source and the read options alike (the rest is each format's). */
export function commonReadOptions(source: { name: string; encoding: SourceEncoding }, file: SourceFile, options: ReadOptions) {
  return {
    source: source.name,
    path: file.path,
    file: file.file,
    encoding: source.encoding,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.hashRows === false ? { hashRows: false } : {}),
    ...(options.tally ? { tally: options.tally } : {}),
  };
}
