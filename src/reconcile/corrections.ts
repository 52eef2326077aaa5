/**
 * Corrections files: the legacy rows the migration refused (rejected before upload, refused by
 * staging, invalid in validation), one file per pipeline source, in the source's ORIGINAL
 * columns re-read from the legacy file by provenance, with four columns added:
 * `error_field, error_code, error_message, error_stage`, and `_row_hash` (the row's fingerprint
 * as written, so an unedited row can be told apart). The engineer fixes the values in a
 * spreadsheet or editor and hands the file back to `stagecoach run <pipeline> --corrections
 * <file>`, which re-stages only those rows (same legacy keys, so the same referenceIds). The
 * dialect is shared with the reader (src/pipeline/checks/corrections.ts); a row that was itself
 * re-staged from a corrections file is re-read in that dialect, not the original source's.
 * A row refused for its number of columns is written with the cells it has, so it stays refused
 * until it is fixed. Files are written owner-only (0600): they hold the refused rows' personal data.
 *
 * The files are what `readCorrections` (src/pipeline/checks/corrections.ts) reads back, in the
 * shape the source's format registers (`Format.corrections`):
 * - `csv` (CSV, fixed-width, XLSX): `<source>.corrections.csv`, one column per column of the
 *   source's header (or layout), UTF-8 with a byte-order mark (spreadsheet programs then open
 *   accented names right), `;` when the source uses `;` and `,` otherwise, `"` quotes;
 * - `jsonl` (JSON, JSON Lines): `<source>.corrections.jsonl`, one original object a line, so
 *   nested values and types survive the round trip;
 * - when the pipeline has several sources, a leading `_source` column names the source (columns
 *   starting with `_` never reach the mapping).
 */
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { once } from 'node:events';
import { StagecoachError } from '../contract/errors.js';
import {
  CODE_SEPARATOR,
  cellText,
  correctionsDialect,
  correctionsFormatOf,
  ERROR_COLUMNS,
  EXTRA_COLUMN,
  isMetaColumn,
  ORIGIN_COLUMN,
  ROW_HASH_COLUMN,
  rowFingerprint,
  SOURCE_COLUMN,
} from '../pipeline/checks/corrections.js';
import { readHeader, readRowAt, type RowFormat } from '../pipeline/source/index.js';

export { ERROR_COLUMNS };

/** A refused record as the ledger knows it. */
export interface RefusedRecord {
  source: string;
  provenance: { file: string; line: number; byteOffset: number };
  /** The export row the record stands for (`_origin`); its provenance when absent. */
  origin?: { file: string; line: number };
  errors: Array<{ field: string; code: string; message: string; stage: string }>;
}

export interface CorrectionSource extends RowFormat {
  name: string;
  /**
   * A CSV source's own columns (its export's header): the file's columns whatever a corrections
   * file read back held besides (a remark column added in a spreadsheet is not carried on).
   */
  columns?: readonly string[];
}

export interface CorrectionsFile {
  source: string;
  file: string;
  rows: number;
  /**
   * Set when the source's legacy rows could not be read back (the export moved or changed since
   * the run: the reason, naming the file): then no file is at `file`, and `rows` counts the
   * refused rows left out. They stay in the ledger and the report; `report` run again where the
   * export is writes them.
   */
  unreadable?: string;
}

/**
 * Why a legacy file cannot be read back (gone, moved, refused), worded as the sources word it
 * (`Cannot read <file>: ENOENT`); undefined for any other error, which is a fault of ours.
 */
function readFailure(err: unknown): string | undefined {
  if (err instanceof StagecoachError) return err.code === 'SOURCE_READ_FAILED' ? err.message : undefined;
  const { code, path } = (err ?? {}) as NodeJS.ErrnoException;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) && path ? `Cannot read ${path}: ${code}` : undefined;
}

/**
 * Quotes one CSV field when it must be: it holds the delimiter, the quote, a line break, or
 * leading/trailing blanks a reader might trim.
 */
