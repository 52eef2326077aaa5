/**
 * The ledger: the spine of a migration. One row per legacy record with its state, errors,
 * attempts, provenance and content hash; runs and batches beside them. Other stages call the
 * typed methods here and never see SQL.
 *
 * Every state change is one SQLite transaction, grouped per batch for speed: a batch's records
 * go to `in_flight` together before the upload, and to `staged`/`failed` together when the
 * results are in. So a crash at any instant leaves each record in exactly one state from which
 * the next run continues: `in_flight` records are sent again, `staged` ones with the same
 * content are skipped.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { StagecoachError } from '../contract/errors.js';
import { openLedgerDb, type Db, type OpenOptions } from './schema.js';
import { logCursor, logCursorMover } from './ledger-logs.js';
import {
  type BatchRow,
  type BatchState,
  type JobKind,
  type JobRow,
  type JobState,
  type LedgerRecordInput,
  type LedgerRejectInput,
  type PipelineStatus,
  type RecordError,
  type RecordFacts,
  type RecordOutcome,
  type RecordProvenance,
  type RecordRow,
  type RecordState,
  type RunRow,
  type ImportedRef,
  type RunStatus,
  noRecords,
} from './types.js';
import { errorsJson } from './record-errors.js';
import type { RecordList } from './packed-records.js';
import { claimCorrections, correctedOrigins, type CorrectionClaim } from './ledger-corrections.js';

/** Identifies one pipeline's records for one component (records are keyed within it). */
export interface Scope {
  id: number;
  pipeline: string;
  component: string;
}

export interface StartRunInput {
  pipeline: string;
  component: string;
  /** The pipeline file as given (shown in status). */
  pipelineFile: string;
  /** Hash of the pipeline and mapping files' content, to tell runs of changed definitions apart. */
  pipelineHash: string;
  /**
   * Whether this run reads every row (default true). A run over a corrections file reads only
   * some rows, so it must not clear the keyless rejects the last full run reported.
   */
  readsEverything?: boolean;
}

interface RunDbRow {
  id: number;
  pipeline: string;
  component: string;
  pipeline_file: string;
  pipeline_hash: string;
  migration_id: string | null;
  status: RunStatus;
  pid: number | null;
  host: string | null;
  started_at: string;
  finished_at: string | null;
  report: string | null;
}

interface BatchDbRow {
  id: number;
  run: number;
  state: BatchState;
  records: number;
  bytes: number;
  attempts: number;
  error: string | null;
  created_at: string;
  sent_at: string | null;
  finished_at: string | null;
}

interface RecordDbRow {
  pipeline: string;
  component: string;
  keyed: number;
  legacy_key: string;
  reference_id: string | null;
  entity_type: string | null;
  state: RecordState;
  content_hash: string | null;
  migration_id: string | null;
  last_batch: number | null;
  last_run: number;
  attempts: number;
  errors: string | null;
  source: string;
  file: string;
  line: number;
  byte_offset: number;
  row_hash: string;
  updated_at: string;
  origin_file: string | null;
  origin_line: number | null;
  origin_hash: string | null;
}

/** Key of a keyless rejected row: its place in the source. */
export const keylessKey = (p: { file: string; line: number }): string => `${p.file}:${p.line}`;

const RUN_SELECT = `SELECT r.id, s.pipeline, s.component, r.pipeline_file, r.pipeline_hash, r.migration_id, r.status, r.pid, r.host, r.started_at, r.finished_at, r.report
  FROM runs r JOIN scopes s ON s.id = r.scope`;

/** The records' select; a ledger of version 1 opened read-only has no `origin_*` columns yet (schema.ts). */
const recordSelect = (
  withOrigin: boolean,
) => `SELECT s.pipeline, s.component, r.keyed, r.legacy_key, r.reference_id, r.entity_type, r.state, r.content_hash, m.reference_id AS migration_id,
    r.last_batch, r.last_run, r.attempts, r.errors, r.source, r.file, r.line, r.byte_offset, r.row_hash, r.updated_at,
    ${withOrigin ? 'r.origin_file, r.origin_line, r.origin_hash' : 'NULL AS origin_file, NULL AS origin_line, NULL AS origin_hash'}
  FROM records r JOIN scopes s ON s.id = r.scope LEFT JOIN migrations m ON m.id = r.migration`;

/**
 * What a write of a record does to the correction it carries (docs/reconciliation.md, "A record's
 * life through corrections"). `origin_*` name the export row a correction replaced: a row read
 * from that export file again is a newer version of the record's own row, so the correction is
 * over; a row read from a corrections file keeps it. `former_key` is read by the story trigger
 * on this very write and is not needed after it.
 */
const ORIGIN_ON_WRITE = `origin_hash = CASE WHEN excluded.file = records.origin_file THEN NULL ELSE records.origin_hash END,
      origin_line = CASE WHEN excluded.file = records.origin_file THEN NULL ELSE records.origin_line END,
      origin_file = CASE WHEN excluded.file = records.origin_file THEN NULL ELSE records.origin_file END, former_key = NULL`;

/** Records per multi-row insert of a batch (16 parameters each; SQLite allows 32766). */
const SEND_ROWS = 100;

