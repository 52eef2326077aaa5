/**
 * Background jobs of migrations (validate-staging, import, counts), persisted so that they
 * survive a restart: a job is `Running` with a cursor (the last staged rowid it finished) and
 * counters until it is `Done` with its result. Errors found on the way are rows of their own,
 * written in the same transaction as the cursor, so a resumed job neither loses nor repeats one.
 */
import type { JobType } from '../../contract/migration.js';
import type { Db } from '../store/database.js';

export type JobState = 'Running' | 'Done';

export interface JobRow {
  reference_id: string;
  migration_id: string;
  broker_key: string;
  job_type: JobType;
  state: JobState;
  cursor: number;
  processed: number;
  staging_generation: number;
  components_completed: string;
  progress: string;
  result: string | null;
  created_on: string;
  updated_on: string;
}

export function createJobTables(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS migration_jobs (
      reference_id TEXT PRIMARY KEY,
      migration_id TEXT NOT NULL,
      broker_key TEXT NOT NULL,
      job_type TEXT NOT NULL,
      state TEXT NOT NULL,
      cursor INTEGER NOT NULL DEFAULT 0,
      processed INTEGER NOT NULL DEFAULT 0,
      staging_generation INTEGER NOT NULL DEFAULT 0,
      components_completed TEXT NOT NULL DEFAULT '[]',
      progress TEXT NOT NULL DEFAULT '{}',
      result TEXT,
      created_on TEXT NOT NULL,
      updated_on TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS migration_jobs_running ON migration_jobs (migration_id) WHERE state = 'Running';
    CREATE TABLE IF NOT EXISTS migration_job_errors (
      job_id TEXT NOT NULL,
      n INTEGER NOT NULL,
      error TEXT NOT NULL,
      PRIMARY KEY (job_id, n)) WITHOUT ROWID;
  `);
}

export class JobStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare(
        "INSERT INTO migration_jobs (reference_id, migration_id, broker_key, job_type, state, staging_generation, created_on, updated_on) VALUES (?, ?, ?, ?, 'Running', ?, ?, ?)",
      ),
      byId: db.prepare<[string], JobRow>('SELECT * FROM migration_jobs WHERE reference_id = ?'),
      running: db.prepare<[], JobRow>("SELECT * FROM migration_jobs WHERE state = 'Running' ORDER BY created_on"),
      runningOf: db.prepare<[string], JobRow>(
        "SELECT * FROM migration_jobs WHERE migration_id = ? AND state = 'Running' ORDER BY created_on",
      ),
      advance: db.prepare('UPDATE migration_jobs SET cursor = ?, processed = ?, progress = ?, updated_on = ? WHERE reference_id = ?'),
      componentsCompleted: db.prepare('UPDATE migration_jobs SET components_completed = ?, updated_on = ? WHERE reference_id = ?'),
      finish: db.prepare("UPDATE migration_jobs SET state = 'Done', result = ?, updated_on = ? WHERE reference_id = ?"),
      lastError: db.prepare<[string], { last: number | null }>('SELECT MAX(n) AS last FROM migration_job_errors WHERE job_id = ?'),
      insertError: db.prepare('INSERT INTO migration_job_errors (job_id, n, error) VALUES (?, ?, ?)'),
      countErrors: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM migration_job_errors WHERE job_id = ?'),
      errors: db.prepare<[string], { error: string }>('SELECT error FROM migration_job_errors WHERE job_id = ? ORDER BY n'),
    };
  }

  create(id: string, migrationId: string, brokerKey: string, type: JobType, generation: number): void {
    const now = new Date().toISOString();
    this.s.insert.run(id, migrationId, brokerKey, type, generation, now, now);
  }

  get(id: string): JobRow | undefined {
    return this.s.byId.get(id);
  }

  /** Every job still Running (to resume on start). */
  running(): JobRow[] {
    return this.s.running.all();
  }

  runningOf(migrationId: string): JobRow[] {
    return this.s.runningOf.all(migrationId);
  }

  /** Records progress: the last staged rowid done and the records processed so far. */
  advance(jobId: string, cursor: number, processed: number): void {
    this.s.advance.run(cursor, processed, '{}', new Date().toISOString(), jobId);
  }

  setComponentsCompleted(jobId: string, components: readonly string[]): void {
    this.s.componentsCompleted.run(JSON.stringify(components), new Date().toISOString(), jobId);
  }

  finish(jobId: string, result: object): void {
    this.s.finish.run(JSON.stringify(result), new Date().toISOString(), jobId);
  }

  /** Appends errors of a job (inside the caller's transaction). */
  addErrors(jobId: string, errors: readonly object[]): void {
    if (errors.length === 0) return;
    let n = this.s.lastError.get(jobId)?.last ?? 0;
    for (const e of errors) this.s.insertError.run(jobId, ++n, JSON.stringify(e));
  }

  countErrors(jobId: string): number {
    return this.s.countErrors.get(jobId)!.n;
  }

  errors<T>(jobId: string): T[] {
    return this.s.errors.all(jobId).map((r) => JSON.parse(r.error) as T);
  }
}