export function csvField(value: string, delimiter = ',', quote = '"'): string {
  if (value === '') return '';
  const needs = value.includes(delimiter) || value.includes(quote) || /[\r\n]/.test(value) || /^\s|\s$/.test(value);
  return needs ? `${quote}${value.split(quote).join(quote + quote)}${quote}` : value;
}

/** A refused row's message as the corrections file shows it: what is wrong, and what to do. */
function advice(e: RefusedRecord['errors'][number]): string {
  const what = e.message.includes(e.code) && e.message.trim() === e.code ? `${e.field || 'the row'} was refused (${e.code})` : e.message;
  const todo: Record<string, string> = {
    DUPLICATE_LEGACY_KEY: 'give this row its own key if it is another counterparty, or leave the row out',
    SOURCE_ROW_INVALID: 'make the row hold exactly the columns of the header',
    MISSING_REQUIRED_FIELD: 'fill in the value',
    RELATION_TARGET_MISSING: 'correct the key it points at, or empty it',
    CHILD_ORPHAN: 'correct the parent key it names, or leave the row out',
    CHILD_DUPLICATE: 'leave the row out, or give it its own id',
    CHILD_PARENT_REFUSED: "correct its parent row (in the parent source's corrections file); this row comes back with it",
  };
  // A message that carries its own advice after ' — ' (relation-targets.ts) keeps it alone.
  if (what.includes(' — ')) return what;
  const hint = todo[e.code] ?? 'correct the value';
  return `${what} — ${hint}`;
}

/**
 * Writes one corrections file per source that has refused records, in `outDir`. `baseDir`
 * resolves the provenance paths (the pipeline's folder). Records may come in any order; one
 * file per source stays open until the end. A source whose legacy rows cannot be read back gets
 * no file (not one with rows missing): its entry says why (`unreadable`), and the other sources
 * are written.
 * @example
 *   const files = await writeCorrections(refused, sources, '.stagecoach/reports/run-1', 'pipelines');
 */
