/**
 * Sources: the files a pipeline source names (a glob, read in sorted order) and the format
 * registry, the one place a format is plugged in. A format is a folder (`<format>/core.ts`, pure:
 * text in, rows and row errors out, plus an independent count into the file's tally;
 * `<format>/stream.ts`, the thin file wrapper) and one entry in `SOURCE_FORMATS` below, plus its options
 * in the pipeline schema. Everything downstream (mapping, checks, runner, plan) reads rows
 * through `readSourceBatches` and never asks which format it is. docs/pipelines.md: "Adding a format".
 */
import { lstatSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { StagecoachError } from '../../contract/errors.js';
import type { SourceRow, SourceRowError } from '../types.js';
import type { SourceDefinition } from '../definition/load-pipeline.js';
import { displayPath } from '../definition/load-pipeline.js';
import type { SourceFormat } from '../definition/schema.js';
import { csvHeader, readCsvBatches, scanCsvKeys, type CsvRange } from './csv/index.js';
import { csvRowAt } from './csv/row-at.js';
import { detectEncoding } from './encoding.js';
import { readJsonArrayBatches, readJsonLinesBatches } from './json/stream.js';
import { jsonRowAt } from './json/row-at.js';
import { readFixedWidthBatches } from './fixed-width/stream.js';
import { fixedWidthHeader, fixedWidthRowAt } from './fixed-width/row-at.js';
import type { RawRow, RowFormat } from './row-at.js';
import { readXlsxBatches } from './xlsx/stream.js';
import { xlsxColumns, xlsxRowAt } from './xlsx/row-at.js';
import type { SourceTally } from './tally.js';

export { newTally, tallyDisagreement, type SourceTally } from './tally.js';
export type { RawRow, RowFormat } from './row-at.js';

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
  /** CSV: the record delimiter found at the file's start, so every range splits records alike. */
  recordDelimiter?: '\n' | '\r\n';
}

/** What every format's `read` takes. */
export interface ReadOptions {
  signal?: AbortSignal | undefined;
  /** Hash each row into its provenance (default true); `plan`, which keeps no ledger, skips it. */
  hashRows?: boolean | undefined;
  /** Columns the mapping reads: a header without one of them is a configuration error. */
  requiredColumns?: ReadonlySet<string> | undefined;
  /** Start at a record boundary instead of byte 0 (formats with `canSplit`). */
  from?: SourceStart | undefined;
  /** The file's two-way count, filled in as the read goes (formats with `tallies`). */
  tally?: SourceTally | undefined;
}

/** One format: how to read a file of it, and what it can do besides. Every member is required, so
 * the compiler points a new format at each decision it has to make. */
export interface Format {
  read(source: SourceDefinition, file: SourceFile, options: ReadOptions): AsyncGenerator<(SourceRow | SourceRowError)[]>;
  /** The format can start at a byte offset that begins a record (parallel reading, resume); `read` then honours `from`. */
  canSplit: boolean;
  /** The reader fills in the tally it is given (the independent count of docs/pipelines.md). */
  tallies: boolean;
  /** The record at a provenance's byte offset, in the source's columns (`columns`: the file's header, when known). */
  rowAt(path: string, byteOffset: number, format: RowFormat, columns?: string[]): Promise<RawRow>;
  /** The columns every record of a file has (a header, declared columns or a layout); undefined when records name their own (JSON). */
  header(path: string, format: RowFormat): Promise<string[] | undefined>;
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
        source: SourceDefinition,
        file: SourceFile,
        column: string,
        signal: AbortSignal | undefined,
        mark: (raw: string) => void,
      ) => Promise<boolean>)
    | null;
}

const common = (source: SourceDefinition, file: SourceFile, options: ReadOptions) => ({
  source: source.name,
  path: file.path,
  file: file.file,
  encoding: source.encoding,
  ...(options.signal ? { signal: options.signal } : {}),
  ...(options.hashRows === false ? { hashRows: false } : {}),
  ...(options.tally ? { tally: options.tally } : {}),
});

const csvRange = (from: SourceStart): CsvRange => ({
  start: from.byteOffset,
  line: from.line,
  ...(from.end !== undefined ? { end: from.end } : {}),
  ...(from.columns ? { columns: from.columns } : {}),
  ...(from.recordDelimiter ? { recordDelimiter: from.recordDelimiter } : {}),
});

