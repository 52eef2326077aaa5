/**
 * The ledger's closed unions and row shapes. Every record, batch and run has exactly one state
 * at a time; the unions here are the only states the tables accept (CHECK constraints repeat
 * them in schema.ts), so a state nobody planned for cannot appear.
 */

/**
 * One legacy record's state.
 * - `mapped`: read and mapped, not sent yet (a run stopped before its batch went out);
 * - `rejected`: refused before upload (source row error, mapping, local checks);
 * - `in_flight`: sent in a batch whose results are not in (a crash leaves these; re-sent next run);
 * - `staged`: accepted by staging; `failed`: refused by staging (or no result came back);
 * - `invalid`: staged but refused by a validation job; `imported`: imported by the platform.
 */
/** Where a pipeline's ledger is kept unless told otherwise (relative to the working folder). */
export const DEFAULT_LEDGER_FILE = '.stagecoach/ledger.db';

export const RECORD_STATES = ['mapped', 'rejected', 'in_flight', 'staged', 'failed', 'invalid', 'imported'] as const;

/** Zero records in every state (counts to add to). */
export function noRecords(): Record<(typeof RECORD_STATES)[number], number> {
  return Object.fromEntries(RECORD_STATES.map((st) => [st, 0])) as Record<(typeof RECORD_STATES)[number], number>;
}
export type RecordState = (typeof RECORD_STATES)[number];

