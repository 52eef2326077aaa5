/**
 * The runner: one run of a pipeline, end to end. It only chains the stages and adds up their
 * reports:
 *
 *   readPipeline ─▶ ledger (rejected rows) ─▶ unchanged? skip ─▶ batcher ─▶ uploader ─▶ ledger
 *
 * It attaches to the tenant's current migration (or creates one for the pipeline's component),
 * records the run in the ledger, and returns a typed report. Whatever stops it — the end of the
 * input, Ctrl-C, a failing service, a crash — the ledger is consistent, and the next run sends
 * only what is not yet staged with its current content.
 */
import { hash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createClient, type ClientLogger, type ClientOptions } from '../../client/index.js';
import { StagecoachError, type ErrorCode } from '../../contract/errors.js';
import type { Component, StagingResult } from '../../contract/migration.js';
import {
  DEFAULT_LEDGER_FILE,
  openLedger,
  openLedgerWriter,
  recordTallies,
  type Ledger,
  type LedgerRejectInput,
  type LedgerWriter,
  type RecordState,
  noRecords,
} from '../../ledger/index.js';
import { Batcher, prepareRecord, type Batch, type BatchItem } from '../batcher/index.js';
import { type CorrectionsSummary, loadPipeline, readPipelineBatches, type PipelineDefinition } from '../read-pipeline.js';
import { listSourceFiles, tallyDisagreement, type SourceTally } from '../source/index.js';
import type { FrontRow } from '../types.js';
import { clientSink, Uploader, type BatchEvent, type StagingSink } from '../uploader/index.js';
import { rejectInput, uploadLedger } from './run-ledger.js';
import { Resume, type ResumeReport } from './resume.js';
import { SkipUnchanged } from './skip-unchanged.js';

/**
 * Threads a run keeps busy beside reading: this one (batches, uploads, results) and the ledger
 * writer. `concurrency.workers: auto` gives parallel readers only the cores left after them: on
 * 2 cores with the embedded service on the same machine, readers measured no faster and 100+ MB
 * larger (docs/performance.md).
 */
const RUN_BUSY_THREADS = 1;

export type { ResumeReport } from './resume.js';

/** The part of the client a run uses (the shared client satisfies it). */
export interface PipelineClient {
  migrations: {
    current(opts?: { signal?: AbortSignal }): Promise<{ referenceId: string; components?: Array<{ component: string }> } | undefined>;
    create(components: readonly Component[], opts?: { signal?: AbortSignal }): Promise<{ referenceId: string }>;
    stageCounterparties(
      migrationId: string,
      body: Uint8Array | string,
      opts: { format?: 'json-seq' | 'jsonl'; signal?: AbortSignal },
    ): Promise<StagingResult[]>;
  };
  close?(): Promise<void>;
}

/** Minimal structured logger (pino fits). */
export interface RunLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface RunPipelineOptions {
  /** The pipeline file, e.g. pipelines/crm.yaml. */
  pipelineFile: string;
  /** A client to use (left open), or … */
  client?: PipelineClient;
  /** … the connection to build one from (closed at the end; its retries are counted). */
  connection?: ClientOptions;
  /** The ledger file (default .stagecoach/ledger.db in the working folder). */
  ledgerFile?: string;
  /** Stops now: reading stops and uploads in flight are aborted (their records stay in_flight). */
  signal?: AbortSignal;
  /** Stops gently: reading stops, uploads in flight finish and their results are recorded. */
  stop?: AbortSignal;
  /** Send only the rows of these corrections files, or folders of them (docs/reconciliation.md). */
  corrections?: string | readonly string[];
  /**
   * Accept a source file that was cut off or holds no rows (`--allow-truncated`): its rows are
   * staged and it is listed, but it does not make the run fail. Default: such a file is a read
   * failure and the run does not count as complete for the exit code.
   */
  allowTruncated?: boolean;
  /** Called at most every `progressEveryMs` while the run goes, and once at the end. */
  onProgress?: (progress: RunProgress) => void;
  progressEveryMs?: number;
  /** Every batch's moments (in flight, answered, done, failed). */
  onBatch?: (event: BatchEvent) => void;
  logger?: RunLogger;
  /** Where the ledger's record writes run: a worker thread (default when built) or this thread. */
  ledgerThread?: 'auto' | 'main' | 'worker';
  /**
   * Replaces the staging upload (tests, dry runs against something else). Default: the client's
   * `migrations.stageCounterparties` for the run's migration.
   */
  sink?: StagingSink;
}

