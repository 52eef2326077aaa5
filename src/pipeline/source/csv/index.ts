/**
 * The CSV format: one reader (a pure core and its stream wrapper), the key pass made of the same
 * core, and the splitter of a file into record-aligned ranges for the parallel reader.
 */
export { CsvCore, type CsvCoreOptions, type CsvItem, type CsvRange, type CsvReadOutcome } from './core.js';
export { csvDialect, type CsvDialect } from './dialect.js';
export { readCsvBatches, readCsvFile, type CsvFileOptions } from './read-csv.js';
export { scanCsvKeys, type ScanCsvKeysOptions } from './scan-keys.js';
export { splitCsv, type CsvChunk, type CsvSplit, type SplitCsvOptions } from './chunks.js';
export { csvSplitter, type CsvCutter } from './splitter.js';
export { csvHeader, csvRecordAt, type CsvRecordFormat } from './read-record.js';
