/**
 * client.migrations (migrations, staging uploads, staged-record retrieval, the log stream) and
 * client.jobs (validate-staging, import, counts, polling to the end).
 */
import { z } from 'zod';
import { StagecoachError } from '../contract/errors.js';
import { MEDIA, streamMediaType, type StreamFormat } from '../contract/media.js';
import {
  jobResultSchema,
  logEntrySchema,
  migrationSchema,
  runningJobSchema,
  type Component,
  type JobResult,
  type LogEntry,
  type LogQuery,
  type Migration,
  type StagingResult,
  type StagingResultVisitor,
} from '../contract/migration.js';
import { ClientError } from './errors.js';
import { sleep } from './retry.js';
import { resumableStream, type StreamOptions } from './streams.js';
import { parseWith, readJobId, readPage, readStagingResults } from './tolerant.js';
import { seg, type Transport } from './transport.js';

type Signal = { signal?: AbortSignal };

// Tolerant: the platform may send statuses and activities the spec does not list.
const tolerantMigrationSchema = migrationSchema
  .extend({
    stagingStatus: z.string(),
    importStatus: z.string(),
    activity: z.string().optional(),
    components: z
      .array(
        z.looseObject({
          component: z.string(),
          stagingStatus: z.string(),
          importStatus: z.string(),
          numberOfStagedEntities: z.number(),
          numberOfImportedEntities: z.number(),
        }),
      )
      .default([]),
  })
  .loose();
export type MigrationRecord = Omit<Migration, 'activity'> & { activity?: Migration['activity'] };

const stagedPageSchema = z.looseObject({
  items: z.array(z.record(z.string(), z.unknown())),
  total: z.number(),
  offset: z.number(),
  limit: z.number(),
});
export type StagedPage = z.infer<typeof stagedPageSchema>;

export interface StageOptions {
  /** Format of `body` (default json-seq). */
  format?: StreamFormat;
  signal?: AbortSignal;
  /**
   * Each result as it is read, in order, instead of all of them returned (the call then returns
   * an empty array); a retried upload hands them over again from index 0. For a caller that only
   * checks them: 2,000 results collected while the answer is awaited are held by promises made
   * before the wait, which V8 has moved to its old generation by then, so they outlive the young
   * generation and pile up there until a full collection.
   */
  onResult?: StagingResultVisitor;
}

