/**
 * The jobs table: validate-staging, import and counts jobs per migration, so a crash or Ctrl-C
 * while a job runs resumes polling the same job instead of starting a second one. Shaped as the
 * `JobStore` of src/reconcile/jobs-driver.ts.
 */
import type { Db } from './schema.js';
import { once } from './rows.js';
import type { JobKind, JobRow, JobState } from './types.js';

interface JobDbRow {
  migration_id: string;
  kind: JobKind;
  job_id: string;
  state: JobState;
  started_at: string;
  finished_at: string | null;
  result: string | null;
}

export class LedgerJobs {
  private readonly latestOf = once(() =>
    this.db.prepare<[string, string], JobDbRow>('SELECT * FROM jobs WHERE migration_id = ? AND kind = ? ORDER BY id DESC LIMIT 1'),
  );
  private readonly insert = once(() =>
    this.db.prepare(
      `INSERT INTO jobs (migration_id, kind, job_id, state, started_at) VALUES (?, ?, ?, 'running', ?) ON CONFLICT (job_id) DO NOTHING`,
    ),
  );
  private readonly finish = once(() => this.db.prepare('UPDATE jobs SET state = ?, finished_at = ?, result = ? WHERE job_id = ?'));
  private readonly ofMigration = once(() => this.db.prepare<[string], JobDbRow>('SELECT * FROM jobs WHERE migration_id = ? ORDER BY id'));
  private readonly importDone = once(() =>
    this.db
      .prepare<[string], string | null>("SELECT max(finished_at) FROM jobs WHERE migration_id = ? AND kind = 'import' AND state = 'done'")
      .pluck(),
  );

  constructor(private readonly db: Db) {}

  /** The newest job of that kind for the migration, whatever its state. */
  latest<R = unknown>(migrationId: string, kind: JobKind): JobRow<R> | undefined {
    const row = this.latestOf().get(migrationId, kind);
    return row && toJob<R>(row);
  }

  /** Records a job the service has just started; durable when this returns. */
  started(migrationId: string, kind: JobKind, jobId: string): void {
    this.insert().run(migrationId, kind, jobId, new Date().toISOString());
  }

  /** Ends a job with its result. */
  finished(jobId: string, state: Exclude<JobState, 'running'>, result?: unknown): void {
    this.finish().run(state, new Date().toISOString(), result === undefined ? null : JSON.stringify(result), jobId);
  }

  /** Every job of the migration, oldest first. */
  list<R = unknown>(migrationId: string): JobRow<R>[] {
    return this.ofMigration()
      .all(migrationId)
      .map((r) => toJob<R>(r));
  }

  /** When the migration's import job finished (the migration is complete), if it did. */
  importFinishedAt(migrationId: string): string | undefined {
    return this.importDone().get(migrationId) ?? undefined;
  }
}

function toJob<R>(r: JobDbRow): JobRow<R> {
  const job: JobRow<R> = { migrationId: r.migration_id, kind: r.kind, jobId: r.job_id, state: r.state, startedAt: r.started_at };
  if (r.result !== null) job.result = JSON.parse(r.result) as R;
  if (r.finished_at !== null) job.finishedAt = r.finished_at;
  return job;
}
