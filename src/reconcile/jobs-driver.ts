/**
 * Drives one migration job (validate-staging, import, counts) to its result so that a crash or
 * Ctrl-C never starts a second job: the job id is written to the ledger the moment the service
 * returns it, before the first poll, and a later call finds that row and polls the same job.
 * Polling (backoff, deadline, abort) is the client's `jobs.waitFor`; this module only decides
 * whether to start or to resume, and records what happened.
 */
import type { JobResult } from '../contract/migration.js';
import { StagecoachError } from '../contract/errors.js';

export type JobKind = 'validate-staging' | 'import' | 'counts';
export const JOB_KINDS: readonly JobKind[] = ['validate-staging', 'import', 'counts'];

/** The part of the typed client this driver uses (`client.jobs`). */
export interface JobsApi {
  validateStaging(migrationId: string): Promise<string>;
  import(migrationId: string): Promise<string>;
  counts(migrationId: string): Promise<string>;
  waitFor(jobId: string, options: { signal?: AbortSignal; deadlineMs?: number; onPoll?: (poll: unknown) => void }): Promise<JobResult>;
}

export type JobState = 'running' | 'done' | 'failed';

export interface JobRow {
  migrationId: string;
  kind: JobKind;
  jobId: string;
  state: JobState;
  result?: JobResult;
  startedAt: string;
  finishedAt?: string;
}

/** Where job rows are kept: the ledger's `jobs` table (src/ledger/jobs.ts). */
export interface JobStore {
  /** The newest job of that kind for the migration, whatever its state. */
  latest(migrationId: string, kind: JobKind): JobRow | undefined;
  /** Records a job the service has just started; must be durable when it returns. */
  started(migrationId: string, kind: JobKind, jobId: string): void;
  finished(jobId: string, state: 'done' | 'failed', result?: JobResult): void;
  /** Every job row of the migration, oldest first. */
  list(migrationId: string): JobRow[];
}

export interface DriveJobOptions {
  signal?: AbortSignal;
  /** Give up waiting after this long (the job keeps running on the service; a later call resumes it). */
  deadlineMs?: number;
  /**
   * When the newest job of this kind is already done: `reuse` returns its result (counts after
   * import, a finished import); `again` starts a new job (validation after re-staging).
   */
  whenDone?: 'reuse' | 'again';
  onEvent?: (event: JobEvent) => void;
}

export type JobEvent =
  | { type: 'started'; kind: JobKind; jobId: string; migrationId: string }
  | { type: 'resumed'; kind: JobKind; jobId: string; migrationId: string }
  | { type: 'reused'; kind: JobKind; jobId: string }
  | { type: 'poll'; kind: JobKind; jobId: string; poll: unknown }
  | { type: 'done'; kind: JobKind; jobId: string; result: JobResult };

const START: Record<JobKind, (api: JobsApi, migrationId: string) => Promise<string>> = {
  'validate-staging': (api, id) => api.validateStaging(id),
  import: (api, id) => api.import(id),
  counts: (api, id) => api.counts(id),
};

/**
 * Starts or resumes the job of `kind` for the migration and waits for its result.
 * @example
 *   const { result } = await driveJob(client.jobs, store, migrationId, 'validate-staging', { signal, whenDone: 'again' });
 *   if (result.jobType === 'ValidateStaging' && !result.isValid) …
 */
export async function driveJob(
  api: JobsApi,
  store: JobStore,
  migrationId: string,
  kind: JobKind,
  options: DriveJobOptions = {},
): Promise<{ jobId: string; result: JobResult; resumed: boolean }> {
  const emit = options.onEvent ?? (() => undefined);
  const last = store.latest(migrationId, kind);
  let jobId: string;
  let resumed = false;
  if (last && last.state === 'running') {
    jobId = last.jobId;
    resumed = true;
    emit({ type: 'resumed', kind, jobId, migrationId });
  } else if (last && last.state === 'done' && last.result && (options.whenDone ?? 'reuse') === 'reuse') {
    emit({ type: 'reused', kind, jobId: last.jobId });
    return { jobId: last.jobId, result: last.result, resumed: true };
  } else {
    if (options.signal?.aborted) throw new StagecoachError('ABORTED', `Interrupted before starting the ${kind} job`);
    jobId = await START[kind](api, migrationId);
    // durable before the first poll: a crash from here on resumes this job
    store.started(migrationId, kind, jobId);
    emit({ type: 'started', kind, jobId, migrationId });
  }
  let result: JobResult;
  try {
    result = await api.waitFor(jobId, {
      signal: options.signal,
      deadlineMs: options.deadlineMs,
      onPoll: (poll) => emit({ type: 'poll', kind, jobId, poll }),
    });
  } catch (err) {
    // A job the service no longer knows (data folder wiped, other platform) cannot be resumed;
    // mark it failed so the next call starts afresh instead of polling it forever.
    if (err instanceof StagecoachError && err.code === 'NOT_FOUND') store.finished(jobId, 'failed');
    throw err;
  }
  store.finished(jobId, 'done', result);
  emit({ type: 'done', kind, jobId, result });
  return { jobId, result, resumed };
}
