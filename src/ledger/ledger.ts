/**
 * The ledger: the spine of a migration. One row per legacy record with its state, errors,
 * attempts, provenance and content hash; runs and batches beside them. Other stages call the
 * typed methods here and never see SQL, nor the database handle.
 *
 * The Ledger object is made of parts, one per concern, each preparing its statements once:
 * scopes.ts (scopes and migrations), runs.ts (runs, run locks, resume points), record-writes.ts
 * (a run's batches: the hot path), record-reads.ts (status, listings, facts), job-outcomes.ts
 * (validation and import results), corrections.ts, log-cursor.ts, and the parts reached as properties (jobs,
 * removals, stories, tallies, runMappings, migrationEnds, writtenFiles). The tables
 * are all in schema.ts; compact.ts says how a record's values are stored.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StagecoachError } from '../contract/errors.js';
import { Corrections, type CorrectionClaim, type CorrectionTarget } from './corrections.js';
import { JobOutcomes, type ImportFailure } from './job-outcomes.js';
import { LedgerJobs } from './jobs.js';
import { LogCursors } from './log-cursor.js';
import { MigrationEnds } from './migration-ends.js';
import type { RecordList } from './packed-records.js';
import { RecordReads, type HeldRow } from './record-reads.js';
import { RecordWrites } from './record-writes.js';
import { Removals } from './removals.js';
import { RunMappings } from './run-mappings.js';
import { Runs, type StartRunInput } from './runs.js';
import { openLedgerDb, type Db, type OpenOptions } from './schema.js';
import { Scopes, type Scope } from './scopes.js';
import { Stories } from './stories.js';
import { Tallies } from './tallies.js';
import type {
  BatchRow,
  LedgerRejectInput,
  PipelineStatus,
  RecordFacts,
  RecordOutcome,
  RecordProvenance,
  RecordRow,
  RecordState,
  RunRow,
  RunStatus,
} from './types.js';
import { WrittenFiles } from './written-files.js';

/**
 * Opens the ledger file (creating it and its folder when missing).
 * @example
 *   const ledger = openLedger('.stagecoach/ledger.db');
 *   for (const p of ledger.status()) console.log(p.pipeline, p.byState.staged);
 *   ledger.close();
 */
export function openLedger(file: string, options: OpenOptions = {}): Ledger {
  let db: Db;
  try {
    db = openLedgerDb(file, options);
    // A ledger in WAL mode is only readable with its -shm file beside it: a disk that refuses it
    // shows at the first read, so read once here, where the failure can be explained.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    // A ledger file that cannot be written (read-only, in a writable folder) opens and reads:
    // SQLite says "attempt to write a readonly database" only at the first write, naming no file.
    if (!options.readonly) accessSync(file, constants.W_OK);
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    throw new StagecoachError(
      'LEDGER_ERROR',
      `cannot open the ledger ${file}: ${whyNotOpen(file, err as Error)}`,
      { file },
      { cause: err },
    );
  }
  return new Ledger(file, db);
}

/**
 * Why SQLite could not open (or create) a ledger, in words that say what to do: SQLite's own
 * "unable to open database file" names neither the path nor the cause. SQLite writes the ledger
 * and its -wal and -shm files beside it, so the folder must be writable, even to read.
 */
function whyNotOpen(file: string, err: Error): string {
  let folder = dirname(resolve(file));
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  const what = `SQLite writes the ledger and its -wal and -shm files in that folder, also to read it; name a ledger on a writable disk with --ledger <file>${existsSync(file) ? ` (a copy of ${file} keeps its history)` : ''}`;
  for (const target of existsSync(file) ? [folder, file] : [folder]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EROFS') return `${folder} is on a read-only file system (EROFS); ${what}`;
      if (code === 'EACCES' || code === 'EPERM') return `no permission to write ${target} (${code}); ${what}`;
    }
  }
  return err.message;
}