export interface RunProgress {
  rowsRead: number;
  mapped: number;
  rejected: number;
  skippedUnchanged: number;
  sent: number;
  staged: number;
  failed: number;
  batchesInFlight: number;
  elapsedMs: number;
  /** Rows read per second so far. */
  rowsPerSecond: number;
  /** Share of the source bytes read (0..1), when the source sizes are known. */
  fraction: number | undefined;
  /** Estimated time left, from the share of source bytes read. */
  etaMs: number | undefined;
  done: boolean;
}

export type RunOutcome = 'completed' | 'interrupted' | 'failed';

/** What a run did: the report `stagecoach run` prints (`--json` prints exactly this). */
export interface RunReport {
  runId: number;
  pipeline: string;
  pipelineFile: string;
  component: string;
  ledgerFile: string;
  migrationId: string | undefined;
  /** Whether the migration was created by this run. */
  migrationCreated: boolean;
  status: RunOutcome;
  /** A corrections run: the files it read, and the duplicates that came back unedited (left refused, not sent). */
  corrections?: CorrectionsSummary;
  /**
   * True when nothing is left that running again would send: every row read is staged (now or
   * before, unchanged), rejected before upload, or refused by staging — each with its reasons in
   * the ledger.
   */
  complete: boolean;
  rowsRead: number;
  mapped: number;
  rejected: number;
  /** Rejected rows by the code of their first reason. */
  rejectedByReason: Record<string, number>;
  /** Mapped records already staged in this migration with the same content: not sent. */
  skippedUnchanged: number;
  sent: number;
  staged: number;
  /** Records refused by staging (or left without a result), by their first error code. */
  failed: number;
  failedByCode: Record<string, number>;
  /** Records of uploads that failed or were aborted: `in_flight` in the ledger, sent again next run. */
  unconfirmed: number;
  /** Records mapped but not sent because the run stopped: `mapped` in the ledger. */
  unsent: number;
  batches: number;
  batchesFailed: number;
  /** Requests the client retried (only counted when the runner built the client). */
  retries: number | undefined;
  bytesSent: number;
  durationMs: number;
  /** Rows read per second over the whole run. */
  recordsPerSecond: number;
  /** Records of this pipeline per state in the ledger after the run. */
  ledger: Record<RecordState, number>;
  /** Runs of this pipeline found dead (crashed) when this one started. */
  recoveredRuns: number[];
  /** Where reading started: after the rows an unfinished run settled (`resumed`), or everywhere (`full`), and why. */
  resume: ResumeReport;
  /** Each file's two-way count (source/tally.ts), for the formats that keep one; also in the ledger. */
  files: SourceTally[];
  /** Every file whose counts disagree, was cut off or held no rows, in words. */
  disagreements: string[];
  /** The files cut off or without rows, unless accepted (allowTruncated): the run's exit is then not 0. */
  readFailures: string[];
  error?: { code: ErrorCode; message: string };
}

