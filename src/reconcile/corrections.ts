/**
 * Corrections files: the legacy rows the migration refused (rejected before upload, refused by
 * staging, invalid in validation), one file per pipeline source, in the source's ORIGINAL
 * columns re-read from the legacy file by provenance, with four columns added:
 * `error_field, error_code, error_message, error_stage`. The engineer fixes the values in a
 * spreadsheet or editor and hands the file back to `stagecoach run <pipeline> --corrections
 * <file>`, which re-stages only those rows (same legacy keys, so the same referenceIds).
 *
 * The files are what `readCorrections` (src/pipeline/checks/corrections.ts) reads back:
 * - CSV sources: `<source>.corrections.csv`, UTF-8 with a byte-order mark (spreadsheet programs
 *   then open accented names right), `;` when the source uses `;` and `,` otherwise, `"` quotes;
 * - JSON and JSON Lines sources: `<source>.corrections.jsonl`, one original object a line, so
 *   nested values and types survive the round trip;
 * - when the pipeline has several sources, a leading `_source` column names the source (columns
 *   starting with `_` never reach the mapping).
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { once } from 'node:events';
import { cellText, csvColumns, readRowAt, type RowFormat } from './source-rows.js';

export const ERROR_COLUMNS = ['error_field', 'error_code', 'error_message', 'error_stage'] as const;

/** A refused record as the ledger knows it. */
export interface RefusedRecord {
  source: string;
  provenance: { file: string; line: number; byteOffset: number };
  errors: Array<{ field: string; code: string; message: string; stage: string }>;
}

export interface CorrectionSource extends RowFormat {
  name: string;
}

export interface CorrectionsFile {
  source: string;
  file: string;
  rows: number;
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

/**
 * Writes one corrections file per source that has refused records, in `outDir`. `baseDir`
 * resolves the provenance paths (the pipeline's folder). Records may come in any order; one
 * file per source stays open until the end.
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
  type Open = { out: ReturnType<typeof createWriteStream>; columns: string[]; rows: number; file: string; delimiter: string };
  const open = new Map<string, Open>();
  const write = async (o: Open, text: string) => {
    if (!o.out.write(text)) await once(o.out, 'drain');
  };
  const line = (fields: string[], delimiter: string) => `${fields.map((v) => csvField(v, delimiter)).join(delimiter)}\r\n`;
  try {
    for await (const rec of records) {
      const format = sources.find((s) => s.name === rec.source);
      if (!format) continue;
      const path = isAbsolute(rec.provenance.file) ? rec.provenance.file : resolve(baseDir, rec.provenance.file);
      const csv = format.format === 'csv';
      let o = open.get(rec.source);
      if (!o) {
        const file = join(outDir, `${rec.source}.corrections.${csv ? 'csv' : 'jsonl'}`);
        const delimiter = format.csv?.delimiter === ';' ? ';' : ',';
        o = { out: createWriteStream(file), columns: csv ? await csvColumns(path, format) : [], rows: 0, file, delimiter };
        open.set(rec.source, o);
        if (csv) await write(o, '\uFEFF' + line([...(multi ? ['_source'] : []), ...o.columns, ...ERROR_COLUMNS], delimiter));
      }
      const row = await readRowAt(path, rec.provenance.byteOffset, format, csv ? o.columns : undefined);
      const joined = (pick: (e: RefusedRecord['errors'][number]) => string) => rec.errors.map(pick).join(' | ');
      const errors = [joined((e) => e.field), joined((e) => e.code), joined((e) => e.message), joined((e) => e.stage)];
      if (csv) {
        const cells = o.columns.map((c) => cellText(row.values[c]));
        await write(o, line([...(multi ? [rec.source] : []), ...cells, ...errors], o.delimiter));
      } else {
        const object: Record<string, unknown> = multi ? { _source: rec.source } : {};
        Object.assign(object, row.values);
        ERROR_COLUMNS.forEach((c, i) => (object[c] = errors[i]));
        await write(o, `${JSON.stringify(object)}\n`);
      }
      o.rows++;
    }
  } finally {
    for (const o of open.values()) {
      o.out.end();
      await once(o.out, 'close');
    }
  }
  return [...open.entries()].map(([source, o]) => ({ source, file: o.file, rows: o.rows }));
}
