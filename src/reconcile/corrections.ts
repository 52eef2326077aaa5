/**
 * Corrections files: the legacy rows the migration refused (rejected before upload, refused by
 * staging, invalid in validation), one file per pipeline source, in the source's ORIGINAL
 * columns re-read from the legacy file by provenance, with four columns added:
 * `error_field, error_code, error_message, error_stage`. The engineer fixes the values in a
 * spreadsheet or editor and hands the file back to `stagecoach run <pipeline> --corrections
 * <file>`, which re-stages only those rows (same legacy keys, so the same referenceIds).
 *
 * Files are UTF-8 with a byte-order mark (spreadsheet programs then open accented names right)
 * and use the source's delimiter and quote, so the corrected rows read back with the source's
 * own options. JSON sources get their top-level fields as columns; nested values are JSON text.
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
 * Writes one corrections file per source that has refused records, in `outDir`, named
 * `<source>.corrections.csv`. `baseDir` resolves the provenance paths (the pipeline's folder).
 * Records of one source should come grouped or not; the writer keeps one open file per source.
 * @example
 *   const files = await writeCorrections(ledgerRefused(ledger, runId), sources, '.stagecoach/reports/run-1', 'pipelines');
 */
export async function writeCorrections(
  records: AsyncIterable<RefusedRecord> | Iterable<RefusedRecord>,
  sources: readonly CorrectionSource[],
  outDir: string,
  baseDir: string,
): Promise<CorrectionsFile[]> {
  await mkdir(outDir, { recursive: true });
  type Open = { out: ReturnType<typeof createWriteStream>; columns: string[]; rows: number; file: string; format: CorrectionSource };
  const open = new Map<string, Open>();
  const write = async (o: Open, text: string) => {
    if (!o.out.write(text)) await once(o.out, 'drain');
  };
  const line = (fields: string[], f: CorrectionSource) => `${fields.map((v) => csvField(v, f.csv?.delimiter ?? ',', f.csv?.quote ?? '"')).join(f.csv?.delimiter ?? ',')}\r\n`;
  try {
    for await (const rec of records) {
      const format = sources.find((s) => s.name === rec.source);
      if (!format) continue;
      const path = isAbsolute(rec.provenance.file) ? rec.provenance.file : resolve(baseDir, rec.provenance.file);
      let o = open.get(rec.source);
      if (!o) {
        const file = join(outDir, `${rec.source}.corrections.csv`);
        const columns = format.format === 'csv' ? await csvColumns(path, format) : [];
        o = { out: createWriteStream(file), columns, rows: 0, file, format };
        open.set(rec.source, o);
        // the header of a JSON source is known only from its first row, see below
        if (format.format === 'csv') await write(o, '\uFEFF' + line([...columns, ...ERROR_COLUMNS], format));
      }
      const row = await readRowAt(path, rec.provenance.byteOffset, format, format.format === 'csv' ? o.columns : undefined);
      if (format.format !== 'csv' && o.rows === 0) {
        o.columns = row.columns;
        await write(o, '\uFEFF' + line([...o.columns, ...ERROR_COLUMNS], format));
      }
      const joined = (pick: (e: RefusedRecord['errors'][number]) => string) => rec.errors.map(pick).join(' | ');
      const cells = o.columns.map((c) => cellText(row.values[c]));
      await write(o, line([...cells, joined((e) => e.field), joined((e) => e.code), joined((e) => e.message), joined((e) => e.stage)], format));
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