/**
 * Runs a pipeline against the tenant's current migration.
 * @example
 *   const report = await runPipeline({ pipelineFile: 'pipelines/crm.yaml', connection: { baseUrl, clientId, clientSecret, brokerKey, labelReferenceId } });
 *   console.log(`${report.staged} staged, ${report.skippedUnchanged} unchanged, ${report.rejected} rejected`);
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunReport> {
  const def = await loadPipeline(options.pipelineFile);
  const ledgerFile = resolve(options.ledgerFile ?? DEFAULT_LEDGER_FILE);
  const retries = { count: 0 };
  let ownClient: PipelineClient | undefined;
  const client =
    options.client ??
    (options.connection
      ? (ownClient = createClient({ ...options.connection, logger: countingLogger(retries, options.connection.logger) }))
      : undefined);
  if (!client && !options.sink)
    throw new StagecoachError('CONFIG_INVALID', 'runPipeline needs a client or a connection to reach the platform');
  const ledger = openLedger(ledgerFile);
  try {
    return await runWith(def, ledger, client, options, ownClient ? retries : undefined);
  } finally {
    ledger.close();
    await ownClient?.close?.();
  }
}

async function runWith(
  def: PipelineDefinition,
  ledger: Ledger,
  client: PipelineClient | undefined,
  options: RunPipelineOptions,
  retries: { count: number } | undefined,
): Promise<RunReport> {
  const log = options.logger;
  const started = performance.now();
  const definitionHash = await pipelineHash(def);
  const resume = await Resume.look(def, ledger, definitionHash, { corrections: options.corrections !== undefined });
  const { run, scope, crashed } = ledger.startRun({
    pipeline: def.name,
    component: def.component,
    pipelineFile: def.file,
    pipelineHash: definitionHash,
    // A run that may resume keeps the keyless rejects of the rows it will not read again.
    readsEverything: options.corrections === undefined && !resume.candidate,
  });
  for (const c of crashed)
    log?.warn(
      { run: c.id, pid: c.pid, startedAt: c.startedAt },
      `run ${c.id} of ${def.name} ended without finishing (crashed); its in-flight records are sent again`,
    );

  const report: RunReport = {
    runId: run.id,
    pipeline: def.name,
    pipelineFile: def.file,
    component: def.component,
    ledgerFile: ledger.file,
    migrationId: undefined,
    migrationCreated: false,
    status: 'completed',
    complete: false,
    rowsRead: 0,
    mapped: 0,
    rejected: 0,
    rejectedByReason: {},
    skippedUnchanged: 0,
    sent: 0,
    staged: 0,
    failed: 0,
    failedByCode: {},
    unconfirmed: 0,
    unsent: 0,
    batches: 0,
    batchesFailed: 0,
    retries: retries?.count,
    bytesSent: 0,
    durationMs: 0,
    recordsPerSecond: 0,
    ledger: noRecords(), // counted when the run ends
    recoveredRuns: crashed.map((c) => c.id),
    resume: { mode: 'full', reason: 'the run stopped before it read anything' },
    files: [],
    disagreements: [],
    readFailures: [],
  };
  const tallies: SourceTally[] = [];
  const correctionsSummary: CorrectionsSummary = { files: [], unchangedDuplicates: 0 };

  const readAbort = new AbortController();
  const stopReading = () => readAbort.abort();
  options.signal?.addEventListener('abort', stopReading, { once: true });
  options.stop?.addEventListener('abort', stopReading, { once: true });
  let uploader: Uploader | undefined;
  let batcher: Batcher | undefined;
  let migrationNo: number | null = null;
  let skip: SkipUnchanged | undefined;
  const rejects: LedgerRejectInput[] = [];
  let writer: LedgerWriter | undefined;
  const flushRejects = () => {
    // Not awaited: the writer applies writes in order and close() reports a failure.
    void writer?.recordRejects(run.id, scope, rejects.splice(0));
  };
  const progress = progressTracker(def, options, report, () => uploader, started);
  let failure: unknown;

  try {
    // The migration: the tenant's current one, or a new one for this pipeline's component.
    const migration = await attachMigration(def, client, options.signal, log);
    report.migrationId = migration.referenceId;
    report.migrationCreated = migration.created;
    ledger.setRunMigration(run.id, migration.referenceId);
    migrationNo = ledger.migrationNo(migration.referenceId);
    const { report: resumed, start } = await resume
      .decide(ledger, migration.referenceId)
      .catch((err: unknown): { report: ResumeReport; start?: undefined } => ({
        report: { mode: 'full', reason: `cannot resume: ${err instanceof Error ? err.message : String(err)}` },
      }));
    if (resume.candidate && !start) ledger.dropKeylessRejects(scope);
    ledger.setRunSources(run.id, resume.record(start));
    report.resume = resumed;
    log?.info(
      { resume: resumed },
      resumed.mode === 'resumed'
        ? `resuming at ${resumed.file}:${resumed.line}: ${resumed.reason}`
        : `reading everything: ${resumed.reason}`,
    );
    await progress.init();
    writer = openLedgerWriter(ledger, { thread: options.ledgerThread ?? 'auto' });

    const format = 'json-seq' as const;
    const sink = options.sink ?? clientSink(client!.migrations, migration.referenceId);
    uploader = new Uploader({
      sink,
      ledger: uploadLedger(writer, run.id, scope, migrationNo),
      inFlight: def.concurrency.inFlight,
      format,
      ...(options.signal ? { signal: options.signal } : {}),
      onBatch: (e) => {
        if (e.type === 'failed' && !e.aborted)
          log?.warn(
            { batch: e.batchId, seq: e.seq, error: e.error },
            'upload failed; its records stay in_flight and are sent again next run',
          );
        options.onBatch?.(e);
        progress.tick();
      },
    });
    batcher = new Batcher({ maxRecords: def.batching.records, maxBytes: def.batching.bytes, format });
    const submit = async (batch: Batch | undefined) => {
      if (!batch) return;
      // Rejects read before this batch go to the ledger no later than the batch itself.
      if (rejects.length > 0) flushRejects();
      await uploader!.submit(batch);
    };

    skip = new SkipUnchanged(
      ledger,
      scope,
      migrationNo,
      start ? { file: start.file, line: ledger.lastLineOf(scope, start.file) } : undefined,
    );
    const toBatches = async (items: readonly BatchItem[]) => {
      for (const item of items) await submit(batcher!.add(item));
    };

    // In batches, and an await only where a batch closed: a promise and a microtask turn per
    // row cost about 0.3 µs each (read-pipeline.ts).
    const batchesOfRows = readPipelineBatches(def, {
      signal: readAbort.signal,
      tallies,
      ...(options.corrections ? { corrections: options.corrections, correctionsSummary } : {}),
      ...(start ? { resume: start } : {}),
      parallel: { workers: def.concurrency.workers, busyThreads: RUN_BUSY_THREADS, encode: format },
    });
    reading: for await (const rows of batchesOfRows) {
      for (const row of rows) {
        report.rowsRead++;
        if (row.kind === 'rejected') {
          report.rejected++;
          const code = row.reasons[0]?.code ?? 'UNKNOWN';
          report.rejectedByReason[code] = (report.rejectedByReason[code] ?? 0) + 1;
          rejects.push(rejectInput(row));
          if (rejects.length >= def.batching.records) flushRejects();
        } else {
          report.mapped++;
          // Inline, with an await only where a batch closed (the hot path: see above).
          for (const item of skip.take(prepareRecord(mappedInput(row), format))) {
            const closed = batcher.add(item);
            if (closed) await submit(closed);
          }
          report.skippedUnchanged = skip.report.skipped;
        }
        progress.row(row);
        if (uploader.failure || readAbort.signal.aborted) break reading;
      }
    }
    if (!uploader.failure && !readAbort.signal.aborted) {
      await toBatches(skip.flush());
      await submit(batcher.flush());
    }
  } catch (err) {
    failure = err;
  } finally {
    options.signal?.removeEventListener('abort', stopReading);
    options.stop?.removeEventListener('abort', stopReading);
  }

  // Wind down: whatever stopped the run, the ledger ends consistent.
  try {
    if (rejects.length > 0) flushRejects();
    const unsent = batcher ? batcher.takePending() : { records: [], bytes: 0 };
    // Records still waiting for their lookup: those not settled stay `mapped`, sent next run.
    for (const item of skip?.flush() ?? []) {
      unsent.records.push(item.record);
      unsent.bytes += item.bytes;
    }
    report.skippedUnchanged = skip?.report.skipped ?? 0;
    if (unsent.records.length > 0 && writer) {
      void writer.recordUnsent(run.id, scope, migrationNo, unsent.records, unsent.bytes);
      report.unsent += unsent.records.length;
    }
    if (uploader) {
      const up = await uploader.drain();
      Object.assign(report, {
        sent: up.recordsSent,
        staged: up.staged,
        failed: up.failed,
        failedByCode: up.failedByCode,
        unconfirmed: up.unconfirmed,
        batches: up.batches,
        batchesFailed: up.batchesFailed,
        bytesSent: up.bytesSent,
      });
      failure ??= uploader.failure;
    }
  } catch (err) {
    failure ??= err;
  }
  try {
    await writer?.close(); // every write of the run is in the ledger after this
  } catch (err) {
    failure ??= err;
  }

  const interrupted = options.signal?.aborted === true || options.stop?.aborted === true;
  const failureIsAbort = failure instanceof StagecoachError && failure.code === 'ABORTED';
  report.status = failure !== undefined && !(interrupted && failureIsAbort) ? 'failed' : interrupted ? 'interrupted' : 'completed';
  if (report.status === 'failed') report.error = errorOf(failure);
  report.retries = retries?.count;
  report.durationMs = Math.round(performance.now() - started);
  report.recordsPerSecond = report.durationMs > 0 ? Math.round((report.rowsRead * 1000) / report.durationMs) : 0;
  report.ledger = ledger.counts(def.name, def.component);
  report.complete =
    report.status === 'completed' &&
    report.unconfirmed === 0 &&
    report.unsent === 0 &&
    (report.failedByCode.NO_STAGING_RESULT ?? 0) === 0 &&
    report.ledger.in_flight === 0 &&
    report.ledger.mapped === 0;
  if (options.corrections) report.corrections = correctionsSummary;
  if (report.status === 'completed' && tallies.length > 0) {
    // Only a whole read gives final counts; the tallies go into the ledger for the report.
    recordTallies(ledger.db, run.id, tallies, { accepted: options.allowTruncated === true });
    report.files = tallies;
    report.disagreements = tallies.flatMap((t) => tallyDisagreement(t) ?? []);
    if (!options.allowTruncated) report.readFailures = tallies.flatMap((t) => (t.truncated ? [`${t.file}: ${t.truncated}`] : []));
  }
  ledger.finishRun(run.id, report.status, report);
  progress.finish();
  log?.info(
    {
      run: report.runId,
      status: report.status,
      staged: report.staged,
      skipped: report.skippedUnchanged,
      rejected: report.rejected,
      failed: report.failed,
      durationMs: report.durationMs,
    },
    `run ${report.runId} ${report.status}`,
  );
  return report;
}

/** The tenant's current migration, or a new one for the pipeline's component. */
async function attachMigration(
  def: PipelineDefinition,
  client: PipelineClient | undefined,
  signal: AbortSignal | undefined,
  log: RunLogger | undefined,
): Promise<{ referenceId: string; created: boolean }> {
  if (!client) throw new StagecoachError('CONFIG_INVALID', 'no client to find the migration with');
  const sig = signal ? { signal } : {};
  if (def.target.migration === 'current') {
    const current = await client.migrations.current(sig);
    if (current) {
      const components = current.components?.map((c) => c.component) ?? [];
      if (components.length > 0 && !components.includes(def.component)) {
        log?.warn(
          { migration: current.referenceId, components },
          `the current migration ${current.referenceId} was registered for ${components.join(', ')}, not ${def.component}; staging decides whether it takes these records`,
        );
      }
      log?.info({ migration: current.referenceId }, `attached to the current migration ${current.referenceId}`);
      return { referenceId: current.referenceId, created: false };
    }
  }
  const created = await client.migrations.create([def.component], sig);
  log?.info({ migration: created.referenceId }, `created migration ${created.referenceId} for ${def.component}`);
  return { referenceId: created.referenceId, created: true };
}

