/**
 * The SQLite ledger: runs, batches and one row per legacy record with its state. Other stages
 * use the Ledger object's typed methods and parts; the tables are described in docs/ledger.md.
 */
export { openLedger, Ledger } from './ledger.js';
export { keylessKey } from './rows.js';
export type { Scope } from './scopes.js';
export type { StartRunInput } from './runs.js';
export type { LedgerJobs } from './jobs.js';
export { openLedgerWriter, type LedgerWriter } from './writer.js';
export { PackedRecords, type RecordList } from './packed-records.js';
export type { StoredTally } from './tallies.js';
export { originKey, type CorrectionClaim, type CorrectionTarget } from './corrections.js';
export type { RowStory, StoryStep } from './stories.js';
export type { ImportFailure } from './job-outcomes.js';
export type { RemovalInput, StoredRemoval } from './removals.js';
export type { CanceledRecords, MigrationEnd } from './migration-ends.js';
export type { WrittenFile, WrittenFileKind } from './written-files.js';
export { LedgerImpact } from './impact.js';
export { LEDGER_SCHEMA_VERSION, WAL_AUTOCHECKPOINT_PAGES } from './schema.js';
export {
  DEFAULT_LEDGER_FILE,
  RECORD_STATES,
  noRecords,
  BATCH_STATES,
  RUN_STATUSES,
  REMOVAL_STATES,
  type RemovalState,
  type RecordState,
  type BatchState,
  type RunStatus,
  type ErrorStage,
  type RecordError,
  type RecordProvenance,
  type LedgerRecordInput,
  type LedgerRejectInput,
  type RecordOutcome,
  type RunRow,
  type BatchRow,
  type RecordRow,
  type ImportedRef,
  type PipelineStatus,
  type RecordFacts,
  type JobKind,
  type JobState,
  type JobRow,
} from './types.js';
