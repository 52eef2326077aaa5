/**
 * A ledger's runs: starting one (one run per pipeline and ledger at a time, held by a run lock;
 * runs whose process died found and marked `crashed`), ending it, what it read (run_sources) and
 * where a run that ended early got to, for the next run to resume from.
 */
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { StagecoachError } from '../contract/errors.js';
import { hexText } from './compact.js';
import type { Db } from './schema.js';
import { once, RUN_SELECT, toRun, type RunDbRow } from './rows.js';
import type { Scope, Scopes } from './scopes.js';
import type { RecordProvenance, RunRow, RunStatus } from './types.js';

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

export class Runs {
  /** Run locks this ledger holds, by scope id (see takeRunLock). */
  private readonly runLocks = new Map<number, Database.Database>();
  private readonly running = once(() => this.db.prepare<[number], RunDbRow>(`${RUN_SELECT} WHERE r.scope = ? AND r.status = 'running'`));
  private readonly markCrashed = once(() => this.db.prepare(`UPDATE runs SET status = 'crashed', finished_at = ? WHERE id = ?`));
  private readonly failOpenBatches = once(() =>
    this.db.prepare(
      `UPDATE batches SET state = 'failed', error = 'the run ended before the results came back', finished_at = ? WHERE run = ? AND state IN ('building', 'in_flight')`,
    ),
  );
  private readonly insertRun = once(() =>
    this.db.prepare(
      `INSERT INTO runs (scope, pipeline_file, pipeline_hash, status, pid, host, started_at) VALUES (?, ?, ?, 'running', ?, ?, ?)`,
    ),
  );
  // Keyless rows read from a corrections file stay: no run of the export reports them again.
  private readonly dropKeyless = once(() =>
    this.db.prepare(`DELETE FROM record_rows WHERE scope = ? AND keyed = 0 AND origin_file IS NULL`),
  );
  private readonly attach = once(() => this.db.prepare('UPDATE runs SET migration_id = ? WHERE id = ?'));
  private readonly finish = once(() => this.db.prepare('UPDATE runs SET status = ?, finished_at = ?, report = ? WHERE id = ?'));
  private readonly scopeOfRun = once(() => this.db.prepare<[number], { scope: number }>('SELECT scope FROM runs WHERE id = ?'));
  private readonly anyRunning = once(() => this.db.prepare<[number], unknown>("SELECT 1 FROM runs WHERE scope = ? AND status = 'running'"));
  private readonly byId = once(() => this.db.prepare<[number], RunDbRow>(`${RUN_SELECT} WHERE r.id = ?`));
  private readonly all = once(() => this.db.prepare<[], RunDbRow>(`${RUN_SELECT} ORDER BY r.id`));
  private readonly ofPipeline = once(() => this.db.prepare<[string], RunDbRow>(`${RUN_SELECT} WHERE s.pipeline = ? ORDER BY r.id`));
  private readonly lastOfScope = once(() =>
    this.db.prepare<[number], RunDbRow>(`${RUN_SELECT} WHERE r.scope = ? ORDER BY r.id DESC LIMIT 1`),
  );
  private readonly lastMigrationOfScope = once(() =>
    this.db
      .prepare<[number], string>('SELECT migration_id FROM runs WHERE scope = ? AND migration_id IS NOT NULL ORDER BY id DESC LIMIT 1')
      .pluck(),
  );
  private readonly putSources = once(() => this.db.prepare('INSERT OR REPLACE INTO run_sources (run, sources) VALUES (?, ?)'));
  private readonly getSources = once(() => this.db.prepare<[number], string>('SELECT sources FROM run_sources WHERE run = ?').pluck());
  private readonly batchStates = once(() =>
    this.db.prepare<[number], { id: number; state: string }>('SELECT id, state FROM batches WHERE run = ? ORDER BY id'),
  );
  private readonly rowsOfBatch = once(() =>
    this.db.prepare<[number], RecordProvenance>(
      `SELECT f.source, f.path AS file, e.line, e.byte_offset AS byteOffset, ${hexText('e.row_hash')} AS rowHash
         FROM batch_ends e JOIN record_files f ON f.id = e.file_id WHERE e.batch = ?`,
    ),
  );
  private readonly keysBeforeStmt = once(() =>
    this.db
      .prepare<[number, string, string, number], [string, number]>(
        `SELECT legacy_key, line FROM record_rows WHERE scope = ? AND keyed = 1
           AND file_id = (SELECT id FROM record_files WHERE source = ? AND path = ?) AND byte_offset < ?`,
      )
      .raw(true),
  );
  private readonly lastLine = once(() =>
    this.db
      .prepare<[number, string], number | null>(
        'SELECT max(line) FROM record_rows WHERE scope = ? AND file_id IN (SELECT id FROM record_files WHERE path = ?)',
      )
      .pluck(),
  );

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly scopes: Scopes,
  ) {}

  /**
   * Starts a run of a pipeline. In the same transaction: refuses when another live process is
   * running the same pipeline on this ledger, marks runs whose process died as `crashed` (their
   * unfinished batches `failed`; their records stay `in_flight` and are sent again), and clears
   * the keyless rejects of the pipeline, which this run reports afresh as it reads (unless it
   * reads only a corrections file).
   */
  start(input: StartRunInput): { run: RunRow; scope: Scope; crashed: RunRow[] } {
    const scope = this.scopes.scope(input.pipeline, input.component);
    const now = new Date().toISOString();
    const host = hostname();
    const lock = this.takeRunLock(scope);
    const tx = this.db.transaction(() => {
      const crashed: RunRow[] = [];
      const running = this.running().all(scope.id);
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
        this.markCrashed().run(now, r.id);
        this.failOpenBatches().run(now, r.id);
        crashed.push(toRun({ ...r, status: 'crashed', finished_at: now }));
      }
      if (input.readsEverything !== false) this.dropKeylessRejects(scope);
      const { lastInsertRowid } = this.insertRun().run(scope.id, input.pipelineFile, input.pipelineHash, process.pid, host, now);
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

  /** Lets go of every run lock (the ledger closes). */
  releaseAll(): void {
    for (const id of [...this.runLocks.keys()]) this.releaseRunLock(id);
  }

  /** Drops the scope's keyless rejects (a run that reads everything reports them afresh). */
  dropKeylessRejects(scope: Scope): void {
    this.dropKeyless().run(scope.id);
  }

  /** Records the platform migration a run attached to. */
  setMigration(runId: number, migrationId: string): void {
    this.attach().run(migrationId, runId);
  }

  /** Ends a run with its status and report (stored as JSON); its lock goes when no run of its pipeline is left running. */
  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, report?: unknown): void {
    this.finish().run(status, new Date().toISOString(), report === undefined ? null : JSON.stringify(report), runId);
    const scope = this.scopeOfRun().get(runId);
    if (scope && !this.anyRunning().get(scope.scope)) this.releaseRunLock(scope.scope);
  }

  run(id: number): RunRow | undefined {
    const row = this.byId().get(id);
    return row && toRun(row);
  }

  /** Runs, oldest first; of one pipeline when named. */
  runs(pipeline?: string): RunRow[] {
    return (pipeline === undefined ? this.all().all() : this.ofPipeline().all(pipeline)).map(toRun);
  }

  /** The latest run of a scope. */
  lastOf(scopeId: number): RunRow | undefined {
    const row = this.lastOfScope().get(scopeId);
    return row && toRun(row);
  }

  /** The migration of the scope's latest run that had one. */
  lastMigrationOf(scopeId: number): string | undefined {
    return this.lastMigrationOfScope().get(scopeId);
  }

  /** Stores what a run read (its source files' fingerprints, where it started), as JSON. */
  setSources(runId: number, sources: unknown): void {
    this.putSources().run(runId, JSON.stringify(sources));
  }

  /** What `setSources` stored for the run, if anything. */
  sources(runId: number): unknown {
    const json = this.getSources().get(runId);
    return json === undefined ? undefined : JSON.parse(json);
  }

  /**
   * Where a run that ended without finishing got to: the last batch of its unbroken series of
   * `done` batches (batches are sent in source order, so every mapped row before them is settled
   * too), as its furthest row in each file it read from (batch_ends). Undefined when its first
   * batch is not done.
   */
  lastDoneBatchRows(runId: number): RecordProvenance[] | undefined {
    let last: number | undefined;
    for (const b of this.batchStates().all(runId)) {
      if (b.state !== 'done') break;
      last = b.id;
    }
    return last === undefined ? undefined : this.rowsOfBatch().all(last);
  }

  /**
   * The keys of a file's keyed records whose rows start before `beforeByte`, with their lines, as
   * `[legacyKey, line]` (a resumed run's key index for the rows it does not read). Raw rows and only
   * the two columns: a resume at a million rows must not build a million objects first.
   */
  keysBefore(scope: Scope, source: string, file: string, beforeByte: number): IterableIterator<[string, number]> {
    return this.keysBeforeStmt().iterate(scope.id, source, file, beforeByte);
  }

  /** The last line of a file the ledger holds a record of, in a scope (0: none). */
  lastLineOf(scope: Scope, file: string): number {
    return this.lastLine().get(scope.id, file) ?? 0;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