export async function writeCorrections(
  records: AsyncIterable<RefusedRecord> | Iterable<RefusedRecord>,
  sources: readonly CorrectionSource[],
  outDir: string,
  baseDir: string,
): Promise<CorrectionsFile[]> {
  await mkdir(outDir, { recursive: true });
  const multi = sources.length > 1;
  type Open = { out: ReturnType<typeof createWriteStream>; columns: string[]; rows: number; file: string; delimiter: string; csv: boolean };
  const open = new Map<string, Open>();
  const formats = new Map<string, RowFormat | undefined>(); // provenance file → its corrections dialect, if it is one
  // provenance file → its header (undefined: records name their own), read once: read again for every row, it doubled the time a row takes
  const headers = new Map<string, string[] | undefined>();
  const headerOf = async (path: string, format: RowFormat): Promise<string[] | undefined> => {
    if (!headers.has(path)) headers.set(path, await readHeader(path, format));
    return headers.get(path);
  };
  const write = async (o: Open, text: string) => {
    if (!o.out.write(text)) await once(o.out, 'drain');
  };
  const line = (fields: string[], delimiter: string) => `${fields.map((v) => csvField(v, delimiter)).join(delimiter)}\r\n`;
  const unreadable = new Map<string, { file: string; rows: number; reason: string }>();
  try {
    for await (const rec of records) {
      const source = sources.find((s) => s.name === rec.source);
      if (!source) continue;
      const failed = unreadable.get(rec.source);
      if (failed) {
        failed.rows++;
        continue;
      }
      try {
        await writeRecord(rec, source);
      } catch (err) {
        const reason = readFailure(err);
        if (reason === undefined) throw err;
        // No file rather than one with rows missing: the one begun goes, as does one an earlier report left at that place.
        const o = open.get(rec.source);
        open.delete(rec.source);
        if (o) {
          o.out.end();
          await once(o.out, 'close');
        }
        const file = o?.file ?? join(outDir, `${rec.source}.corrections.${correctionsDialect(source).extension}`);
        await rm(file, { force: true });
        unreadable.set(rec.source, { file, rows: 1 + (o?.rows ?? 0), reason });
      }
    }
  } finally {
    for (const o of open.values()) {
      o.out.end();
      await once(o.out, 'close');
    }
  }
  return [
    ...[...open.entries()].map(([source, o]) => ({ source, file: o.file, rows: o.rows })),
    ...[...unreadable.entries()].map(([source, u]) => ({ source, file: u.file, rows: u.rows, unreadable: u.reason })),
  ];

  async function writeRecord(rec: RefusedRecord, source: CorrectionSource): Promise<void> {
    const path = isAbsolute(rec.provenance.file) ? rec.provenance.file : resolve(baseDir, rec.provenance.file);
    if (!formats.has(path)) formats.set(path, await correctionsFormatOf(path));
    const fromCorrections = formats.get(path);
    const dialect = correctionsDialect(source);
    let o = open.get(rec.source);
    if (!o) {
      const file = join(outDir, `${rec.source}.corrections.${dialect.extension}`);
      const csv = dialect.shape === 'csv'; // one column per source column; else one object a line
      const columns = !csv
        ? []
        : source.columns?.length
          ? [...source.columns]
          : ((await headerOf(path, fromCorrections ?? source)) ?? []).filter((c) => !isMetaColumn(c));
      o = { out: createWriteStream(file, { mode: 0o600 }), columns, rows: 0, file, delimiter: dialect.delimiter, csv };
      await once(o.out, 'open');
      await chmod(file, 0o600); // an existing file keeps its mode on open
      open.set(rec.source, o);
      if (csv)
        await write(
          o,
          `\uFEFF${line([...(multi ? [SOURCE_COLUMN] : []), ORIGIN_COLUMN, ...o.columns, EXTRA_COLUMN, ...ERROR_COLUMNS, ROW_HASH_COLUMN], o.delimiter)}`,
        );
    }
    const format = fromCorrections ?? source;
    const row = await readRowAt(path, rec.provenance.byteOffset, format, await headerOf(path, format));
    const own = row.columns.filter((c) => !isMetaColumn(c));
    const joined = (pick: (e: RefusedRecord['errors'][number]) => string) => rec.errors.map(pick).join(CODE_SEPARATOR);
    const errors = [joined((e) => e.field), joined((e) => e.code), joined(advice), joined((e) => e.stage)];
    const origin = rec.origin ?? rec.provenance;
    const originText = `${origin.file}:${origin.line}`;
    if (o.csv) {
      // The source's columns by name, every row alike (a remark column a corrections file read
      // back held is left out); what did not fit them goes to `_extra`, so the error columns
      // are in the same place on every row and the row stays refused until it is fixed.
      const cells = o.columns.map((c) => cellText(row.values[c]));
      const values = Object.fromEntries(o.columns.map((c) => [c, row.values[c]]));
      await write(
        o,
        line(
          [
            ...(multi ? [rec.source] : []),
            originText,
            ...cells,
            row.extra ?? cellText(row.values[EXTRA_COLUMN]),
            ...errors,
            rowFingerprint(values),
          ],
          o.delimiter,
        ),
      );
    } else {
      const values = Object.fromEntries(own.map((c) => [c, row.values[c]]));
      const object: Record<string, unknown> = multi
        ? { [SOURCE_COLUMN]: rec.source, [ORIGIN_COLUMN]: originText, ...values }
        : { [ORIGIN_COLUMN]: originText, ...values };
      ERROR_COLUMNS.forEach((c, i) => (object[c] = errors[i]));
      object[ROW_HASH_COLUMN] = rowFingerprint(values);
      await write(o, `${JSON.stringify(object)}\n`);
    }
    o.rows++;
  }
}
