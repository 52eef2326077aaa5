/**
 * The SQLite ledger: runs, batches and one row per legacy record with its state. Other stages
 * use these typed functions; the tables are described in docs/ledger.md.
 */
export { openLedger, Ledger, LedgerJobs, keylessKey, type Scope, type StartRunInput } from './ledger.js';
export { openLedgerWriter, type LedgerWriter } from './writer.js';
export { PackedRecords, type RecordList } from './packed-records.js';
export { recordTallies, tallies, type StoredTally } from './ledger-tallies.js';
export { claimCorrections, correctedOrigins, originKey, type CorrectionClaim } from './ledger-corrections.js';
export { rowStories, type RowStory, type StoryStep } from './ledger-stories.js';
export { recordRunMappings, runMappings } from './ledger-mappings.js';
export {
  activeRemovals,
  confirmRemoval,
  dropRemoval,
  intendRemovals,
  pendingRemovals,
  REMOVAL_STATES,
  type RemovalInput,
  type RemovalState,
  type StoredRemoval,
} from './ledger-removals.js';
export { logCursor, logCursorMover } from './ledger-logs.js';
export {
  canceledRecords,
  migrationEnd,
  recordMigrationCanceled,
  type CanceledRecords,
  type MigrationEnd,
} from './ledger-migration-ends.js';
export {
  recordWrittenFile,
  heldFiles,
  markFileRemoved,
  recordsWithValues,
  scrubRecordValues,
  importFinishedAt,
  type WrittenFile,
  type WrittenFileKind,
} from './ledger-files.js';
export { LEDGER_SCHEMA_VERSION, WAL_AUTOCHECKPOINT_PAGES } from './schema.js';
export {
  DEFAULT_LEDGER_FILE,
  RECORD_STATES,
  noRecords,
  BATCH_STATES,
  RUN_STATUSES,
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
