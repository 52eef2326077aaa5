/**
 * The XLSX format as the registry sees it: a sheet of a workbook (`xlsx:` names it and its header
 * row), provenance as the sheet's row number, corrections as CSV in the header row's columns.
 */
import { commonReadOptions, defineFormat } from '../format.js';
import { xlsxOptionsSchema } from './options.js';
import { xlsxColumns, xlsxRowAt } from './row-at.js';
import { readXlsxBatches } from './stream.js';

export const xlsxFormat = defineFormat({
  summary: 'xlsx (a sheet of an Excel workbook, see xlsx)',
  options: { key: 'xlsx', field: xlsxOptionsSchema.default({ sheet: 1, headerRow: 1 }), check: () => [] },
  canSplit: false,
  tallies: false,
  rowAt: (path, rowNumber, format) => xlsxRowAt(path, rowNumber, format),
  header: xlsxColumns,
  corrections: 'csv',
  scanKeys: null,
  read: (source, file, options) =>
    readXlsxBatches({
      ...commonReadOptions(source, file, options),
      xlsx: source.xlsx,
      ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
    }),
});
