/**
 * The CSV format as the registry sees it: a header (or declared columns), splittable at record
 * boundaries for parallel reading and resume (splitter.ts), a byte-level key scanner, corrections as CSV.
 */
import { commonReadOptions, defineFormat, type SourceStart } from '../format.js';
import { detectEncoding } from '../encoding.js';
import type { CsvRange } from './core.js';
import { csvOptionsSchema } from './options.js';
import { readCsvBatches } from './read-csv.js';
import { csvMissingColumns } from './missing-columns.js';
import { csvHeader } from './read-record.js';
import { csvRowAt } from './row-at.js';
import { scanCsvKeys } from './scan-keys.js';
import { csvSplitter } from './splitter.js';

const csvRange = (from: SourceStart): CsvRange => ({
  start: from.byteOffset,
  line: from.line,
  ...(from.end !== undefined ? { end: from.end } : {}),
  ...(from.columns ? { columns: from.columns } : {}),
  ...(from.recordDelimiter ? { recordDelimiter: from.recordDelimiter } : {}),
});

export const csvFormat = defineFormat({
  summary: 'csv',
  options: {
    key: 'csv',
    field: csvOptionsSchema.default({ delimiter: ',', quote: '"', header: true }).describe('CSV options (format csv)'),
    check: (csv) =>
      !csv.header && !csv.columns ? [{ path: [], message: 'csv.header is false, so csv.columns must name the columns' }] : [],
  },
  splitter: csvSplitter(),
  cellDelimiter: (source) => source.csv.delimiter,
  tallies: true,
  rowAt: csvRowAt,
  header: (path, format) => csvHeader(path, format),
  missingColumns: csvMissingColumns,
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
      ...commonReadOptions(source, file, options),
      csv: source.csv,
      ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
      ...(options.from ? { range: csvRange(options.from) } : {}),
      ...(options.outcome ? { outcome: options.outcome } : {}),
    }),
});
