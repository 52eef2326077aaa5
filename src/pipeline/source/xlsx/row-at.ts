/**
 * One XLSX record read back at its provenance: the sheet's row whose number the provenance holds
 * (its `byteOffset`, see stream.ts), in the header row's columns. Streams the sheet up to that row.
 */
import { displayPath } from '../display-path.js';
import type { RawRow } from '../row-at.js';
import { xlsxOptionsSchema, type XlsxOptions } from './options.js';

/** What reading an XLSX record back needs: the sheet and its header row. */
type XlsxRecordFormat = { xlsx?: Partial<XlsxOptions> | undefined };
import { readXlsxBatches, xlsxHeader } from './stream.js';

const optionsOf = (format: XlsxRecordFormat) => xlsxOptionsSchema.parse(format.xlsx ?? {});

export async function xlsxRowAt(path: string, rowNumber: number, format: XlsxRecordFormat): Promise<RawRow> {
  const xlsx = optionsOf(format);
  const columns = await xlsxHeader(path, displayPath(path), xlsx);
  const values: Record<string, unknown> = Object.fromEntries(columns.map((c) => [c, '']));
  for await (const batch of readXlsxBatches({ source: '', path, file: displayPath(path), xlsx, hashRows: false, lastRow: rowNumber }))
    for (const row of batch) if (row.provenance.line === rowNumber && 'values' in row) Object.assign(values, row.values);
  return { columns, values };
}

export async function xlsxColumns(path: string, format: XlsxRecordFormat): Promise<string[]> {
  return xlsxHeader(path, displayPath(path), optionsOf(format));
}