export class Ledger {
  private readonly scopes: Scopes;
  private readonly runBook: Runs;
  private readonly writes: RecordWrites;
  private readonly reads: RecordReads;
  private readonly outcomes: JobOutcomes;
  private readonly corrections: Corrections;
  /** Jobs of the migration (validate-staging, import, counts): the store the jobs driver uses. */
  readonly jobs: LedgerJobs;
  /** Invalid records deleted from staging, intent first (removals.ts). */
  readonly removals: Removals;
  /** Each refused record's story (stories.ts). */
  readonly stories: Stories;
  /** What each run read from each source file, counted two ways (tallies.ts). */
  readonly tallies: Tallies;
  /** The mappings each run used (run-mappings.ts). */
  readonly runMappings: RunMappings;
  /** Migrations the ledger knows ended: canceled or completed (migration-ends.ts). */
  readonly migrationEnds: MigrationEnds;
  /** Files written with personal data, and the values kept in refused records' errors (written-files.ts). */
  readonly writtenFiles: WrittenFiles;
  private readonly logCursors: LogCursors;

  constructor(
    readonly file: string,
    private readonly db: Db,
  ) {
    this.scopes = new Scopes(db, file);
    this.runBook = new Runs(db, file, this.scopes);
    this.writes = new RecordWrites(db, file);
    this.reads = new RecordReads(db, this.runBook);
    this.outcomes = new JobOutcomes(db, this.scopes);
    this.corrections = new Corrections(db);
    this.jobs = new LedgerJobs(db);
    this.removals = new Removals(db, this.reads);
    this.stories = new Stories(db);
    this.tallies = new Tallies(db);
    this.runMappings = new RunMappings(db);
    this.migrationEnds = new MigrationEnds(db, this.jobs);
    this.writtenFiles = new WrittenFiles(db);
    this.logCursors = new LogCursors(db);
  }

  close(): void {
    this.runBook.releaseAll();
    if (this.db.open) this.db.close();
  }

  // Scopes and migrations (scopes.ts)

  /** The scope of a pipeline's records for a component (created on first use). */
  scope(pipeline: string, component: string): Scope {
    return this.scopes.scope(pipeline, component);
  }

  /** The scope when the ledger has it; nothing is created (a read-only ledger). */
  findScope(pipeline: string, component: string): Scope | undefined {
    const id = this.scopes.find(pipeline, component);
    return id === undefined ? undefined : { id, pipeline, component };
  }

  /** The ledger's small number for a platform migration (records carry it, not the UUID). */
  migrationNo(referenceId: string): number {
    return this.scopes.migrationNo(referenceId);
  }

  // Runs (runs.ts)

  /** Starts a run of a pipeline (runs.ts: one at a time per pipeline; dead runs marked `crashed`). */
  startRun(input: StartRunInput): { run: RunRow; scope: Scope; crashed: RunRow[] } {
    return this.runBook.start(input);
  }

  /** Records the platform migration a run attached to. */
  setRunMigration(runId: number, migrationId: string): void {
    this.runBook.setMigration(runId, migrationId);
  }

