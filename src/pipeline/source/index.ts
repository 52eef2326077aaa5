/**
 * Sources: the files a pipeline source names (a glob, read in sorted order) and the format
 * registry, the one place a format is plugged in. A format is a folder exporting one `Format`
 * (format.ts: its options, reader, splitting, record read-back, header and corrections shape)
 * and one line in `SOURCE_FORMATS` below. The pipeline schema is built from the registry, and
 * everything downstream (mapping, checks, runner, plan, reports) reads rows through
 * `readSourceBatches` and never asks which format it is. docs/pipelines.md: "Adding a format".
 */
import { lstatSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { escapePath, glob, isDynamicPattern } from 'tinyglobby';
import type { z } from 'zod';
import { StagecoachError } from '../../contract/errors.js';
import type { SourceRow, SourceRowError } from '../types.js';
import { csvFormat } from './csv/format.js';
import { displayPath } from './display-path.js';
import type { SourceEncoding } from './encoding.js';
import { fixedWidthFormat } from './fixed-width/format.js';
import type { Format, FormatOptions, ReadOptions, SourceFile } from './format.js';
import { jsonFormat, jsonlFormat } from './json/format.js';
import type { RawRow } from './row-at.js';
import { xlsxFormat } from './xlsx/format.js';

export { newTally, tallyDisagreement, type SourceTally } from './tally.js';
export type { RawRow } from './row-at.js';
export type { FileSplit, Format, MissingColumns, RangeOutcome, ReadOptions, RecordChunk, SourceFile, SourceStart } from './format.js';
export { ENCODINGS, type SourceEncoding } from './encoding.js';
export { displayPath } from './display-path.js';

/** The format registry: a source's `format:` name → its format (the order the schema lists them in). */
export const SOURCE_FORMATS = {
  csv: csvFormat,
  json: jsonFormat,
  jsonl: jsonlFormat,
  'fixed-width': fixedWidthFormat,
  xlsx: xlsxFormat,
};

type Registry = typeof SOURCE_FORMATS;
export type SourceFormat = keyof Registry;
/** The format names, in registry order. */
export const FORMATS = Object.keys(SOURCE_FORMATS) as [SourceFormat, ...SourceFormat[]];

/** Any registered format, seen without its options' types (how the dispatch below calls it). */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds formats of different option types; each is checked where it is defined
type AnyFormat = Format<string, any>;
// biome-ignore lint/suspicious/noExplicitAny: as above
type AnyFormatOptions = FormatOptions<string, any>;

type OptionsOf<F> = F extends { options: FormatOptions<infer K, infer S> | null } ? [K, S] : never;
/** The options fields every source has, one per format that has options: `{ csv: <its zod field>, … }`. */
export type FormatOptionFields = { [F in SourceFormat as OptionsOf<Registry[F]>[0]]: OptionsOf<Registry[F]>[1] };

/** The options of every format with options, in registry order. */
export function formatOptions(): { format: SourceFormat; options: AnyFormatOptions }[] {
  return FORMATS.flatMap((format) => {
    const options = (SOURCE_FORMATS[format] as AnyFormat).options;
    return options ? [{ format, options }] : [];
  });
}

/** The reading options of a source that matter for one record: its format, encoding and format options (as a pipeline file may write them). */
export type RowFormat = { format: SourceFormat; encoding: SourceEncoding } & {
  [K in keyof FormatOptionFields]?: z.input<FormatOptionFields[K]> | undefined;
};

/** The reading options of a source for `readRowAt`: every format's options key it holds, whatever its format. */
export function rowFormatOf(source: RowFormat): RowFormat {
  const picked: Record<string, unknown> = { format: source.format, encoding: source.encoding };
  for (const { options } of formatOptions()) {
    const value = (source as Record<string, unknown>)[options.key];
    if (value !== undefined) picked[options.key] = value;
  }
  return picked as RowFormat;
}

/**
 * The files of a source, sorted, each read once: two paths to one file (a recursive glob through
 * a symlinked folder) count as the first. A glob that matches nothing is a configuration error,
 * and a path that names something other than a regular file says what it is.
 * @example await listSourceFiles(def.dir, def.sources[0]) // [{ path: '/…/samples/crm/klanten.csv', file: 'samples/crm/klanten.csv' }]
 */
export async function listSourceFiles(dir: string, source: { name: string; path: string }): Promise<SourceFile[]> {
  const { cwd, pattern } = globBase(dir, source.path);
  const paths = await glob(pattern, { cwd, absolute: true, onlyFiles: true, expandDirectories: false });
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

/**
 * The folder a source path's glob starts from and the pattern below it: the path's leading
 * segments that hold no glob character are resolved as a path (`..` past the file system's root
 * stays at the root, as a shell has it), so a path with more `../` than the folder is deep names
 * the file it names, which the glob alone did not find.
 * @example globBase('/a/b', '../../../../x/*.csv') // { cwd: '/x', pattern: '*.csv' }
 */
function globBase(dir: string, path: string): { cwd: string; pattern: string } {
  const parts = path.split('/');
  let i = 0;
  while (i < parts.length - 1 && !isDynamicPattern(parts[i]!)) i++;
  if (i === 0) return { cwd: dir, pattern: path };
  const rest = parts.slice(i).join('/');
  return { cwd: resolve(dir, parts.slice(0, i).join('/') || '/'), pattern: isDynamicPattern(rest) ? rest : escapePath(rest) };
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
  source: ReadableSource,
  file: SourceFile,
  options: ReadOptions = {},
): AsyncGenerator<SourceRow | SourceRowError> {
  for await (const batch of readSourceBatches(source, file, options)) yield* batch;
}

/** A source as every format reads it: its name, format, encoding and the options of the formats. */
export type ReadableSource = { name: string; format: SourceFormat; encoding: SourceEncoding } & {
  [K in keyof FormatOptionFields]?: z.output<FormatOptionFields[K]>;
};

/** Reads one file of a source in batches of rows (one await per batch: the hot path), from its start or from `options.from`. */
export function readSourceBatches(
  source: ReadableSource,
  file: SourceFile,
  options: ReadOptions = {},
): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  return formatOf(source.format).read(source, file, options);
}

/**
 * The character between a record's cells when it is shown on one line or written to a
 * corrections file of shape `csv`: the format's (CSV: its delimiter), else a comma.
 */
export function cellDelimiter(source: RowFormat): string {
  const f = formatOf(source.format);
  // biome-ignore lint/suspicious/noExplicitAny: the format reads only its own options, filled in with their defaults
  return f.cellDelimiter?.({ name: '', ...withDefaults(f, source) } as any) ?? ',';
}

/** Whether the format fills in a tally (so plan, ledger and report can show its count). */
export function formatTallies(format: SourceFormat): boolean {
  return SOURCE_FORMATS[format].tallies;
}

/** The format of a source, from the registry. */
export function formatOf(format: SourceFormat): AnyFormat {
  return SOURCE_FORMATS[format] as AnyFormat;
}

/**
 * Reads the record that starts at `byteOffset` of `file`, in its format (its options' defaults filled in).
 * @example
 *   const row = await readRowAt('samples/crm/persons.csv', 812, { format: 'csv', encoding: 'auto', csv: { delimiter: ';' } });
 *   row.values // { klantnr: '1014', voorletters: 'J.', … }
 */
export function readRowAt(file: string, byteOffset: number, format: RowFormat, columns?: string[]): Promise<RawRow> {
  const f = formatOf(format.format);
  return f.rowAt(file, byteOffset, withDefaults(f, format), columns);
}

/** The columns every record of `file` has in its format (undefined when records name their own). */
export function readHeader(file: string, format: RowFormat): Promise<string[] | undefined> {
  const f = formatOf(format.format);
  return f.header(file, withDefaults(f, format));
}

/** The format's own options of `format`, validated with their defaults filled in. */
function withDefaults(f: AnyFormat, format: RowFormat) {
  const spec: Record<string, unknown> = { encoding: format.encoding };
  if (f.options) spec[f.options.key] = f.options.field.parse((format as Record<string, unknown>)[f.options.key]);
  return spec as { encoding: SourceEncoding };
}

export function isSourceRowError(row: SourceRow | SourceRowError): row is SourceRowError {
  return (row as SourceRowError).code !== undefined;
}
