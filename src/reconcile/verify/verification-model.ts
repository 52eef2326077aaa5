/**
 * What `verify` found, as the reconciliation report (its "Verification" section, JSON
 * `verification`) and the terminal show it. Values in it are already shown as the report's
 * privacy mode says (masked by default): nothing here is a value in the clear unless revealed.
 */

/** Where a record came from, and which one. */
export interface VerifiedRecordRef {
  pipeline: string;
  file: string;
  line: number;
  legacyKey: string;
  referenceId: string;
  /** The earlier migration of the pipeline that imported it, when not the one verified (it was not re-sent since). */
  importedIn?: string;
}

/** One field of one record the platform holds otherwise than it was sent. */
export interface FieldDifferenceExample extends VerifiedRecordRef {
  /** e.g. `"Vermeul***" (31 chars)`, `2 items`, `nothing`. */
  sent: string;
  held: string;
  /** The accept rule that explains it, when one does. */
  acceptedBy?: string;
}

export interface FieldDifferences {
  field: string;
  /** Records whose field differs and no accept rule explains. */
  differing: number;
  /** Records whose field differs the way an accept rule says. */
  accepted: number;
  /** Up to `RECORDS_LISTED` records (those with the lowest referenceIds), differing first, then in export order, with their values as shown. */
  records: FieldDifferenceExample[];
}

export interface StrayCounterparty {
  referenceId: string;
  sequenceNumber: number | undefined;
  /**
   * `earlier-migration`: the ledger knows the record (pipeline, legacy key, file:line), but not as a
   * live import of the pipelines verified (the name is kept for the JSON's readers); `unknown`: no
   * ledger record explains it.
   */
  origin: 'earlier-migration' | 'unknown';
  pipeline?: string;
  legacyKey?: string;
  file?: string;
  line?: number;
  /** The migration the ledger last sent it to, and its state there. */
  migrationId?: string;
  state?: string;
}

export interface VerificationReport {
  migrationId: string;
  pipelines: string[];
  /** Live counterparties the platform streamed, and how often the stream was resumed after a cut. */
  streamed: number;
  resumes: number;
  /**
   * Records the platform holds from an import of the migration's pipelines, by the ledger: those
   * imported in the migration, and those an earlier migration of the same pipelines imported and
   * no later one re-sent (`importedEarlier` of them), each verified against what its run sent.
   */
  imported: number;
  importedEarlier: number;
  /** Imported records whose every field shown by the platform is the one sent. */
  identical: number;
  /** Of the identical, those proven by hash: the live record, written back as staged, hashes to the frame sent (no export read for them). */
  proven: number;
  /** Held records the proof left (the platform holds them otherwise than sent, or the ledger kept no hash): compared field by field with the export's rebuild. */
  compared: number;
  /** Identical but for differences accept rules explain. */
  identicalAfterAccepted: number;
  /** Records with at least one field that differs and no accept rule explains. */
  differing: number;
  /** Imported records the platform does not hold (lost after the import). */
  notHeld: { total: number; records: VerifiedRecordRef[] };
  /**
   * Held otherwise than sent (its hash proves nothing), and what was sent could not be rebuilt to
   * compare it field by field: the legacy row is gone or changed since it was
   * sent, or the mapping of the run that sent it is not in the ledger. Not compared; fails the check.
   */
  notVerifiable: { total: number; records: Array<VerifiedRecordRef & { why: string }> };
  /** Per field, the records that differ. */
  fields: FieldDifferences[];
  /** Staged fields the platform's stream does not show, with how many records carried them (not compared). */
  notShown: Record<string, number>;
  /**
   * Identical records some value of which came in another form (same data, platform-forms.ts), and
   * records holding values they were not sent with ("added by the platform": not identical, not a
   * failure). Absent in reports written before it was counted.
   */
  forms?: PlatformForms;
  /** Live counterparties no live import of the pipelines, in any of their migrations, explains. */
  strays: { total: number; earlierMigration: number; unknown: number; records: StrayCounterparty[] };
  /** Live counterparties from before the migration's first imported record that no ledger record explains (not counted as strays). */
  preExisting: number;
  /** Live counterparties another pipeline of this ledger imported (verified with that pipeline's migration; not counted as strays). */
  otherPipelines: number;
  /** The accept rules in force. */
  accept: string[];
  /** True when nothing differs, nothing was lost, no stray, everything verifiable: the CI gate. */
  passed: boolean;
  /** One line per reason it did not pass. */
  problems: string[];
  seconds: number;
}

/** The forms part of the report: records come in another form than sent, and values added by the platform (platform-forms.ts). */
export interface PlatformForms {
  /** Identical records at least one value of which came in another form than sent, and per field how many. */
  otherForm: { records: number; fields: Record<string, number> };
  /** Records holding values they were not sent with (not counted as identical), per field how many, and examples. */
  added: { records: number; fields: Record<string, number>; examples: Array<VerifiedRecordRef & { field: string; held: string }> };
}

/** Records listed per category in the report (the counts are always whole). */
export const RECORDS_LISTED = 1000;