export function migrationsApi(transport: Transport) {
  const mig = (id: string) => `/migration-assistance/migrations/${seg(id)}`;
  const staging = (id: string) => `/counterparty-management/migrations/${seg(id)}/staging/counterparties`;
  const asMigration = (body: unknown) => parseWith(tolerantMigrationSchema, body, 'migration') as MigrationRecord;
  return {
    /**
     * Registers a migration (POST: retried only when it surely did not reach the service; on an
     * unclear failure, `current()` tells whether it was created).
     * @example const m = await client.migrations.create(['Counterparties']);
     */
    async create(components: readonly Component[], opts: Signal = {}): Promise<MigrationRecord> {
      const res = await transport.json<unknown>({
        method: 'POST',
        path: '/migration-assistance/migrations',
        area: 'migration-assistance',
        body: JSON.stringify({ components }),
        contentType: 'application/json',
        signal: opts.signal,
      });
      return asMigration(res.body);
    },
    async get(migrationId: string, opts: Signal = {}): Promise<MigrationRecord> {
      return asMigration(
        (await transport.json<unknown>({ method: 'GET', path: mig(migrationId), area: 'migration-assistance', signal: opts.signal })).body,
      );
    },
    /**
     * The tenant's active migration, or undefined when there is none (404).
     * @example const active = await client.migrations.current();
     */
    async current(opts: Signal = {}): Promise<MigrationRecord | undefined> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: '/migration-assistance/migrations/current',
        area: 'migration-assistance',
        allowStatus: [404],
        signal: opts.signal,
      });
      if (res.status === 404 || res.status === 204 || res.body === undefined || res.body === null) return undefined;
      return asMigration(res.body);
    },
    /** Cancels the migration (final). Returns the migration when the service sends it back. */
    async cancel(migrationId: string, opts: Signal = {}): Promise<MigrationRecord | undefined> {
      const res = await transport.json<unknown>({
        method: 'PUT',
        path: `${mig(migrationId)}/cancel`,
        area: 'migration-assistance',
        contentType: 'application/json',
        signal: opts.signal,
      });
      return res.body && typeof res.body === 'object' ? asMigration(res.body) : undefined;
    },
    /**
     * Uploads one complete batch of staged counterparties (json-seq or JSON Lines bytes) and
     * returns one result per record. Staging replaces records by referenceId, so the PUT is
     * retried safely with the same body.
     * @example const results = await client.migrations.stageCounterparties(m.referenceId, batchBytes, { format: 'json-seq' });
     */
    async stageCounterparties(migrationId: string, body: Uint8Array | string, opts: StageOptions = {}): Promise<StagingResult[]> {
      const format = opts.format ?? 'json-seq';
      const mediaType = streamMediaType(format);
      // Results are read inside the attempt: a connection reset mid-answer re-sends the batch.
      return transport.read(
        {
          method: 'PUT',
          path: staging(migrationId),
          area: 'counterparty-management',
          accept: [mediaType, MEDIA.json],
          body: typeof body === 'string' ? Buffer.from(body) : body,
          contentType: mediaType,
          signal: opts.signal,
        },
        async (res) => {
          try {
            const ct = res.headers['content-type'];
            return await readStagingResults(res.body, Array.isArray(ct) ? ct[0] : ct, opts.onResult);
          } catch (err) {
            if (err instanceof StagecoachError && !(err instanceof ClientError)) {
              throw new ClientError('HTTP_ERROR', err.message, {
                method: 'PUT',
                path: staging(migrationId),
                status: res.status,
                cause: err,
              });
            }
            throw err;
          } finally {
            res.body.destroy();
          }
        },
      );
    },
    /** A page of staged records (offset paging). */
    async listStaged(migrationId: string, opts: { offset?: number; limit?: number } & Signal = {}): Promise<StagedPage> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: staging(migrationId),
        query: { offset: opts.offset, limit: opts.limit },
        area: 'counterparty-management',
        signal: opts.signal,
      });
      return parseWith(stagedPageSchema, readPage(res.body, opts), 'staged page');
    },
    /** One staged record, or undefined when it is not staged. */
    async getStaged(migrationId: string, referenceId: string, opts: Signal = {}): Promise<Record<string, unknown> | undefined> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `${staging(migrationId)}/${seg(referenceId)}`,
        area: 'counterparty-management',
        allowStatus: [404],
        signal: opts.signal,
      });
      if (res.status === 404) return undefined;
      return parseWith(z.record(z.string(), z.unknown()), res.body, 'staged record');
    },
    /**
     * Deletes one staged record. A 404 is an error (NOT_FOUND), except after a retry, when an
     * earlier attempt did the deletion.
     */
    async deleteStaged(migrationId: string, referenceId: string, opts: Signal = {}): Promise<void> {
      try {
        await transport.text({
          method: 'DELETE',
          path: `${staging(migrationId)}/${seg(referenceId)}`,
          area: 'counterparty-management',
          signal: opts.signal,
        });
      } catch (err) {
        if (err instanceof ClientError && err.status === 404 && err.attempts > 1) return;
        throw err;
      }
    },
    /**
     * The migration's log entries, resumable like every stream (filters as in the spec).
     * @example for await (const e of client.migrations.logs(id, { LogLevels: ['ERROR'] })) console.log(e.message);
     */
    logs(
      migrationId: string,
      query: Omit<LogQuery, 'continue-from'> = {},
      opts: StreamOptions = {},
    ): AsyncGenerator<LogEntry, void, undefined> {
      return resumableStream(transport, {
        ...opts,
        path: `${mig(migrationId)}/logs/stream`,
        area: 'migration-assistance',
        query: { ...query },
        parse: (value, counter) => {
          const entry = parseWith(logEntrySchema, value, `log entry ${counter ?? ''}`.trim());
          if (entry.sequenceNumber === undefined && counter !== undefined) entry.sequenceNumber = counter;
          return entry;
        },
      });
    },
  };
}

export type JobState = { state: 'running'; referenceId: string; componentsCompleted: string[] } | { state: 'done'; result: JobResult };