/** Inserts `rows` records (or updates them in place, keeping their attempts count going). */
function sendRecordsSql(rows: number): string {
  return `INSERT INTO records (scope, keyed, legacy_key, reference_id, entity_type, state, content_hash, migration, last_batch, last_run, attempts, errors, source, file, line, byte_offset, row_hash, updated_at)
    VALUES ${Array<string>(rows).fill('(?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)').join(', ')}
    ON CONFLICT (scope, keyed, legacy_key) DO UPDATE SET reference_id = excluded.reference_id, entity_type = excluded.entity_type, state = excluded.state,
      content_hash = excluded.content_hash, migration = excluded.migration, last_batch = excluded.last_batch, last_run = excluded.last_run,
      attempts = records.attempts + excluded.attempts, errors = NULL, source = excluded.source, file = excluded.file, line = excluded.line,
      byte_offset = excluded.byte_offset, row_hash = excluded.row_hash, updated_at = excluded.updated_at, ${ORIGIN_ON_WRITE}`;
}

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
  private readonly s;
  private readonly recordSelectSql: string;
  /** Run locks this ledger holds, by scope id (see takeRunLock). */
  private readonly runLocks = new Map<number, Database.Database>();
  /** Jobs of the migration (validate-staging, import, counts): the store the jobs driver uses. */
  readonly jobs: LedgerJobs;

  constructor(
    readonly file: string,
    /** The open database, for modules that keep their own tables in the ledger file (logs). */
    readonly db: Db,
  ) {
    const readonly = db.readonly;
    this.recordSelectSql = recordSelect((db.pragma('table_info(records)') as { name: string }[]).some((c) => c.name === 'origin_file'));
    const p = <T = unknown>(sql: string) => db.prepare<unknown[], T>(sql);
    this.s = readonly
      ? undefined
      : {
          scopeInsert: p('INSERT INTO scopes (pipeline, component) VALUES (?, ?) ON CONFLICT (pipeline, component) DO NOTHING'),
          migrationInsert: p('INSERT INTO migrations (reference_id) VALUES (?) ON CONFLICT (reference_id) DO NOTHING'),
          settled: p<number>(
            `SELECT 1 FROM records WHERE scope = ? AND keyed = 1 AND legacy_key = ? AND content_hash = ? AND migration = ? AND state IN ('staged', 'invalid', 'imported')`,
          ).pluck(),
          // Positional parameters: binding an object by name costs about a microsecond a row more.
          sendRecord: p(sendRecordsSql(1)),
          // The same for SEND_ROWS records in one statement (rows apply in order, as one by one).
          sendRecords: p(sendRecordsSql(SEND_ROWS)),
          anySettled: p<number>(
            `SELECT 1 FROM records WHERE scope = ? AND migration = ? AND state IN ('staged', 'invalid', 'imported') LIMIT 1`,
          ).pluck(),
          rejectRecord: p(
            `INSERT INTO records (scope, keyed, legacy_key, reference_id, entity_type, state, content_hash, migration, last_batch, last_run, attempts, errors, source, file, line, byte_offset, row_hash, updated_at)
             VALUES (@scope, @keyed, @legacyKey, @referenceId, NULL, 'rejected', NULL, NULL, NULL, @run, 0, @errors, @source, @file, @line, @byteOffset, @rowHash, @now)
             ON CONFLICT (scope, keyed, legacy_key) DO UPDATE SET reference_id = excluded.reference_id, state = 'rejected', content_hash = NULL, migration = NULL,
               last_run = excluded.last_run, errors = excluded.errors, source = excluded.source, file = excluded.file, line = excluded.line,
               byte_offset = excluded.byte_offset, row_hash = excluded.row_hash, updated_at = excluded.updated_at, ${ORIGIN_ON_WRITE}`,
          ),
          outcome: p(
            `UPDATE records SET state = ?, errors = ?, updated_at = ? WHERE scope = ? AND keyed = 1 AND legacy_key = ? AND last_batch = ?`,
          ),
          stageRest: p(`UPDATE records SET state = 'staged', updated_at = ? WHERE last_batch = ? AND state = 'in_flight'`),
          batchInsert: p(`INSERT INTO batches (run, state, records, bytes, attempts, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
          batchFinish: p(`UPDATE batches SET state = ?, error = ?, finished_at = ? WHERE id = ?`),
          // Keyless rows read from a corrections file stay: no run of the export reports them again.
          dropKeyless: p(`DELETE FROM records WHERE scope = ? AND keyed = 0 AND origin_file IS NULL`),
        };
    this.jobs = new LedgerJobs(db);
  }

  close(): void {
    for (const id of [...this.runLocks.keys()]) this.releaseRunLock(id);
    if (this.db.open) this.db.close();
  }

  private get w() {
    if (!this.s) throw new StagecoachError('LEDGER_ERROR', `the ledger ${this.file} was opened read-only`, { file: this.file });
    return this.s;
  }

  // ---------------------------------------------------------------------------------------------
  // Scopes and migrations

  /** The scope of a pipeline's records for a component (created on first use). */
  scope(pipeline: string, component: string): Scope {
    this.w.scopeInsert.run(pipeline, component);
    const row = this.db
      .prepare<[string, string], { id: number }>('SELECT id FROM scopes WHERE pipeline = ? AND component = ?')
      .get(pipeline, component)!;
    return { id: row.id, pipeline, component };
  }

  /** The ledger's small number for a platform migration (records carry it, not the UUID). */
  migrationNo(referenceId: string): number {
    this.w.migrationInsert.run(referenceId);
    return this.db.prepare<[string], { id: number }>('SELECT id FROM migrations WHERE reference_id = ?').get(referenceId)!.id;
  }

  // ---------------------------------------------------------------------------------------------
  // Runs

  /**
   * Starts a run of a pipeline. In the same transaction: refuses when another live process is
   * running the same pipeline on this ledger, marks runs whose process died as `crashed` (their
   * unfinished batches `failed`; their records stay `in_flight` and are sent again), and clears
   * the keyless rejects of the pipeline, which this run reports afresh as it reads (unless it
   * reads only a corrections file).
   */
  startRun(input: StartRunInput): { run: RunRow; scope: Scope; crashed: RunRow[] } {
    const scope = this.scope(input.pipeline, input.component);
    const now = new Date().toISOString();
    const host = hostname();
    const lock = this.takeRunLock(scope);
    const tx = this.db.transaction(() => {
      const crashed: RunRow[] = [];
      const running = this.db.prepare<[number], RunDbRow>(`${RUN_SELECT} WHERE r.scope = ? AND r.status = 'running'`).all(scope.id);
      if (lock === 'busy') {
        const r = running[running.length - 1];
        throw new StagecoachError(
          'LEDGER_ERROR',
          r
            ? `pipeline ${input.pipeline} is already running in process ${r.pid} (run ${r.id}, started ${r.started_at}) on the ledger ${this.file}; wait for it or stop it first`
            : `pipeline ${input.pipeline} is already running in another process on the ledger ${this.file}; wait for it or stop it first`,
          { file: this.file },
        );
      }
      for (const r of running) {
        // A fresh lock means no process holds the pipeline: every 'running' row is a run that died.
        // Held already by this process, the row's own process decides (a run started here earlier).
        if (lock === 'held' && r.host === host && r.pid !== null && r.pid !== process.pid && processAlive(r.pid)) {
          throw new StagecoachError(
            'LEDGER_ERROR',
            `pipeline ${input.pipeline} is already running in process ${r.pid} (run ${r.id}, started ${r.started_at}) on the ledger ${this.file}; wait for it or stop it first`,
            { file: this.file },
          );
        }
        this.db.prepare(`UPDATE runs SET status = 'crashed', finished_at = ? WHERE id = ?`).run(now, r.id);
        this.db
          .prepare(
            `UPDATE batches SET state = 'failed', error = 'the run ended before the results came back', finished_at = ? WHERE run = ? AND state IN ('building', 'in_flight')`,
          )
          .run(now, r.id);
        crashed.push(toRun({ ...r, status: 'crashed', finished_at: now }));
      }
      if (input.readsEverything !== false) this.w.dropKeyless.run(scope.id);
      const { lastInsertRowid } = this.db
        .prepare(
          `INSERT INTO runs (scope, pipeline_file, pipeline_hash, status, pid, host, started_at) VALUES (?, ?, ?, 'running', ?, ?, ?)`,
        )
        .run(scope.id, input.pipelineFile, input.pipelineHash, process.pid, host, now);
      return { run: this.run(Number(lastInsertRowid))!, crashed };
    });
    try {
      const { run, crashed } = tx();
      return { run, scope, crashed };
    } catch (err) {
      if (lock === 'taken') this.releaseRunLock(scope.id);
      throw err;
    }
  }

  /**
   * The run lock of a pipeline: an exclusive SQLite lock on a file beside the ledger, held by an
   * open connection for as long as the run goes. The operating system releases it when the
   * process dies — killed, not yet reaped, whatever became of its pid — so a dead run never
   * blocks the next, and a live one always does.
   */
  private takeRunLock(scope: Scope): 'taken' | 'held' | 'busy' {
    if (this.runLocks.has(scope.id)) return 'held';
    const lock = new Database(`${this.file}.run-${scope.id}.lock`, { timeout: 0 });
    try {
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('BEGIN EXCLUSIVE');
    } catch (err) {
      lock.close();
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return 'busy';
      throw err;
    }
    this.runLocks.set(scope.id, lock);
    return 'taken';
  }

  private releaseRunLock(scopeId: number): void {
    this.runLocks.get(scopeId)?.close();
    this.runLocks.delete(scopeId);
  }

  /** Records the platform migration a run attached to. */
  setRunMigration(runId: number, migrationId: string): void {
    this.db.prepare('UPDATE runs SET migration_id = ? WHERE id = ?').run(migrationId, runId);
  }

  /** Ends a run with its status and report (stored as JSON). */
  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, report?: unknown): void {
    this.db
      .prepare('UPDATE runs SET status = ?, finished_at = ?, report = ? WHERE id = ?')
      .run(status, new Date().toISOString(), report === undefined ? null : JSON.stringify(report), runId);
    const scope = this.db.prepare('SELECT scope FROM runs WHERE id = ?').get(runId) as { scope: number } | undefined;
    if (scope && !this.db.prepare("SELECT 1 FROM runs WHERE scope = ? AND status = 'running'").get(scope.scope))
      this.releaseRunLock(scope.scope);
  }

  run(id: number): RunRow | undefined {
    const row = this.db.prepare<[number], RunDbRow>(`${RUN_SELECT} WHERE r.id = ?`).get(id);
    return row && toRun(row);
  }

  /** Runs, oldest first; of one pipeline when named. */
  runs(pipeline?: string): RunRow[] {
    const rows =
      pipeline === undefined
        ? this.db.prepare<[], RunDbRow>(`${RUN_SELECT} ORDER BY r.id`).all()
        : this.db.prepare<[string], RunDbRow>(`${RUN_SELECT} WHERE s.pipeline = ? ORDER BY r.id`).all(pipeline);
    return rows.map(toRun);
  }

  /** Stores what a run read (its source files' fingerprints, where it started), as JSON. */
  setRunSources(runId: number, sources: unknown): void {
    this.db.prepare('INSERT OR REPLACE INTO run_sources (run, sources) VALUES (?, ?)').run(runId, JSON.stringify(sources));
  }

  /** What `setRunSources` stored for the run, if anything. */
  runSources(runId: number): unknown {
    const row = this.db.prepare<[number], { sources: string }>('SELECT sources FROM run_sources WHERE run = ?').get(runId);
    return row ? JSON.parse(row.sources) : undefined;
  }

  /**
   * Where a run that ended without finishing got to: the rows of the last batch of its unbroken
   * series of `done` batches (batches are sent in source order, so every mapped row before them
   * is settled too). Undefined when its first batch is not done.
   */
  lastDoneBatchRows(runId: number): RecordProvenance[] | undefined {
    const batches = this.db
      .prepare<[number], { id: number; state: string }>('SELECT id, state FROM batches WHERE run = ? ORDER BY id')
      .all(runId);
    let last: number | undefined;
    for (const b of batches) {
      if (b.state !== 'done') break;
      last = b.id;
    }
    if (last === undefined) return undefined;
    return this.db
      .prepare<[number], RecordProvenance>(
        'SELECT source, file, line, byte_offset AS byteOffset, row_hash AS rowHash FROM records WHERE last_batch = ?',
      )
      .all(last);
  }

  /**
   * The keys of a file's keyed records whose rows start before `beforeByte`, with their lines, as
   * `[legacyKey, line]` (a resumed run's key index for the rows it does not read). Raw rows and only
   * the two columns: a resume at a million rows must not build a million objects first.
   * @example for (const [key, line] of ledger.keysBefore(scope, 'klanten', 'klanten.csv', 51_507_103)) index.add(…)
   */
  keysBefore(scope: Scope, source: string, file: string, beforeByte: number): IterableIterator<[string, number]> {
    return this.db
      .prepare<[number, string, string, number], [string, number]>(
        'SELECT legacy_key, line FROM records WHERE scope = ? AND keyed = 1 AND source = ? AND file = ? AND byte_offset < ?',
      )
      .raw(true)
      .iterate(scope.id, source, file, beforeByte);
  }

  /**
   * Ties rows read from a corrections file to the records they correct, before their writes
   * (src/ledger/ledger-corrections.ts): one transaction.
   */
  claimCorrections(scope: Scope, claims: readonly CorrectionClaim[]): void {
    claimCorrections(this.db, scope.id, claims);
  }

  /** The export rows corrections replaced (`file\u0000rowHash`): a run of the export into that migration leaves them alone. */
  correctedOrigins(scope: Scope, migrationNo: number): Set<string> {
    return correctedOrigins(this.db, scope.id, migrationNo);
  }

  /** Drops the scope's keyless rejects (a run that reads everything reports them afresh). */
  dropKeylessRejects(scope: Scope): void {
    this.w.dropKeyless.run(scope.id);
  }

  // ---------------------------------------------------------------------------------------------
  // Records and batches (the hot path of a run)

  /**
   * True when the record is on the platform with exactly this content: staged (or validated
   * invalid, or imported) in this migration with the same content hash. Such a record is not
   * sent again.
   */
  isSettled(scope: Scope, migrationNo: number, legacyKey: string, contentHash: string): boolean {
    return this.w.settled.get(scope.id, legacyKey, contentHash, migrationNo) !== undefined;
  }

  /** Whether any record of the scope is settled in the migration (if none, no lookup can hit). */
  /** The last line of a file the ledger holds a record of, in a scope (0: none). */
  lastLineOf(scope: Scope, file: string): number {
    const row = this.db.prepare('SELECT max(line) AS m FROM records WHERE scope = ? AND file = ?').get(scope.id, file) as {
      m: number | null;
    };
    return row.m ?? 0;
  }

  hasSettled(scope: Scope, migrationNo: number): boolean {
    return this.w.anySettled.get(scope.id, migrationNo) !== undefined;
  }

  /**
   * `isSettled` for many records in one read transaction (one WAL snapshot instead of one per
   * lookup). Returns the legacy keys of the settled ones.
   */
  settledKeys(scope: Scope, migrationNo: number, records: ReadonlyArray<{ legacyKey: string; contentHash: string }>): Set<string> {
    const s = this.w;
    const settled = new Set<string>();
    this.db.transaction(() => {
      for (const r of records) if (s.settled.get(scope.id, r.legacyKey, r.contentHash, migrationNo) !== undefined) settled.add(r.legacyKey);
    })();
    return settled;
  }

  /**
   * Records rows refused before upload, in one transaction. A row with a legacy key replaces
   * that key's earlier state; a row without one is kept under `file:line`. A refused row is in no
   * migration (so the report of whichever migration the pipeline runs into counts it, also when
   * the record was staged in an earlier one).
   */
  recordRejects(runId: number, scope: Scope, rejects: readonly LedgerRejectInput[]): void {
    if (rejects.length === 0) return;
    const s = this.w;
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const r of rejects) {
        const keyed = r.legacyKey !== undefined && r.legacyKey !== '';
        s.rejectRecord.run({
          scope: scope.id,
          keyed: keyed ? 1 : 0,
          legacyKey: keyed ? r.legacyKey : keylessKey(r.provenance),
          referenceId: r.referenceId ?? null,
          run: runId,
          errors: errorsJson(r.errors),
          source: r.provenance.source,
          file: r.provenance.file,
          line: r.provenance.line,
          byteOffset: r.provenance.byteOffset,
          rowHash: r.provenance.rowHash,
          now,
        });
      }
    })();
  }

  /**
   * Opens a batch and moves its records to `in_flight` (with the migration they go to), in one
   * transaction, before the upload starts. Returns the batch id.
   */
  beginBatch(runId: number, scope: Scope, migrationNo: number, records: RecordList, bytes: number): number {
    return this.writeBatch(runId, scope, migrationNo, records, bytes, 'in_flight');
  }

  /**
   * Keeps records that were mapped but never sent (a run stopped while their batch was being
   * built) as `mapped`, under a batch left `building`. The next run sends them.
   */
  recordUnsent(runId: number, scope: Scope, migrationNo: number | null, records: RecordList, bytes: number): number | undefined {
    if (records.length === 0) return undefined;
    return this.writeBatch(runId, scope, migrationNo, records, bytes, 'building');
  }

  private writeBatch(
    runId: number,
    scope: Scope,
    migrationNo: number | null,
    records: RecordList,
    bytes: number,
    state: 'in_flight' | 'building',
  ): number {
    const s = this.w;
    const now = new Date().toISOString();
    const sending = state === 'in_flight';
    return this.db.transaction(() => {
      const batch = Number(
        s.batchInsert.run(runId, state, records.length, bytes, sending ? 1 : 0, now, sending ? now : null).lastInsertRowid,
      );
      const state_ = sending ? 'in_flight' : 'mapped';
      const attempts = sending ? 1 : 0;
      const params: unknown[] = [];
      const bind = (r: LedgerRecordInput) => {
        const p = r.provenance;
        params.push(
          scope.id,
          r.legacyKey,
          r.referenceId,
          r.entityType ?? null,
          state_,
          r.contentHash,
          migrationNo,
          batch,
          runId,
          attempts,
          p.source,
          p.file,
          p.line,
          p.byteOffset,
          p.rowHash,
          now,
        );
      };
      // SEND_ROWS records a statement while whole groups remain, then one at a time.
      let left = records.length;
      let inGroup = 0;
      for (const r of records) {
        bind(r);
        if (left < SEND_ROWS) {
          s.sendRecord.run(params);
          params.length = 0;
        } else if (++inGroup === SEND_ROWS) {
          s.sendRecords.run(params);
          params.length = 0;
          inGroup = 0;
          left -= SEND_ROWS;
        }
      }
      return batch;
    })();
  }

  /**
   * Stores a batch's staging results in one transaction: each record `staged` or `failed` (with
   * its errors), the batch `done`. `outcomes` must hold one entry per record of the batch (a
   * record without a result is `failed`, see the uploader); the `staged` ones need no own write.
   * Outcomes for records no longer in this batch (sent again by a later batch) are ignored.
   */
  finishBatch(scope: Scope, batchId: number, outcomes: readonly RecordOutcome[]): void {
    const s = this.w;
    const now = new Date().toISOString();
    this.db.transaction(() => {
      // Refusals one by one, then every record of the batch still in flight is staged at once.
      for (const o of outcomes)
        if (o.state !== 'staged')
          s.outcome.run(o.state, o.errors && o.errors.length > 0 ? errorsJson(o.errors) : null, now, scope.id, o.legacyKey, batchId);
      s.stageRest.run(now, batchId);
      s.batchFinish.run('done', null, now, batchId);
    })();
  }

  /**
   * Marks a batch `failed` when its upload failed as a whole (service unreachable after the
   * client's retries, aborted). Its records stay `in_flight`: whether the platform stored them
   * is unknown, so the next run sends them again.
   */
  failBatch(batchId: number, error: string): void {
    this.w.batchFinish.run('failed', error, new Date().toISOString(), batchId);
  }

  batch(id: number): BatchRow | undefined {
    const row = this.db.prepare<[number], BatchDbRow>('SELECT * FROM batches WHERE id = ?').get(id);
    return row && toBatch(row);
  }

  /** Batches of a run, in order. */
  batches(runId: number): BatchRow[] {
    return this.db.prepare<[number], BatchDbRow>('SELECT * FROM batches WHERE run = ? ORDER BY id').all(runId).map(toBatch);
  }

  // ---------------------------------------------------------------------------------------------
  // Reading records back (status, reports, corrections)

  /** Per pipeline: records per state, the latest run and the latest batch. */
  status(): PipelineStatus[] {
    const scopes = this.db
      .prepare<[], { id: number; pipeline: string; component: string }>(
        'SELECT id, pipeline, component FROM scopes ORDER BY pipeline, component',
      )
      .all();
    const lastRun = this.db.prepare<[number], RunDbRow>(`${RUN_SELECT} WHERE r.scope = ? ORDER BY r.id DESC LIMIT 1`);
    const lastBatch = this.db.prepare<[number], BatchDbRow>(
      'SELECT b.* FROM batches b JOIN runs r ON r.id = b.run WHERE r.scope = ? ORDER BY b.id DESC LIMIT 1',
    );
    return scopes.map((sc) => {
      const byState = noRecords();
      let records = 0;
      for (const { state, n } of this.countByState(sc.id)) {
        byState[state] = n;
        records += n;
      }
      const run = lastRun.get(sc.id);
      const batch = lastBatch.get(sc.id);
      return {
        pipeline: sc.pipeline,
        component: sc.component,
        records,
        byState,
        lastRun: run && toRun(run),
        lastBatch: batch && toBatch(batch),
      };
    });
  }

  /** Counts per state for one pipeline (all components when none is named). */
  counts(pipeline: string, component?: string): Record<RecordState, number> {
    const byState = noRecords();
    const scopes = this.db
      .prepare<[string], { id: number; component: string }>('SELECT id, component FROM scopes WHERE pipeline = ?')
      .all(pipeline);
    for (const sc of scopes)
      if (component === undefined || sc.component === component) for (const { state, n } of this.countByState(sc.id)) byState[state] += n;
    return byState;
  }

  private countByState(scopeId: number): { state: RecordState; n: number }[] {
    return this.db
      .prepare<[number], { state: RecordState; n: number }>('SELECT state, count(*) AS n FROM records WHERE scope = ? GROUP BY state')
      .all(scopeId);
  }

  /**
   * Records, lazily, in key order; filtered by pipeline, component and states.
   * @example for (const r of ledger.records({ pipeline: 'crm', states: ['failed'] })) console.log(r.provenance.file, r.provenance.line, r.errors);
   */
  *records(filter: { pipeline?: string; component?: string; states?: readonly RecordState[] } = {}): Generator<RecordRow> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.pipeline !== undefined) where.push('s.pipeline = ?') && args.push(filter.pipeline);
    if (filter.component !== undefined) where.push('s.component = ?') && args.push(filter.component);
    if (filter.states !== undefined) {
      if (filter.states.length === 0) return;
      where.push(`r.state IN (${filter.states.map(() => '?').join(', ')})`);
      args.push(...filter.states);
    }
    const sql = `${this.recordSelectSql}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY r.scope, r.keyed DESC, r.legacy_key`;
    for (const row of this.db.prepare<unknown[], RecordDbRow>(sql).iterate(...args)) yield toRecord(row);
  }

  /**
   * The records the migration refused (rejected before upload, refused by staging, invalid in
   * validation), in the shape the corrections writer takes; `origin` is the export row each
   * stands for (its `_origin`: where it was read, or the row its correction replaced).
   */
  *refused(filter: { pipeline?: string; component?: string } = {}): Generator<{
    source: string;
    provenance: { file: string; line: number; byteOffset: number };
    origin: { file: string; line: number };
    errors: Array<{ field: string; code: string; message: string; stage: string }>;
  }> {
    for (const r of this.records({ ...filter, states: ['rejected', 'failed', 'invalid'] })) {
      yield {
        source: r.provenance.source,
        provenance: { file: r.provenance.file, line: r.provenance.line, byteOffset: r.provenance.byteOffset },
        origin: r.origin ? { file: r.origin.file, line: r.origin.line } : { file: r.provenance.file, line: r.provenance.line },
        errors: r.errors.map((e) => ({ field: e.field, code: e.code, message: e.message, stage: e.stage })),
      };
    }
  }

  /**
   * The records of a pipeline the platform holds from an import, in whichever migration of the
   * pipeline it happened, only what `verify` sets beside the platform, in referenceId order (one
   * scan; the caller's referenceId-keyed table is appended to instead of written at random):
   * records whose state is `imported`, and records written again by a later run that did not
   * import them (refused, or sent into a migration that was canceled) whose earlier import the
   * ledger keeps in `earlier_imports` — with what that import sent (its content hash) and the
   * pipeline's last run in that migration, whose mappings sent it.
   */
  *liveImportsOf(pipeline: string): Generator<ImportedRef> {
    const legacyKey = "CASE WHEN r.keyed = 1 THEN r.legacy_key ELSE '' END";
    const imported = `SELECT r.reference_id AS referenceId, r.file, r.line, ${legacyKey} AS legacyKey, r.content_hash AS contentHash,
        r.last_run AS run, m.reference_id AS migrationId
      FROM records r JOIN scopes s ON s.id = r.scope JOIN migrations m ON m.id = r.migration
      WHERE s.pipeline = $pipeline AND r.state = 'imported' AND r.reference_id IS NOT NULL`;
    // A ledger written before earlier_imports existed knows of no earlier import.
    const hasEarlier = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'earlier_imports'").get();
    const earlier = `SELECT e.reference_id AS referenceId, r.file, r.line, ${legacyKey} AS legacyKey, e.content_hash AS contentHash,
        (SELECT max(u.id) FROM runs u JOIN scopes us ON us.id = u.scope WHERE us.pipeline = $pipeline AND u.migration_id = m.reference_id) AS run,
        m.reference_id AS migrationId
      FROM earlier_imports e
      JOIN records r ON r.scope = e.scope AND r.keyed = e.keyed AND r.legacy_key = e.legacy_key
      JOIN scopes s ON s.id = r.scope JOIN migrations m ON m.id = e.migration
      WHERE s.pipeline = $pipeline AND r.state <> 'imported' AND e.reference_id IS NOT NULL`;
    yield* this.db
      .prepare<[{ pipeline: string }], ImportedRef>(`${imported}${hasEarlier ? ` UNION ALL ${earlier}` : ''} ORDER BY referenceId`)
      .iterate({ pipeline });
  }

  /** Records grouped by pipeline, component, entity type, state and first error code (for reports). */
  facts(filter: { pipeline?: string } = {}): RecordFacts[] {
    const sql = `SELECT s.pipeline, s.component, r.entity_type AS entityType, r.state, json_extract(r.errors, '$[0].code') AS code, count(*) AS count
      FROM records r JOIN scopes s ON s.id = r.scope ${filter.pipeline !== undefined ? 'WHERE s.pipeline = ?' : ''}
      GROUP BY s.pipeline, s.component, r.entity_type, r.state, code ORDER BY s.pipeline, s.component, r.entity_type, r.state, code`;
    const stmt = this.db.prepare<unknown[], RecordFacts>(sql);
    return filter.pipeline !== undefined ? stmt.all(filter.pipeline) : stmt.all();
  }

  /**
   * Records with these referenceIds (validation errors name records by referenceId). One scan of
   * the records table through a temporary table, instead of a permanent index on random UUIDs
   * that every run would pay for on every write.
   */
  recordsByReferenceIds(referenceIds: Iterable<string>): RecordRow[] {
    return this.withIdTable(referenceIds, () =>
      this.db
        .prepare<[], RecordDbRow>(
          `${this.recordSelectSql} JOIN temp.wanted w ON w.reference_id = r.reference_id ORDER BY r.scope, r.legacy_key`,
        )
        .all()
        .map(toRecord),
    );
  }

  /**
   * Applies a validation job's result for a migration in one transaction: the records it names
   * become `invalid` with their errors (stage `validation`); records it no longer names that were
   * `invalid` in this migration go back to `staged`.
   * @example ledger.markValidated(migrationId, result.errors.map((e) => ({ referenceId: e.referenceId, field: e.field, message: e.message })));
   */
  markValidated(
    migrationId: string,
    errors: ReadonlyArray<{ referenceId: string; field: string; message: string; code?: string }>,
  ): { invalid: number; cleared: number } {
    const migration = this.migrationNo(migrationId);
    const byRef = new Map<string, RecordError[]>();
    for (const e of errors) {
      const list = byRef.get(e.referenceId) ?? [];
      list.push({ stage: 'validation', field: e.field, code: e.code ?? codeOf(e.message), message: e.message });
      byRef.set(e.referenceId, list);
    }
    return this.db.transaction(() => {
      const now = new Date().toISOString();
      const cleared = this.db
        .prepare(`UPDATE records SET state = 'staged', errors = NULL, updated_at = ? WHERE migration = ? AND state = 'invalid'`)
        .run(now, migration).changes;
      this.db.exec('CREATE TEMP TABLE IF NOT EXISTS wanted_errors (reference_id TEXT PRIMARY KEY, errors TEXT NOT NULL)');
      this.db.exec('DELETE FROM temp.wanted_errors');
      const ins = this.db.prepare('INSERT INTO temp.wanted_errors (reference_id, errors) VALUES (?, ?)');
      for (const [ref, list] of byRef) ins.run(ref, errorsJson(list));
      const invalid = this.db
        .prepare(
          `UPDATE records SET state = 'invalid', errors = w.errors, updated_at = ? FROM temp.wanted_errors w WHERE w.reference_id = records.reference_id AND records.migration = ? AND records.state IN ('staged', 'invalid')`,
        )
        .run(now, migration).changes;
      this.db.exec('DELETE FROM temp.wanted_errors');
      return { invalid, cleared: Math.max(0, cleared - invalid) };
    })();
  }

  /** After a completed import: every `staged` record of the migration becomes `imported`, in one transaction. */
  markImported(migrationId: string): number {
    const migration = this.migrationNo(migrationId);
    return this.db
      .prepare(`UPDATE records SET state = 'imported', updated_at = ? WHERE migration = ? AND state = 'staged'`)
      .run(new Date().toISOString(), migration).changes;
  }

  // ---------------------------------------------------------------------------------------------
  // Migration log cursor (where `logs --follow` continues from)

  /** The `continue-from` value for the migration's log, or undefined to start at the beginning. */
  logCursor(migrationId: string): number | undefined {
    return logCursor(this.db, migrationId);
  }

  /** Moves the log cursor forward (never back). */
  setLogCursor(migrationId: string, continueFrom: number): void {
    logCursorMover(this.db, migrationId)(continueFrom);
  }

  private withIdTable<T>(ids: Iterable<string>, fn: () => T): T {
    return this.db.transaction(() => {
      this.db.exec('CREATE TEMP TABLE IF NOT EXISTS wanted (reference_id TEXT PRIMARY KEY)');
      this.db.exec('DELETE FROM temp.wanted');
      const ins = this.db.prepare('INSERT OR IGNORE INTO temp.wanted (reference_id) VALUES (?)');
      for (const id of ids) ins.run(id);
      try {
        return fn();
      } finally {
        this.db.exec('DELETE FROM temp.wanted');
      }
    })();
  }
}

/**
 * The jobs table: validate-staging, import and counts jobs per migration, so a crash or Ctrl-C
 * while a job runs resumes polling the same job instead of starting a second one. Shaped as the
 * `JobStore` of src/reconcile/jobs-driver.ts.
 */
export class LedgerJobs {
  constructor(private readonly db: Db) {}

  /** The newest job of that kind for the migration, whatever its state. */
  latest<R = unknown>(migrationId: string, kind: JobKind): JobRow<R> | undefined {
    const row = this.db
      .prepare<[string, string], JobDbRow>('SELECT * FROM jobs WHERE migration_id = ? AND kind = ? ORDER BY id DESC LIMIT 1')
      .get(migrationId, kind);
    return row && toJob<R>(row);
  }

  /** Records a job the service has just started; durable when this returns. */
  started(migrationId: string, kind: JobKind, jobId: string): void {
    this.db
      .prepare(
        `INSERT INTO jobs (migration_id, kind, job_id, state, started_at) VALUES (?, ?, ?, 'running', ?) ON CONFLICT (job_id) DO NOTHING`,
      )
      .run(migrationId, kind, jobId, new Date().toISOString());
  }

  /** Ends a job with its result. */
  finished(jobId: string, state: Exclude<JobState, 'running'>, result?: unknown): void {
    this.db
      .prepare('UPDATE jobs SET state = ?, finished_at = ?, result = ? WHERE job_id = ?')
      .run(state, new Date().toISOString(), result === undefined ? null : JSON.stringify(result), jobId);
  }

  /** Every job of the migration, oldest first. */
  list<R = unknown>(migrationId: string): JobRow<R>[] {
    return this.db
      .prepare<[string], JobDbRow>('SELECT * FROM jobs WHERE migration_id = ? ORDER BY id')
      .all(migrationId)
      .map((r) => toJob<R>(r));
  }
}

interface JobDbRow {
  migration_id: string;
  kind: JobKind;
  job_id: string;
  state: JobState;
  started_at: string;
  finished_at: string | null;
  result: string | null;
}

function toJob<R>(r: JobDbRow): JobRow<R> {
  const job: JobRow<R> = { migrationId: r.migration_id, kind: r.kind, jobId: r.job_id, state: r.state, startedAt: r.started_at };
  if (r.result !== null) job.result = JSON.parse(r.result) as R;
  if (r.finished_at !== null) job.finishedAt = r.finished_at;
  return job;
}

function toRun(r: RunDbRow): RunRow {
  return {
    id: r.id,
    pipeline: r.pipeline,
    component: r.component,
    pipelineFile: r.pipeline_file,
    pipelineHash: r.pipeline_hash,
    migrationId: r.migration_id,
    status: r.status,
    pid: r.pid,
    host: r.host,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    report: r.report === null ? undefined : JSON.parse(r.report),
  };
}

function toBatch(b: BatchDbRow): BatchRow {
  return {
    id: b.id,
    run: b.run,
    state: b.state,
    records: b.records,
    bytes: b.bytes,
    attempts: b.attempts,
    error: b.error,
    createdAt: b.created_at,
    sentAt: b.sent_at,
    finishedAt: b.finished_at,
  };
}

function toRecord(r: RecordDbRow): RecordRow {
  return {
    pipeline: r.pipeline,
    component: r.component,
    legacyKey: r.keyed ? r.legacy_key : undefined,
    referenceId: r.reference_id,
    entityType: r.entity_type,
    state: r.state,
    contentHash: r.content_hash,
    migrationId: r.migration_id,
    lastBatch: r.last_batch,
    lastRun: r.last_run,
    attempts: r.attempts,
    errors: r.errors === null ? [] : (JSON.parse(r.errors) as RecordError[]),
    provenance: { source: r.source, file: r.file, line: r.line, byteOffset: r.byte_offset, rowHash: r.row_hash },
    ...(r.origin_file !== null ? { origin: { file: r.origin_file, line: r.origin_line ?? 0, rowHash: r.origin_hash ?? '' } } : {}),
    updatedAt: r.updated_at,
  };
}

/** A validation message may begin with its code ("UNKNOWN_CODE: …"). */
function codeOf(message: string): string {
  return /^([A-Z][A-Z0-9_]{2,})\b/.exec(message)?.[1] ?? message;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