  /** Ends a run with its status and report (stored as JSON). */
  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, report?: unknown): void {
    this.runBook.finishRun(runId, status, report);
  }

  run(id: number): RunRow | undefined {
    return this.runBook.run(id);
  }

  /** Runs, oldest first; of one pipeline when named. */
  runs(pipeline?: string): RunRow[] {
    return this.runBook.runs(pipeline);
  }

  /** The migration of the scope's latest run that had one, with the ledger's number for it (when it has one). */
  lastMigrationOf(scope: Scope): { id: string; no: number | undefined } | undefined {
    const id = this.runBook.lastMigrationOf(scope.id);
    return id === undefined ? undefined : { id, no: this.scopes.findMigration(id) };
  }

  /** Stores what a run read (its source files' fingerprints, where it started), as JSON. */
  setRunSources(runId: number, sources: unknown): void {
    this.runBook.setSources(runId, sources);
  }

  /** What `setRunSources` stored for the run, if anything. */
  runSources(runId: number): unknown {
    return this.runBook.sources(runId);
  }

  /** Where a run that ended without finishing got to (runs.ts). */
  lastDoneBatchRows(runId: number): RecordProvenance[] | undefined {
    return this.runBook.lastDoneBatchRows(runId);
  }

  /**
   * The keys of a file's keyed records whose rows start before `beforeByte`, with their lines, as
   * `[legacyKey, line]` (a resumed run's key index for the rows it does not read).
   * @example for (const [key, line] of ledger.keysBefore(scope, 'klanten', 'klanten.csv', 51_507_103)) index.add(…)
   */
  keysBefore(scope: Scope, source: string, file: string, beforeByte: number): IterableIterator<[string, number]> {
    return this.runBook.keysBefore(scope, source, file, beforeByte);
  }

  /** The last line of a file the ledger holds a record of, in a scope (0: none). */
  lastLineOf(scope: Scope, file: string): number {
    return this.runBook.lastLineOf(scope, file);
  }

  /** Drops the scope's keyless rejects (a run that reads everything reports them afresh). */
  dropKeylessRejects(scope: Scope): void {
    this.runBook.dropKeylessRejects(scope);
  }

  // Corrections (corrections.ts)

  /** Ties rows read from a corrections file to the records they correct, before their writes: one transaction. */
  claimCorrections(scope: Scope, claims: readonly CorrectionClaim[]): void {
    this.corrections.claim(scope.id, claims);
  }

  /** The record a corrected row would correct (by `_origin`, else its key), as the ledger holds it now. */
  correctionTarget(
    scope: Scope,
    origin: { file: string; line: number } | undefined,
    legacyKey: string | undefined,
  ): CorrectionTarget | undefined {
    return this.corrections.target(scope.id, origin, legacyKey);
  }

  /** The export rows corrections replaced (`file\u0000rowHash`): a run of the export leaves them alone. */
  correctedOrigins(scope: Scope): Set<string> {
    return this.corrections.origins(scope.id);
  }

  // Records and batches, the hot path of a run (record-writes.ts)

  /** True when the record is on the platform with exactly this content (not sent again). */
  isSettled(scope: Scope, migrationNo: number, legacyKey: string, contentHash: string): boolean {
    return this.writes.isSettled(scope, migrationNo, legacyKey, contentHash);
  }

  /** Whether any record of the scope is settled in the migration (if none, no lookup can hit). */
  hasSettled(scope: Scope, migrationNo: number): boolean {
    return this.writes.hasSettled(scope, migrationNo);
  }

  /** `isSettled` for many records in one read transaction; the legacy keys of the settled ones. */
  settledKeys(scope: Scope, migrationNo: number, records: ReadonlyArray<{ legacyKey: string; contentHash: string }>): Set<string> {
    return this.writes.settledKeys(scope, migrationNo, records);
  }

  /** Records rows refused before upload, in one transaction. */
  recordRejects(runId: number, scope: Scope, rejects: readonly LedgerRejectInput[]): void {
    this.writes.recordRejects(runId, scope, rejects);
  }

  /** Opens a batch and moves its records to `in_flight`, in one transaction, before the upload. Returns the batch id. */
  beginBatch(runId: number, scope: Scope, migrationNo: number, records: RecordList, bytes: number): number {
    return this.writes.beginBatch(runId, scope, migrationNo, records, bytes);
  }

  /** Keeps records mapped but never sent as `mapped`, under a batch left `building`. */
  recordUnsent(runId: number, scope: Scope, migrationNo: number | null, records: RecordList, bytes: number): number | undefined {
    return this.writes.recordUnsent(runId, scope, migrationNo, records, bytes);
  }

  /** Stores a batch's staging results in one transaction; the batch is `done`. */
  finishBatch(scope: Scope, batchId: number, outcomes: readonly RecordOutcome[]): void {
    this.writes.finishBatch(scope, batchId, outcomes);
  }

  /** Marks a batch `failed` when its upload failed as a whole; its records stay `in_flight`. */
  failBatch(batchId: number, error: string): void {
    this.writes.failBatch(batchId, error);
  }

  batch(id: number): BatchRow | undefined {
    return this.writes.batch(id);
  }

  /** Batches of a run, in order. */
  batches(runId: number): BatchRow[] {
    return this.writes.batches(runId);
  }

  // Reading records back: status, reports, corrections (record-reads.ts)

  /** Per pipeline: records per state, the latest run and the latest batch. */
  status(): PipelineStatus[] {
    return this.reads.status();
  }

  /** Counts per state for one pipeline (all components when none is named). */
  counts(pipeline: string, component?: string): Record<RecordState, number> {
    return this.reads.counts(pipeline, component);
  }

  /**
   * Records, lazily, in key order; filtered by pipeline, component and states.
   * @example for (const r of ledger.records({ pipeline: 'crm', states: ['failed'] })) console.log(r.provenance.file, r.provenance.line, r.errors);
   */
  records(filter: Parameters<RecordReads['records']>[0] = {}): Generator<RecordRow> {
    return this.reads.records(filter);
  }

  /** The records the migration refused, in the shape the corrections writer takes (record-reads.ts). */
  refused(filter: { pipeline?: string; component?: string } = {}): ReturnType<RecordReads['refused']> {
    return this.reads.refused(filter);
  }

  /** The records of a pipeline the platform holds from an import, in the order first written, each other record by its referenceId (record-reads.ts). */
  liveImportsInOrder(pipeline: string): ReturnType<RecordReads['liveImportsInOrder']> {
    return this.reads.liveImportsInOrder(pipeline);
  }

  /** The runs that sent a pipeline's live imports, and the files they sent them from (record-reads.ts). */
  liveImportSourcesOf(pipeline: string): Array<{ run: number | null; file: string }> {
    return this.reads.liveImportSourcesOf(pipeline);
  }

  /** Records grouped for the report (record-reads.ts). */
  facts(filter: Parameters<RecordReads['facts']>[0] = {}): RecordFacts[] {
    return this.reads.facts(filter);
  }

  /** Records with these referenceIds (validation errors name records by referenceId). */
  recordsByReferenceIds(referenceIds: Iterable<string>): RecordRow[] {
    return this.reads.recordsByReferenceIds(referenceIds);
  }

  /** Keyed records' rows in a scope, as `plan --ledger` compares them, in one read transaction. */
  heldRecords(scope: Scope, legacyKeys: readonly string[]): Map<string, HeldRow> {
    return this.reads.held(scope.id, legacyKeys);
  }

  // The platform's jobs' results (job-outcomes.ts)

  /**
   * Applies a validation job's result for a migration in one transaction.
   * @example ledger.markValidated(migrationId, result.errors.map((e) => ({ referenceId: e.referenceId, field: e.field, message: e.message })));
   */
  markValidated(
    migrationId: string,
    errors: ReadonlyArray<{ referenceId: string; field: string; message: string; code?: string }>,
  ): { invalid: number; cleared: number } {
    return this.outcomes.markValidated(migrationId, errors);
  }

  /** After a completed import: every `staged` record of the migration becomes `imported`, in one transaction. */
  markImported(migrationId: string): number {
    return this.outcomes.markImported(migrationId);
  }

  /** Applies a completed import's outcome: the records it could not import keep `staged` with their error. */
  markImportOutcome(migrationId: string, failures: readonly ImportFailure[]): { imported: number; failed: number } {
    return this.outcomes.markImportOutcome(migrationId, failures);
  }

  // Migration log cursor (where `logs --follow` continues from)

  /** The `continue-from` value for the migration's log, or undefined to start at the beginning. */
  logCursor(migrationId: string): number | undefined {
    return this.logCursors.at(migrationId);
  }

  /** Moves the log cursor forward (never back). */
  setLogCursor(migrationId: string, continueFrom: number): void {
    this.logCursors.moveTo(migrationId, continueFrom);
  }
}
