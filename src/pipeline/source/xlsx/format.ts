/**
 * The XLSX format as the registry sees it: a sheet of a workbook (`xlsx:` names it and its header
 * row), provenance as the sheet's row number, corrections as CSV in the header row's columns.
 * It tallies: the sheet's `<row>` elements counted apart from the reader's cell decoding (count-rows.ts).
 * It cannot split: a sheet is one deflate stream inside the zip, which can only be inflated from
 * its start (no byte where a row begins can be jumped to), so one thread reads it and a resumed
 * run reads it again from the start, the ledger skipping the rows it already holds.
 */
import { commonReadOptions, defineFormat } from '../format.js';
import { xlsxOptionsSchema } from './options.js';
import { xlsxColumns, xlsxRowAt } from './row-at.js';
import { readXlsxBatches } from './stream.js';

export const xlsxFormat = defineFormat({
  summary: 'xlsx (a sheet of an Excel workbook, see xlsx)',
  options: { key: 'xlsx', field: xlsxOptionsSchema.prefault({}), check: () => [] },
  splitter: null,
  cellDelimiter: null,
  tallies: true,
  rowAt: (path, rowNumber, format) => xlsxRowAt(path, rowNumber, format),
  header: xlsxColumns,
  // Not before the run: the reader checks the header row as it meets it (CONFIG_INVALID at
  // file:Sheet!row). (The reader now streams the sheet from its start, so a check before the run
  // would cost the shared strings and the rows up to the header; not made here.)
  missingColumns: null,
  corrections: 'csv',
  scanKeys: null,
  read: (source, file, options) =>
    readXlsxBatches({
      ...commonReadOptions(source, file, options),
      xlsx: source.xlsx,
      ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
    }),
});