function mappedInput(row: Extract<FrontRow, { kind: 'mapped' }>) {
  const p = row.row.provenance;
  return {
    legacyKey: row.legacyKey,
    referenceId: row.referenceId,
    record: row.record,
    encoded: row.encoded,
    provenance: { source: row.row.source, file: p.file, line: p.line, byteOffset: p.byteOffset, rowHash: p.hash },
  };
}

/** Hash of the pipeline file and its mapping files (and scripts), to tell runs of changed definitions apart. */
async function pipelineHash(def: PipelineDefinition): Promise<string> {
  const files = [def.path, ...new Set(def.sources.map((s) => s.mappingFile.path))];
  const parts: string[] = [];
  for (const f of files) parts.push(f, hash('sha256', await readFile(f), 'hex'));
  return hash('sha256', parts.join('\n'), 'hex').slice(0, 32);
}

/** Counts the client's retries from its debug log (the client reports each one there). */
function countingLogger(retries: { count: number }, inner: ClientLogger | undefined): ClientLogger {
  return {
    debug(obj, msg) {
      if (msg === 'retrying request') retries.count++;
      inner?.debug(obj, msg);
    },
    info: (obj, msg) => inner?.info(obj, msg),
    warn: (obj, msg) => inner?.warn(obj, msg),
  };
}