/** A batch is `building` while its records are chosen, `in_flight` once sent, then `done` or `failed`. */
export const BATCH_STATES = ['building', 'in_flight', 'done', 'failed'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/**
 * A run is `running` until it ends `completed`, `interrupted` (Ctrl-C), `failed` (the service or
 * the input failed the run) or `crashed` (the process died; found and marked by the next run).
 */
export const RUN_STATUSES = ['running', 'completed', 'interrupted', 'failed', 'crashed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Where an error was found: reading the source, mapping, the local checks, staging, the platform's jobs. */
export type ErrorStage = 'source' | 'mapping' | 'check' | 'staging' | 'upload' | 'validation' | 'import';

/** One error of a record, as stored in `records.errors` (JSON array). */
export interface RecordError {
  stage: ErrorStage;
  /** Dotted field path in the mapped record ('' for the whole record or row). */
  field: string;
  /** A stable code: MISSING_REQUIRED_FIELD, UNKNOWN_CODE, NO_STAGING_RESULT, … */
  code: string;
  message: string;
  /** The offending value, when known. */
  value?: unknown;
}

/** Where a record's legacy row is: source name, file, line, byte offset and a hash of the raw row. */
export interface RecordProvenance {
  source: string;
  file: string;
  line: number;
  byteOffset: number;
  rowHash: string;
}

/** A mapped record as the ledger keeps it (never the record's content, only its hash). */
export interface LedgerRecordInput {
  legacyKey: string;
  referenceId: string;
  /** `person`, `organisation` … (the staged record's type), for per-type counts. */
  entityType: string | undefined;
  /** Hash of the mapped record's JSON: a change means the record must be sent again. */
  contentHash: string;
  provenance: RecordProvenance;
}

/** A rejected row: keyed by its legacy key when it has one, else by `file:line`. */
export interface LedgerRejectInput {
  legacyKey: string | undefined;
  referenceId: string | undefined;
  errors: RecordError[];
  provenance: RecordProvenance;
}

/** The outcome of one sent record, from its staging result. */
export interface RecordOutcome {
  legacyKey: string;
  state: 'staged' | 'failed';
  errors?: RecordError[];
}

export interface RunRow {
  id: number;
  pipeline: string;
  component: string;
  pipelineFile: string;
  pipelineHash: string;
  migrationId: string | null;
  status: RunStatus;
  pid: number | null;
  host: string | null;
  startedAt: string;
  finishedAt: string | null;
  /** The run's report (JSON as the runner stored it), once finished. */
  report: unknown;
}

export interface BatchRow {
  id: number;
  run: number;
  state: BatchState;
  records: number;
  bytes: number;
  attempts: number;
  error: string | null;
  createdAt: string;
  sentAt: string | null;
  finishedAt: string | null;
}

/** One record row, as `records()` and `refused()` return it. */
export interface RecordRow {
  pipeline: string;
  component: string;
  /** The legacy key; undefined for a rejected row that had none (then keyed by file:line). */
  legacyKey: string | undefined;
  referenceId: string | null;
  entityType: string | null;
  state: RecordState;
  contentHash: string | null;
  migrationId: string | null;
  lastBatch: number | null;
  lastRun: number;
  attempts: number;
  errors: RecordError[];
  provenance: RecordProvenance;
  /** For a record read from a corrections file: the export row its correction replaced. */
  origin?: { file: string; line: number; rowHash: string };
  /** The migration of an earlier import the ledger keeps (earlier_imports), when the row no longer shows it. */
  importedEarlierIn?: string;
  updatedAt: string;
}

/** Counts of one pipeline's records per state, with its latest run and batch. */
export interface PipelineStatus {
  pipeline: string;
  component: string;
  records: number;
  byState: Record<RecordState, number>;
  lastRun: RunRow | undefined;
  lastBatch: BatchRow | undefined;
}

/** Records grouped for the reconciliation report: component, entity type, state and first error code. */
export interface RecordFacts {
  pipeline: string;
  component: string;
  /** The source its row was read from. */
  source: string;
  entityType: string | null;
  state: RecordState;
  /** Code of the record's first error, or null. */
  code: string | null;
  /** The migration it was last sent to, or null. */
  migrationId: string | null;
  /** The migration of an earlier import the ledger keeps (earlier_imports), or null. */
  importedEarlierIn: string | null;
  count: number;
}

/** A removal from staging: `removing`: the DELETE was (or was about to be) sent, its answer not recorded; `removed`: the platform no longer holds it. */
export const REMOVAL_STATES = ['removing', 'removed'] as const;
export type RemovalState = (typeof REMOVAL_STATES)[number];

// Jobs (validate-staging, import, counts): the shape the jobs driver of src/reconcile expects.
export type JobKind = 'validate-staging' | 'import' | 'counts';
export type JobState = 'running' | 'done' | 'failed';

export interface JobRow<Result = unknown> {
  migrationId: string;
  kind: JobKind;
  jobId: string;
  state: JobState;
  result?: Result;
  startedAt: string;
  finishedAt?: string;
}

/** A record the platform holds from an import, as `verify` needs it (Ledger.liveImportsInOrder). */
export interface ImportedRef {
  /** The pipeline whose record it is. */
  pipeline: string;
  referenceId: string;
  file: string;
  line: number;
  /** '' for a record without a legacy key. */
  legacyKey: string;
  contentHash: string | null;
  /** The run whose mappings sent what was imported (null: the ledger does not know it). */
  run: number | null;
  /** The migration it was imported in. */
  migrationId: string;
}

/** What a source file holds, counted two ways (the tally of src/pipeline/source/tally.ts): kept per run and file. */
/** A row that took the lines after its first one into itself (a quote opened and not closed). */
export interface SwallowedSpan {
  /** Line where the row starts. */
  line: number;
  /** First and last line read as part of that row although they look like rows of their own. */
  from: number;
  to: number;
}

export interface SourceTally {
  /** The source's name in the pipeline, and the file as shown in provenance. */
  source: string;
  file: string;
  format: string;
  /** Counted from the bytes alone (line breaks: LF, CRLF, lone CR; a last line without one counts). */
  physicalLines: number;
  /** Physical lines holding nothing but blanks. */
  blankLines: number;
  /** JSON array / JSON Lines: top-level items counted by a byte scanner, not by the parser. */
  items?: number;
  /** Lines that are not rows by the pipeline's own declaration (a header, a fixed-width trailer). */
  headerLines: number;
  /** What the parser yielded: rows plus row errors. */
  rowsRead: number;
  rowErrors: number;
  /** Sum of the line spans of everything yielded (a row over three lines counts three). */
  linesInRows: number;
  /** Rows that swallowed the lines after them: the first `SWALLOWED_LISTED` listed… */
  swallowed: SwallowedSpan[];
  /** …and the rest only counted, so that a file of broken quotes cannot fill the memory. */
  unlisted?: { spans: number; lines: number };
  /** The file ended inside a value, or held no rows at all: why, when it did. */
  truncated?: string;
  /**
   * CSV under `csv.quotes: relaxed`: rows read as written although their quotes are malformed,
   * the first `SWALLOWED_LISTED` listed (line, column, shape) and all counted.
   */
  relaxedQuotes?: { listed: RelaxedQuoteRow[]; count: number };
}

/** A row read as written under `csv.quotes: relaxed` although its quotes are malformed. */
export interface RelaxedQuoteRow {
  line: number;
  column: string;
  shape: string;
}

/**
 * A pipeline's mappings (and their scripts) as a run used them, kept per run so that `plan --ledger`
 * can map a row the way that run did (src/pipeline/definition/mapping-snapshot.ts takes and restores it).
 */
export interface MappingSnapshot {
  /** Each source's mapping file, as a path among `files`. */
  sources: Record<string, string>;
  /** The files' text by their path relative to the folder that holds them all. */
  files: Record<string, string>;
}
