/**
 * How a CSV file is written, in one object that both readers of the core take: the plain-line
 * path (plain-lines.ts) and csv-parse (its options come from here, `csvParseOptions`).
 */
import type { Options } from 'csv-parse';
import type { CsvOptions } from './options.js';
import type { ResolvedEncoding } from '../encoding.js';
import type { RecordDelimiter } from './plain-lines.js';

export interface CsvDialect {
  delimiter: string;
  quote: string;
  /** Malformed quotes: refuse the row (strict) or read it as written and flag it (relaxed). */
  quotes?: 'strict' | 'relaxed' | undefined;
  /** The first record names the columns. */
  header: boolean;
  /** Column names given in the pipeline (no header, or renamed). */
  columns?: string[] | undefined;
  /** LF, CRLF or CR CR LF when known (a range after the file's start knows it); else found in the first line. */
  recordDelimiter?: RecordDelimiter | undefined;
  encoding: ResolvedEncoding;
}

/** The dialect of a pipeline source's `csv` options in a resolved encoding. */
export function csvDialect(csv: CsvOptions, encoding: ResolvedEncoding, recordDelimiter?: RecordDelimiter): CsvDialect {
  return {
    delimiter: csv.delimiter,
    quote: csv.quote,
    quotes: csv.quotes,
    header: csv.header,
    columns: csv.columns,
    recordDelimiter,
    encoding,
  };
}

/**
 * csv-parse's options for the dialect. Records of any width come back (the core tells a wrong
 * count itself, with the header's width); a record csv-parse cannot read goes to `on_skip` and
 * the file goes on.
 * @param bom the input starts at the file's first byte (csv-parse strips a UTF-8 BOM there)
 */
export function csvParseOptions(d: CsvDialect, bom: boolean): Options {
  return {
    delimiter: d.delimiter,
    quote: d.quote,
    escape: d.quote,
    encoding: d.encoding.node,
    bom,
    ...(d.recordDelimiter ? { record_delimiter: d.recordDelimiter } : {}),
    relax_column_count: true,
    // A quote inside a field that does not start with one (Jan"sen, "Sm"it) is a literal, as
    // spreadsheets read it. Without this, csv-parse stayed in quoting mode after skipping such a
    // row and swallowed the valid rows after it, up to the next quote, into one error.
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
  };
}
