/**
 * The hand-off shapes between pipeline stages. Sources yield `SourceRow`s; the mapping turns each
 * into a `MappedRow` (a staged record, or the reasons it was rejected); the uploader and the
 * ledger take it from there. Kept in one small module so each stage can be built and tested alone.
 */
import type { StagedCounterparty } from '../contract/migration.js';
import type { EncodedRecord } from './batcher/index.js';

/** Where a row came from: enough to point a user at the exact place in the legacy file. */
export interface Provenance {
  /** Path of the source file, relative to the pipeline file's folder when possible. */
  file: string;
  /** 1-based line where the row starts (CSV: physical line, header counted; JSON: line of the object). */
  line: number;
  /** Byte offset of the row's first byte in the file. */
  byteOffset: number;
  /** sha256 (hex) of the row's raw content, to detect changed rows between runs. */
  hash: string;
  /**
   * A row of a corrections file: the export row (file:line) of the record it corrects, from the
   * file's `_origin` column (src/ledger/corrections.ts).
   */
  origin?: { file: string; line: number };
}

/** One raw row of a legacy export: column/field name → value, as read. */
export interface SourceRow {
  source: string; // name of the source in the pipeline file
  values: Record<string, unknown>;
  provenance: Provenance;
}

/** A row the source could not read (wrong column count, undecodable bytes, broken JSON). */
export interface SourceRowError {
  source: string;
  provenance: Provenance;
  code: 'SOURCE_ROW_INVALID' | 'SOURCE_READ_FAILED';
  message: string;
  /** The raw text of the row, cut to a sensible length. */
  raw?: string;
}

export interface RejectReason {
  field: string;
  value?: unknown;
  /** A stable code: MISSING_REQUIRED_FIELD, INVALID_FIELD_VALUE, UNKNOWN_CODE, DUPLICATE_LEGACY_KEY, RELATION_TARGET_MISSING, MAPPING_FAILED, SOURCE_ROW_INVALID … */
  code: string;
  message: string;
  /**
   * How the mapping made the refused value, for `plan`'s examples: the column and each transform
   * with the value after it, values in backticks (masked like the message), e.g.
   * column "geboortedatum" `31-02-1980` → date(dd-mm-yyyy) → refused. Not kept in the ledger.
   */
  trace?: string;
}

export type MappedRow =
  | { kind: 'mapped'; component: 'Counterparties'; legacyKey: string; referenceId: string; record: StagedCounterparty; row: SourceRow }
  | {
      kind: 'rejected';
      component: 'Counterparties';
      legacyKey?: string;
      referenceId?: string;
      reasons: RejectReason[];
      row: SourceRow | SourceRowError;
    };

/** Where a row came from; its values only where the reader kept them. */
export interface RowOrigin {
  source: string;
  provenance: Provenance;
  values?: Record<string, unknown>;
}

/**
 * A `MappedRow` as `run` and `plan` take it, which a parallel reader can hand over cheaply: a
 * mapped row may come framed for upload (`encoded`) instead of as a record, and a row keeps its
 * source values only when a worker refused it. Every `MappedRow` is a `FrontRow`.
 */
export type FrontRow =
  | {
      kind: 'mapped';
      component: 'Counterparties';
      legacyKey: string;
      referenceId: string;
      record?: StagedCounterparty;
      encoded?: EncodedRecord;
      row: RowOrigin;
    }
  | {
      kind: 'rejected';
      component: 'Counterparties';
      legacyKey?: string;
      referenceId?: string;
      reasons: RejectReason[];
      row: RowOrigin | SourceRowError;
    };
