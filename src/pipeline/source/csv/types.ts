/**
 * The CSV core's options and results, shared by the core (core.ts), its two engines and the row
 * building they share (records.ts), and the core's callers.
 */
import type { SourceRow, SourceRowError } from '../../types.js';
import type { SourceTally } from '../tally.js';
import type { CsvDialect } from './dialect.js';

export type CsvItem = SourceRow | SourceRowError;

/** A slice of a CSV file that starts at a record: bytes [start, end), the columns already known. */
export interface CsvRange {
  start: number;
  /** Exclusive; the file's end when absent. */
  end?: number;
  /** The columns (from the header, or csv.columns): a range after the header holds none. */
  columns?: string[];
  /** Line of the range's first byte (1-based). */
  line: number;
  /** The record delimiter found at the file's start, so every range splits records alike. */
  recordDelimiter?: '\n' | '\r\n';
}

export interface CsvReadOutcome {
  columns?: string[];
  /** Line of the last record's last line. */
  endLine: number;
  /** Byte offset just past the last record (its delimiter included). */
  endByte: number;
  /**
   * False when the input stopped inside a record (csv-parse refused the last one at the end, or
   * failed): for a range, its end was not at a record boundary.
   */
  endedAtRecord: boolean;
  /** Records read by the plain-line fast path rather than csv-parse. */
  plainRecords?: number;
}

export interface CsvCoreOptions {
  /** Source name (pipeline file) and the path shown in provenance and messages. */
  source: string;
  file: string;
  dialect: CsvDialect;
  /** The input is this slice of the file (it starts where a record starts); the whole file when absent. */
  range?: CsvRange | undefined;
  /** Columns the mapping reads: a header without one of them is a configuration error. */
  requiredColumns?: ReadonlySet<string> | undefined;
  /** Hash each row's fields into its provenance (default true). */
  hashRows?: boolean | undefined;
  /** Read plain lines without csv-parse (default true). Tests turn it off for a reference. */
  plainLines?: boolean | undefined;
  /** Filled in as the input goes (tally.ts). */
  tally?: SourceTally | undefined;
  /** Filled in as the input goes: the columns, and how the last record ended (a range's check). */
  outcome?: CsvReadOutcome | undefined;
  /**
   * Key-only mode: each record's (untrimmed) value of `column` goes to `take` and no row is made;
   * records of any width count, a record without that column gives none. No text checks.
   */
  keys?: { column: string; take: (value: string) => void } | undefined;
  /**
   * Records-only mode: each record after the header goes to `take` as its fields, whatever its
   * width (the corrections file and the report re-read single rows so). No rows, no text checks.
   */
  records?: { take: (fields: string[]) => void; refused?: (error: SourceRowError) => void } | undefined;
}