export interface WaitOptions {
  signal?: AbortSignal;
  /** Give up after this long (JOB_DEADLINE_EXCEEDED); default 30 minutes. */
  deadlineMs?: number;
  /** Called after every poll that found the job still running. */
  onPoll?: (state: Extract<JobState, { state: 'running' }>, polls: number) => void;
  /** First poll interval (default 200 ms), growing ×1.5 to `maxIntervalMs` (default 5 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
}

export function jobsApi(transport: Transport) {
  const start = async (migrationId: string, job: 'validate-staging' | 'import' | 'counts', opts: Signal) => {
    // Starting an import twice is not harmless (two imports): retried only when surely unsent.
    // A validation or counts job only reads staging, so one started twice costs work, not data
    // (and a service that dedupes, as the embedded one does, answers the running job's id):
    // those starts are retried like any idempotent request.
    const res = await transport.text({
      method: 'PUT',
      path: `/migration-assistance/migrations/${seg(migrationId)}/jobs/${job}`,
      area: 'migration-assistance',
      contentType: 'application/json',
      retry: job === 'import' ? 'unsent-only' : 'idempotent',
      signal: opts.signal,
    });
    try {
      return readJobId(res.text);
    } catch (err) {
      throw new ClientError('HTTP_ERROR', (err as Error).message, {
        method: 'PUT',
        path: `/migration-assistance/migrations/${seg(migrationId)}/jobs/${job}`,
        status: res.status,
      });
    }
  };
  const api = {
    /** Starts a validation of the staged data; returns the job id. */
    validateStaging: (migrationId: string, opts: Signal = {}) => start(migrationId, 'validate-staging', opts),
    /** Starts the import (only once staging is Completed); returns the job id. */
    import: (migrationId: string, opts: Signal = {}) => start(migrationId, 'import', opts),
    /** Starts a counts job (staged against imported; only once import is Completed). */
    counts: (migrationId: string, opts: Signal = {}) => start(migrationId, 'counts', opts),
    /**
     * The job's state: running (202) or done with its result (200).
     * @example const s = await client.jobs.get(jobId); if (s.state === 'done') console.log(s.result.jobType);
     */
    async get(jobId: string, opts: Signal = {}): Promise<JobState> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `/migration-assistance/jobs/${seg(jobId)}`,
        area: 'migration-assistance',
        signal: opts.signal,
      });
      if (res.status === 202) {
        // Any 202 body means running: the spec's shape is read, another (`{"status": "Running",
        // "progress": …}`) or none at all leaves the job's own id and no completed components.
        const body = res.body && typeof res.body === 'object' && !Array.isArray(res.body) ? res.body : {};
        const running = parseWith(
          runningJobSchema.extend({ referenceId: z.string().default(jobId), componentsCompleted: z.array(z.string()).default([]) }),
          body,
          'running job',
        );
        return { state: 'running', referenceId: running.referenceId, componentsCompleted: running.componentsCompleted };
      }
      return { state: 'done', result: parseWith(jobResultSchema, res.body, 'job result') };
    },
    /**
     * Polls until the job is done (backoff 200 ms ×1.5 up to 5 s) or the deadline passes.
     * @example const result = await client.jobs.waitFor(await client.jobs.import(id), { deadlineMs: 600_000 });
     */
    async waitFor(jobId: string, opts: WaitOptions = {}): Promise<JobResult> {
      const deadline = Date.now() + (opts.deadlineMs ?? 30 * 60_000);
      let interval = opts.intervalMs ?? 200;
      const max = opts.maxIntervalMs ?? 5_000;
      for (let polls = 1; ; polls++) {
        const state = await api.get(jobId, { signal: opts.signal });
        if (state.state === 'done') return state.result;
        opts.onPoll?.(state, polls);
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new ClientError(
            'JOB_DEADLINE_EXCEEDED',
            `job ${jobId} was still running after ${opts.deadlineMs ?? 30 * 60_000} ms (components completed: ${state.componentsCompleted.join(', ') || 'none'}); poll it again later with jobs.waitFor`,
            {
              method: 'GET',
              path: `/migration-assistance/jobs/${jobId}`,
              attempts: polls,
            },
          );
        }
        await sleep(Math.min(interval, left), opts.signal).catch((reason) => {
          throw new ClientError('ABORTED', `waiting for job ${jobId} was aborted`, {
            method: 'GET',
            path: `/migration-assistance/jobs/${jobId}`,
            cause: reason,
          });
        });
        interval = Math.min(max, interval * 1.5);
      }
    },
  };
  return api;
}
