/**
 * What the platform's jobs are doing while a command waits for them. A validation or import of
 * 200,000 records runs for tens of seconds; the job status only says which components are done,
 * so the records come from the migration's log stream, which names the records each chunk
 * imported, failed or refused (`entityReferenceIds` of `ImportedEntities` / `ValidatedStaging`
 * entries). On a terminal: one line on stderr, redrawn in place. Otherwise: a pino `job
 * progress` line on stderr every few seconds and one when the job is done, never one per record.
 * The log is only read here (from where this job began), never stored: the ledger's log
 * cursor stays where `logs` and `migrate` keep it.
 */
import type { Logger } from 'pino';
import type { StagecoachClient } from '../client/index.js';
import type { JobResult, LogEntry } from '../contract/migration.js';
import type { ChainEvent } from '../reconcile/chain.js';
import { progressLine } from './output.js';
import { clock, commandLogger, stepDisplay, type StepDisplay } from './progress.js';

export interface JobDisplayOptions {
  /** The client's migrations API (log stream, migration object). */
  migrations: Pick<StagecoachClient['migrations'], 'logs' | 'get'>;
  /** --json: no event lines (stdout carries the JSON); progress still goes to stderr. */
  json?: boolean;
  stream?: NodeJS.WriteStream;
  /** Where progress goes when not on a terminal (default: an `info` pino logger on stderr). */
  logger?: Logger;
  /** Seconds between two `job progress` log lines when not on a terminal (default 5). */
  logEverySeconds?: number;
}

export interface JobDisplay {
  onEvent(event: ChainEvent): void;
  /** Clears the line and stops reading the log; call before printing the result. */
  done(): void;
}

/** What one job has done so far, as its log tells. */
export interface JobTally {
  kind: 'validate-staging' | 'import';
  jobId: string;
  startedAt: number;
  componentsCompleted: string[];
  /** Import: records named by `ImportedEntities` INFO entries; failed: by its ERROR entries. */
  imported: number;
  failed: number;
  /** Validation: records named by `ValidatedStaging` ERROR entries. */
  refused: number;
  /** Import: staged records of the migration when the job started (its 100 %). */
  of?: number;
}

const n = (v: number) => v.toLocaleString('en-US');

/**
 * Whether two action names are one action written in another case or with separators: a
 * platform may write `IMPORTED_ENTITIES` or `imported-entities` (docs/contract-gaps.md).
 * @example sameAction('IMPORTED_ENTITIES', 'ImportedEntities') // true
 */
export const sameAction = (a: string, b: string): boolean => actionWords(a) === actionWords(b);
const actionWords = (action: string) => action.replace(/[^A-Za-z0-9]/g, '').toLowerCase();

/** Adds what one log entry says about records to the tally. */
export function countEntry(tally: JobTally, entry: LogEntry): void {
  const records = entry.entityReferenceIds.length;
  if (tally.kind === 'import' && sameAction(entry.action, 'ImportedEntities')) {
    if (entry.logLevel === 'ERROR') tally.failed += records;
    else if (entry.logLevel === 'INFO') tally.imported += records;
  } else if (tally.kind === 'validate-staging' && sameAction(entry.action, 'ValidatedStaging') && entry.logLevel === 'ERROR') {
    tally.refused += records;
  }
}

/**
 * `import job 1a2b…: 48,000 of 200,000 imported (24%) · 3 failed · 0:35 · components completed: none`
 * `validate-staging job 1a2b…: 12 records refused so far · 0:35 · components completed: none`
 */
export function formatJobProgress(t: JobTally, now = Date.now()): string {
  const parts =
    t.kind === 'import'
      ? [
          `${n(t.imported)}${t.of !== undefined ? ` of ${n(t.of)}` : ''} imported${t.of ? ` (${Math.floor((t.imported / t.of) * 100)}%)` : ''}`,
          `${n(t.failed)} failed`,
        ]
      : [`${n(t.refused)} record${t.refused === 1 ? '' : 's'} refused so far`];
  parts.push(clock(now - t.startedAt), `components completed: ${t.componentsCompleted.join(', ') || 'none'}`);
  return `${t.kind} job ${t.jobId.slice(0, 8)}…: ${parts.join(' · ')}`;
}

/**
 * @example
 *   const display = jobDisplay({ migrations: client.migrations, json: opts.json });
 *   try { await validateStep(client, ledger, id, { onEvent: display.onEvent }); } finally { display.done(); }
 */