function errorOf(err: unknown): { code: ErrorCode; message: string } {
  if (err instanceof StagecoachError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: /SQLITE|database/i.test(message) ? 'LEDGER_ERROR' : 'INTERNAL_ERROR', message };
}

/** Progress: counts, speed and an ETA from the share of source bytes read. */
function progressTracker(
  def: PipelineDefinition,
  options: RunPipelineOptions,
  report: RunReport,
  uploader: () => Uploader | undefined,
  started: number,
) {
  const every = options.progressEveryMs ?? 250;
  const fileStart = new Map<string, number>();
  let totalBytes = 0;
  let position = 0;
  let last = 0;
  const snapshot = (done: boolean): RunProgress => {
    const elapsedMs = performance.now() - started;
    const fraction = totalBytes > 0 && !options.corrections ? Math.min(1, position / totalBytes) : undefined;
    const up = uploader();
    return {
      rowsRead: report.rowsRead,
      mapped: report.mapped,
      rejected: report.rejected,
      skippedUnchanged: report.skippedUnchanged,
      sent: up?.report.recordsSent ?? 0,
      staged: up?.report.staged ?? 0,
      failed: up?.report.failed ?? 0,
      batchesInFlight: up?.inFlight ?? 0,
      elapsedMs: Math.round(elapsedMs),
      rowsPerSecond: elapsedMs > 0 ? Math.round((report.rowsRead * 1000) / elapsedMs) : 0,
      fraction: done ? 1 : fraction,
      etaMs: done ? 0 : fraction !== undefined && fraction > 0.001 ? Math.round((elapsedMs * (1 - fraction)) / fraction) : undefined,
      done,
    };
  };
  const emit = (force: boolean) => {
    if (!options.onProgress) return;
    const now = performance.now();
    if (!force && now - last < every) return;
    last = now;
    options.onProgress(snapshot(false));
  };
  let rowsSinceCheck = 0;
  return {
    /** Learns the source files' sizes for the ETA (not fatal when it cannot). */
    async init() {
      if (!options.onProgress) return;
      try {
        for (const s of def.sources) {
          for (const f of await listSourceFiles(def.dir, s)) {
            if (fileStart.has(f.file)) continue;
            fileStart.set(f.file, totalBytes);
            totalBytes += (await stat(f.path)).size;
          }
        }
      } catch {
        totalBytes = 0;
      }
    },
    row(row: FrontRow) {
      if (!options.onProgress) return;
      const start = fileStart.get(row.row.provenance.file);
      if (start !== undefined) position = start + row.row.provenance.byteOffset;
      // Reading the clock on every row costs more than the row's own bookkeeping.
      if (++rowsSinceCheck >= 256) {
        rowsSinceCheck = 0;
        emit(false);
      }
    },
    tick() {
      emit(false);
    },
    finish() {
      options.onProgress?.(snapshot(true));
    },
  };
}
