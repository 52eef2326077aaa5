/**
 * Corrections files: the rows a migration refused, written by the report in their original
 * columns for an engineer to fix, and read back as just another source with its own dialect —
 * UTF-8 as written, its own header (`_source`, the original columns, the error columns, and
 * `_row_hash`), `,` or `;` as written; JSON Lines for JSON sources. The writer
 * (src/reconcile/corrections.ts) and this reader share the dialect below, so a file written by
 * one is read by the other whatever the original source's encoding or delimiter.
 *
 * Columns whose name starts with `_`, and the error columns, are metadata and never reach the
 * mapping. `_origin` names the export row (file:line) the refused record stands for: a corrected
 * row is tied to its record by it, not by its key, which the correction may change
 * (src/ledger/corrections.ts). `_row_hash` is the fingerprint of the row as written: a row
 * that comes back unchanged can be told from one the engineer fixed (a duplicate returned
 * unedited must not replace the row that staged). A column the engineer added to a CSV file (a
 * remark) is none of the source's: it is left out of the row and its fingerprint, with a note.
 */
import { showValue } from '../../contract/cut.js';
import { isUtf8 } from 'node:buffer';
import { open, readFile, readdir, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { StagecoachError } from '../../contract/errors.js';
import type { PipelineDefinition, SourceDefinition } from '../definition/load-pipeline.js';
import { displayPath } from '../definition/load-pipeline.js';
import { cellDelimiter, formatOf, listSourceFiles, readHeader, readSourceFile, type RowFormat } from '../source/index.js';
import { sha256Hex } from '../source/row-hash.js';
import type { SourceRow, SourceRowError } from '../types.js';

/** The error columns a corrections file adds after the original columns. */
export const ERROR_COLUMNS = ['error_field', 'error_code', 'error_message', 'error_stage'] as const;
/** The source a row belongs to (first column), and the row's fingerprint as written (last column). */
export const SOURCE_COLUMN = '_source';
export const ROW_HASH_COLUMN = '_row_hash';
/** The export row (file:line) a refused record stands for, right after `_source`: never shifted by a row's missing cells. */
export const ORIGIN_COLUMN = '_origin';
/** What of a refused row did not fit its columns (before the error columns): a row with it stays refused until it is emptied. */
export const EXTRA_COLUMN = '_extra';
/** Codes in `error_code` are joined by this when a row has several. */
export const CODE_SEPARATOR = ' | ';

const ERROR_SET: ReadonlySet<string> = new Set(ERROR_COLUMNS);
/** Metadata: never mapped, never part of the row's fingerprint. */
export const isMetaColumn = (column: string): boolean => column.startsWith('_') || ERROR_SET.has(column);

/**
 * How a corrections file of a source is written and read: in the shape its format registers
 * (`Format.corrections`). A shape is the corrections file's, not the source's: the writer
 * (src/reconcile/corrections.ts) and the reader here each know the two shapes, so every format
 * that picks one (CSV, fixed-width and XLSX pick `csv`) is written and read back alike.
 */
export function correctionsDialect(source: RowFormat): {
  shape: 'csv' | 'jsonl';
  extension: 'csv' | 'jsonl';
  delimiter: ',' | ';';
} {
  const shape = formatOf(source.format).corrections;
  return { shape, extension: shape, delimiter: cellDelimiter(source) === ';' ? ';' : ',' };
}

/** A cell as a corrections file holds it: strings as they are, anything nested as JSON. */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * The fingerprint of a row's own values (metadata left out), as the writer and the reader both
 * compute it: equal when the engineer left the row as it was written.
 */
export function rowFingerprint(values: Record<string, unknown>): string {
  const own = Object.entries(values)
    .filter(([k]) => !isMetaColumn(k))
    .map(([k, v]) => [k, cellText(v)]);
  return sha256Hex(JSON.stringify(own)).slice(0, 16);
}

/** One row of a corrections file, with what the report said of it. */
export interface CorrectionRow {
  row: SourceRow | SourceRowError;
  sourceName: string;
  /** The codes the row was refused with when the file was written. */
  codes: string[];
  /** The row is as the file was written (its `_row_hash` matches). */
  unchanged: boolean;
  /** The export row the refused record stands for (`_origin`), when the file says. */
  origin?: { file: string; line: number };
}

/** Columns of a corrections file that are none of its source's: left out of the rows. */
export interface IgnoredColumns {
  file: string;
  source: string;
  columns: string[];
}

export interface CorrectionsIndex {
  /** The files, as shown. */
  files: string[];
  rows(): AsyncGenerator<CorrectionRow>;
  /** Index of a corrections file in the run's file list (added on first use). */
  fileIndex(files: string[], file: string): number;
  /** The columns left out, per file (filled in as the rows are read). */
  ignoredColumns: IgnoredColumns[];
}

/** `file:line` as `_origin` holds it (the file may hold `:` itself). */
export function parseOrigin(text: unknown): { file: string; line: number } | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(.+):(\d+)$/.exec(text.trim());
  return m ? { file: m[1]!, line: Number(m[2]) } : undefined;
}