export function jobDisplay(options: JobDisplayOptions): JobDisplay {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const line = progressLine(stream);
  const logger = options.logger ?? (tty ? undefined : commandLogger('jobs', 'info', false));
  const every = (options.logEverySeconds ?? 5) * 1000;
  // `next` undefined: from the start of the log (the platform's counter may start at 0 or 1).
  let current: { tally: JobTally; migrationId: string; next: number | undefined; ready: Promise<void>; ac: AbortController } | undefined;
  let reading = false; // one log read at a time
  let lastLog = 0;
  // On a terminal the line's clock moves every second, between polls (up to 5 s apart).
  let ticker: NodeJS.Timeout | undefined;
  // The deletes of a --drop-invalid round: seconds to minutes, one DELETE per record.
  let removing: StepDisplay | undefined;

  const say = (text: string) => {
    if (options.json) return;
    line.done();
    stream.write(`${text}\n`);
  };
  /** Reads the log from `job.next` to its current end; `count` false only skips to the end. */
  const readLog = async (job: NonNullable<typeof current>, count: boolean) => {
    // Not filtered by Actions: a platform that spells the actions otherwise (IMPORTED_ENTITIES)
    // would match none of ours. From where the job began nearly every entry is the job's own.
    for await (const entry of options.migrations.logs(
      job.migrationId,
      {},
      { ...(job.next !== undefined ? { continueFrom: job.next } : {}), signal: job.ac.signal },
    )) {
      if (entry.sequenceNumber !== undefined) job.next = Math.max(job.next ?? 0, entry.sequenceNumber + 1);
      if (count) countEntry(job.tally, entry);
    }
  };
  const show = (final: boolean) => {
    const job = current;
    if (!job) return;
    if (tty) return line.update(formatJobProgress(job.tally));
    const now = Date.now();
    if (!final && now - lastLog < every) return;
    lastLog = now;
    const t = job.tally;
    logger?.info(
      {
        job: t.kind,
        jobId: t.jobId,
        seconds: Math.round((now - t.startedAt) / 1000),
        componentsCompleted: t.componentsCompleted,
        ...(t.kind === 'import'
          ? { imported: t.imported, failed: t.failed, ...(t.of !== undefined ? { of: t.of } : {}) }
          : { refused: t.refused }),
      },
      final ? 'job done' : 'job progress',
    );
  };
  const begin = (kind: JobTally['kind'], jobId: string, migrationId: string) => {
    const ac = new AbortController();
    const job = {
      tally: { kind, jobId, startedAt: Date.now(), componentsCompleted: [], imported: 0, failed: 0, refused: 0 } as JobTally,
      migrationId,
      next: undefined as number | undefined,
      ac,
      ready: Promise.resolve(),
    };
    // What the log already holds belongs to earlier work (staging, earlier validations): skip it.
    // A job resumed by this command counts from here on; its result has the final numbers.
    job.ready = (async () => {
      await readLog(job, false);
      if (kind === 'import') job.tally.of = (await options.migrations.get(migrationId, { signal: ac.signal })).numberOfStagedEntities;
    })().catch(() => undefined);
    current = job;
    if (tty) ticker ??= setInterval(() => show(false), 1000).unref();
    lastLog = Date.now(); // the first line after `every`, not at once
  };
  const end = (result?: JobResult) => {
    const job = current;
    if (!job) return;
    // The result has the final numbers; the log, read a moment ago, may lag behind them.
    if (result?.jobType === 'Import') job.tally.imported = result.numberOfImportedEntities;
    if (result?.jobType === 'ValidateStaging') job.tally.refused = new Set(result.errors.map((e) => e.referenceId)).size;
    if (result) show(true);
    job.ac.abort();
    clearInterval(ticker);
    ticker = undefined;
    current = undefined;
    line.done();
  };

  return {
    onEvent(e) {
      if (e.type === 'started' || e.type === 'resumed') {
        say(e.type === 'started' ? `${e.kind} job ${e.jobId} started` : `${e.kind} job ${e.jobId} was running: polling it again`);
        if (e.kind !== 'counts') begin(e.kind, e.jobId, e.migrationId);
      } else if (e.type === 'reused') say(`${e.kind} job ${e.jobId} already finished: using its result`);
      else if (e.type === 'removing') {
        removing ??= stepDisplay({
          label: 'removing invalid records from staging',
          unit: 'records',
          stream,
          ...(logger ? { logger } : {}),
        });
        removing.update(e.done, e.of);
      } else if (e.type === 'removed') {
        removing?.done();
        removing = undefined;
        say(`removed ${e.count} invalid record(s) from staging`);
      } else if (e.type === 'settled') say(`settled ${e.removed} removal(s) from staging an interrupted run had started`);
      else if (e.type === 'poll') {
        const job = current;
        if (!job || job.tally.jobId !== e.jobId) return;
        const poll = e.poll as { componentsCompleted?: string[] };
        if (Array.isArray(poll.componentsCompleted)) job.tally.componentsCompleted = poll.componentsCompleted;
        // A poll that comes while a read runs is covered by it or the next one.
        if (reading) return;
        reading = true;
        void job.ready
          .then(() => readLog(job, true))
          .catch(() => undefined) // progress is best effort: the job's result is what counts
          .finally(() => {
            reading = false;
            if (current === job) show(false);
          });
      } else if (e.type === 'done' && current?.tally.jobId === e.jobId) end(e.result);
    },
    done() {
      end();
      removing?.done();
      line.done();
    },
  };
}