/** The format registry: format name (schema.ts FORMATS) → its reader. */
export const SOURCE_FORMATS: Record<SourceFormat, Format> = {
  csv: {
    canSplit: true,
    tallies: true,
    rowAt: csvRowAt,
    header: (path, format) => csvHeader(path, format),
    corrections: 'csv',
    async scanKeys(source, file, column, signal, mark) {
      const enc = await detectEncoding(file.path, file.file, source.encoding);
      if (enc.node === 'utf16le') return false; // the scanner reads bytes; UTF-16 goes through the rows
      const { delimiter, quote, header, columns } = source.csv;
      await scanCsvKeys({ path: file.path, file: file.file, enc, delimiter, quote, header, columns, column, signal }, mark);
      return true;
    },
    read: (source, file, options) =>
      readCsvBatches({
        ...common(source, file, options),
        csv: source.csv,
        ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
        ...(options.from ? { range: csvRange(options.from) } : {}),
      }),
  },
  json: {
    canSplit: false,
    tallies: true,
    rowAt: jsonRowAt,
    header: async () => undefined,
    corrections: 'jsonl',
    scanKeys: null,
    read: (source, file, options) => readJsonArrayBatches({ ...common(source, file, options), arrayPath: source.json.path }),
  },
  jsonl: {
    canSplit: false,
    tallies: true,
    rowAt: jsonRowAt,
    header: async () => undefined,
    corrections: 'jsonl',
    scanKeys: null,
    read: (source, file, options) => readJsonLinesBatches(common(source, file, options)),
  },
  'fixed-width': {
    canSplit: false,
    tallies: true,
    rowAt: (path, byteOffset, format) => fixedWidthRowAt(path, byteOffset, format),
    header: async (_path, format) => fixedWidthHeader(format),
    corrections: 'csv',
    scanKeys: null,
    read: (source, file, options) =>
      readFixedWidthBatches({
        ...common(source, file, options),
        fixedWidth: source.fixedWidth!,
        ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
      }),
  },
  xlsx: {
    canSplit: false,
    tallies: false,
    rowAt: (path, rowNumber, format) => xlsxRowAt(path, rowNumber, format),
    header: xlsxColumns,
    corrections: 'csv',
    scanKeys: null,
    read: (source, file, options) =>
      readXlsxBatches({
        ...common(source, file, options),
        xlsx: source.xlsx,
        ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
      }),
  },
};

/**
 * The files of a source, sorted, each read once: two paths to one file (a recursive glob through
 * a symlinked folder) count as the first. A glob that matches nothing is a configuration error,
 * and a path that names something other than a regular file says what it is.
 * @example await listSourceFiles(def.dir, def.sources[0]) // [{ path: '/…/samples/crm/klanten.csv', file: 'samples/crm/klanten.csv' }]
 */
export async function listSourceFiles(dir: string, source: Pick<SourceDefinition, 'name' | 'path'>): Promise<SourceFile[]> {
  const paths = await glob(source.path, { cwd: dir, absolute: true, onlyFiles: true, expandDirectories: false });
  if (paths.length === 0) {
    const named = isDynamicPattern(source.path) ? undefined : notARegularFile(resolve(dir, source.path));
    throw new StagecoachError(
      'CONFIG_INVALID',
      `source ${source.name}: ${named ?? `${JSON.stringify(source.path)} matches no file`} (relative to ${displayPath(dir) || '.'})`,
      { field: 'path', value: source.path },
    );
  }
  const seen = new Set<string>();
  const files: SourceFile[] = [];
  for (const p of paths.sort()) {
    const real = await realpath(p);
    if (seen.has(real)) continue;
    seen.add(real);
    files.push({ path: resolve(p), file: displayPath(p) });
  }
  return files;
}

/** Why a path the glob passed over is no source file, or undefined when it is simply absent. */
function notARegularFile(path: string): string | undefined {
  const shown = displayPath(path);
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return `symlink loop at ${shown}: its links lead back to themselves, expected a regular file`;
    if (code === 'ENOENT' && lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink())
      return `${shown} is a symlink to ${readlinkSync(path)}, which does not exist`;
    return undefined;
  }
  const kind = stats.isFIFO()
    ? 'a FIFO (named pipe)'
    : stats.isSocket()
      ? 'a socket'
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? 'a device'
        : stats.isDirectory()
          ? 'a folder'
          : undefined;
  if (!kind) return undefined;
  const hint = stats.isDirectory() ? `name its files, e.g. ${shown}/*.csv` : 'copy what it delivers to a file and name that file';
  return `${shown} is ${kind}, not a regular file; ${hint}`;
}

/** Reads one file of a source in its format, row by row. */
export async function* readSourceFile(
  source: SourceDefinition,
  file: SourceFile,
  options: ReadOptions = {},
): AsyncGenerator<SourceRow | SourceRowError> {
  for await (const batch of readSourceBatches(source, file, options)) yield* batch;
}

/**
 * Reads one file of a source in batches of rows (one await per batch: the hot path).
 * `range` is the parallel CSV reader's name for `from` (kept while the runner moves to `from`).
 */
export function readSourceBatches(
  source: SourceDefinition,
  file: SourceFile,
  options: ReadOptions & { range?: CsvRange | undefined } = {},
): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { range, ...rest } = options;
  const from = rest.from ?? (range ? { byteOffset: range.start, ...range } : undefined);
  return SOURCE_FORMATS[source.format].read(source, file, { ...rest, from });
}

/** Whether the format fills in a tally (so plan, ledger and report can show its count). */
export function formatTallies(format: SourceFormat): boolean {
  return SOURCE_FORMATS[format].tallies;
}

/** The format of a source, from the registry. */
export function formatOf(format: SourceFormat): Format {
  return SOURCE_FORMATS[format];
}

/**
 * Reads the record that starts at `byteOffset` of `file`, in its format.
 * @example
 *   const row = await readRowAt('samples/crm/persons.csv', 812, { format: 'csv', encoding: 'auto', csv: { delimiter: ';' } });
 *   row.values // { klantnr: '1014', voorletters: 'J.', … }
 */
export function readRowAt(file: string, byteOffset: number, format: RowFormat, columns?: string[]): Promise<RawRow> {
  return SOURCE_FORMATS[format.format].rowAt(file, byteOffset, format, columns);
}

export function isSourceRowError(row: SourceRow | SourceRowError): row is SourceRowError {
  return (row as SourceRowError).code !== undefined;
}