/**
 * A leading metadata cell (`_source`, `_origin`) of a row the reader could not take apart (a cell
 * too many or too few): the metadata columns come first, so they are where the header has them.
 */
function leadingCellOfRaw(raw: string | undefined, header: readonly string[], column: string, delimiter: string): string | undefined {
  const at = header.indexOf(column);
  if (raw === undefined || at < 0) return undefined;
  const cells = raw.split(delimiter);
  // Only unquoted leading cells are trusted: the metadata columns hold no delimiter.
  if (cells.slice(0, at + 1).some((c) => c.includes('"'))) return undefined;
  return cells[at];
}

/** The columns of a source as its first file holds them (its format's header; undefined when records name their own, or no file). */
export async function sourceColumns(def: PipelineDefinition, source: SourceDefinition): Promise<Set<string> | undefined> {
  const files = await listSourceFiles(def.dir, source).catch(() => []);
  if (files.length === 0) return undefined;
  const header = await readHeader(files[0]!.path, source).catch(() => []);
  return header ? new Set(header) : undefined;
}

const NO_COLUMNS: ReadonlySet<string> = new Set();

/** The corrections files a path names: a file, or every `*.corrections.csv|jsonl` of a folder. */
async function filesOf(path: string): Promise<string[]> {
  const abs = resolve(path);
  const s = await stat(abs).catch((err: NodeJS.ErrnoException) => {
    throw new StagecoachError('CONFIG_INVALID', `Cannot read the corrections file ${displayPath(abs)}: ${err.code ?? err.message}`, {
      file: path,
    });
  });
  if (!s.isDirectory()) return [abs];
  const names = (await readdir(abs)).filter((f) => /\.corrections\.(csv|jsonl)$/i.test(f)).sort();
  if (names.length === 0)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${displayPath(abs)} holds no corrections file (*.corrections.csv or *.corrections.jsonl)`,
      { file: path },
    );
  return names.map((n) => join(abs, n));
}

/**
 * The reading options of a corrections file: JSON Lines by extension, else CSV with the delimiter
 * its header uses. A file saved again by a spreadsheet keeps being read right: a byte-order mark
 * (UTF-8, UTF-16) says its encoding; without one, a file that is not valid UTF-8 is windows-1252
 * (what a spreadsheet on Windows saves "CSV" in); a header with tabs and neither `;` nor `,` is
 * tab-separated ("Unicode text").
 */
async function dialectOf(abs: string): Promise<Pick<SourceDefinition, 'format' | 'encoding' | 'csv' | 'json'>> {
  if (/\.(jsonl|ndjson)$/i.test(extname(abs)))
    return { format: 'jsonl', encoding: 'auto', csv: { delimiter: ',', quote: '"', header: true }, json: {} };
  // A corrections file is small: a run's refused rows.
  const bytes = await readFile(abs);
  const bom = bytes[0] === 0xef || bytes[0] === 0xff || bytes[0] === 0xfe;
  const utf16 = bytes[0] === 0xff ? 'utf-16le' : bytes[0] === 0xfe ? 'utf-16be' : undefined;
  const encoding = !bom && !isUtf8(bytes) ? 'windows-1252' : 'auto';
  const text = utf16 ? new TextDecoder(utf16).decode(bytes.subarray(0, 64 * 1024)) : bytes.subarray(0, 64 * 1024).toString('latin1');
  const first = text.replace(/^\ufeff/, '').split('\n')[0] ?? '';
  const delimiter = first.includes(';') && !first.includes(',') ? ';' : first.includes('\t') && !first.includes(',') ? '\t' : ',';
  return { format: 'csv', encoding, csv: { delimiter, quote: '"', header: true }, json: {} };
}

/**
 * Refuses, before a run records anything, a CSV corrections file that lacks a column of its
 * source: read by name, a column dropped would send its field empty for every row (reordered
 * columns are fine). The source is the one whose columns the header holds most of.
 * @example await checkCorrectionsColumns(['fixed.csv'], def) // throws CONFIG_INVALID naming the file and the columns
 */
export async function checkCorrectionsColumns(paths: readonly string[], def: PipelineDefinition): Promise<void> {
  const all = [...new Set((await Promise.all(paths.map(filesOf))).flat())];
  const columns = await Promise.all(def.sources.map(async (s) => ({ name: s.name, columns: await sourceColumns(def, s) })));
  for (const abs of all) {
    const dialect = await dialectOf(abs);
    if (dialect.format !== 'csv') continue;
    const header = new Set(((await readHeader(abs, dialect)) ?? []).filter((c) => !isMetaColumn(c)));
    const candidates = columns.filter((c) => c.columns && c.columns.size > 0);
    const overlap = (c: (typeof candidates)[number]) => [...c.columns!].filter((x) => header.has(x)).length;
    const best = candidates.sort((a, b) => overlap(b) - overlap(a))[0];
    if (!best) continue;
    const missing = [...best.columns!].filter((c) => !header.has(c));
    if (missing.length > 0)
      throw new StagecoachError(
        'CONFIG_INVALID',
        `${displayPath(abs)}: column${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of the source ${best.name} ${missing.length === 1 ? 'is' : 'are'} missing: a corrections file holds every column of its source (in any order), else its rows would be sent with ${missing.length === 1 ? 'that field' : 'those fields'} empty; nothing was sent`,
        { file: displayPath(abs), field: missing[0] },
      );
  }
}

/**
 * The corrections files of `paths` (files or folders), read in their own dialect. Given the same
 * file twice, it is read once.
 * @example const c = await readCorrections(['.stagecoach/reports/run-1'], def);
 *          for await (const { row, unchanged } of c.rows()) …
 */
export async function readCorrections(
  paths: string | readonly string[],
  def: PipelineDefinition,
  signal?: AbortSignal,
): Promise<CorrectionsIndex> {
  const all = [...new Set((await Promise.all((typeof paths === 'string' ? [paths] : paths).map(filesOf))).flat())];
  const names = new Set(def.sources.map((s) => s.name));
  const only = def.sources.length === 1 ? def.sources[0]!.name : undefined;
  const indexes = new Map<string, number>();
  const shown = all.map((f) => displayPath(f));
  const ignoredColumns: IgnoredColumns[] = [];
  const columnsOf = new Map<string, Promise<Set<string> | undefined>>();
  const originalColumns = (name: string) => {
    let c = columnsOf.get(name);
    if (!c) columnsOf.set(name, (c = sourceColumns(def, def.sources.find((s) => s.name === name)!)));
    return c;
  };
  /** The columns of `file` none of `source`'s holds (noted once per file and source). */
  const extrasOf = async (file: string, header: readonly string[], source: string): Promise<ReadonlySet<string>> => {
    const own = await originalColumns(source);
    if (!own || own.size === 0) return NO_COLUMNS;
    const extra = header.filter((c) => !isMetaColumn(c) && !own.has(c));
    if (extra.length === 0) return NO_COLUMNS;
    if (!ignoredColumns.some((n) => n.file === file && n.source === source)) ignoredColumns.push({ file, source, columns: extra });
    return new Set(extra);
  };
  return {
    files: shown,
    ignoredColumns,
    fileIndex(files, file) {
      let i = indexes.get(file);
      if (i === undefined) indexes.set(file, (i = files.push(file) - 1));
      return i;
    },
    async *rows() {
      for (const [i, abs] of all.entries()) {
        const file = shown[i]!;
        const dialect = await dialectOf(abs);
        const source = { ...dialect, name: '_corrections', path: abs, mapping: '' } as unknown as SourceDefinition;
        const header = (await readHeader(abs, dialect)) ?? [];
        const delimiter = cellDelimiter(dialect);
        for await (const row of readSourceFile(source, { path: abs, file }, { ...(signal ? { signal } : {}) })) {
          if ('code' in row) {
            const origin = parseOrigin(leadingCellOfRaw(row.raw, header, ORIGIN_COLUMN, delimiter));
            // Its source as its `_source` cell names it (a pipeline of several sources), so the
            // refusal stays the source's and the next corrections file lists the row again.
            const named = leadingCellOfRaw(row.raw, header, SOURCE_COLUMN, delimiter);
            const own = only ?? (named !== undefined && names.has(named) ? named : undefined);
            yield {
              row: { ...row, source: own ?? '_corrections' },
              sourceName: own ?? def.sources[0]!.name,
              codes: [],
              unchanged: false,
              ...(origin ? { origin } : {}),
            };
            continue;
          }
          const sourceName = String(row.values[SOURCE_COLUMN] ?? only ?? '');
          if (!names.has(sourceName)) {
            const error: SourceRowError = {
              source: '_corrections',
              provenance: row.provenance,
              code: 'SOURCE_ROW_INVALID',
              message: `${file}:${row.provenance.line}: ${SOURCE_COLUMN} must name a source of ${def.file} (${[...names].join(', ')}), got ${JSON.stringify(row.values[SOURCE_COLUMN] ?? '')}`,
            };
            yield { row: error, sourceName: def.sources[0]!.name, codes: [], unchanged: false };
            continue;
          }
          const extraText = String(row.values[EXTRA_COLUMN] ?? '');
          if (extraText !== '') {
            const error: SourceRowError = {
              source: sourceName,
              provenance: row.provenance,
              code: 'SOURCE_ROW_INVALID',
              message: `${file}:${row.provenance.line}: ${EXTRA_COLUMN} holds ${showValue(extraText)}, what of the row did not fit the source's columns; expected the values moved into their columns and ${EXTRA_COLUMN} emptied`,
              raw: extraText.slice(0, 200),
            };
            const origin = parseOrigin(row.values[ORIGIN_COLUMN]);
            yield { row: error, sourceName, codes: [], unchanged: false, ...(origin ? { origin } : {}) };
            continue;
          }
          const written = row.values[ROW_HASH_COLUMN];
          const codes = String(row.values.error_code ?? '')
            .split(CODE_SEPARATOR)
            .map((c) => c.trim())
            .filter(Boolean);
          const extra = await extrasOf(file, header, sourceName);
          const values: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(row.values)) if (!isMetaColumn(k) && !extra.has(k)) values[k] = v;
          const unchanged = typeof written === 'string' && written !== '' && written === rowFingerprint(values);
          const origin = parseOrigin(row.values[ORIGIN_COLUMN]);
          yield {
            row: { source: sourceName, values, provenance: row.provenance },
            sourceName,
            codes,
            unchanged,
            ...(origin ? { origin } : {}),
          };
        }
      }
    },
  };
}

/**
 * Whether a file is a corrections file (written by the report), and then how to read one row of
 * it: the rows re-staged from a corrections file carry it as their provenance, and a later
 * report must re-read them in the corrections dialect, not the original source's.
 */
export async function correctionsFormatOf(path: string): Promise<Pick<SourceDefinition, 'format' | 'encoding' | 'csv'> | undefined> {
  try {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const first =
        buf
          .subarray(0, bytesRead)
          .toString('utf8')
          .replace(/^\ufeff/, '')
          .split('\n')[0] ?? '';
      if (!first.includes('error_code')) return undefined;
      const d = await dialectOf(path);
      return { format: d.format, encoding: d.encoding, csv: d.csv };
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}
