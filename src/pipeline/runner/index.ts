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
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createClient, type ClientLogger, type ClientOptions } from '../../client/index.js';
import { StagecoachError } from '../../contract/errors.js';
import {
  DEFAULT_LEDGER_FILE,
  originKey,
  openLedger,
  openLedgerWriter,
  type Ledger,
  type LedgerWriter,
  type Scope,
} from '../../ledger/index.js';
import { checkConfiguration } from '../checks/configuration.js';
import { type MappingSnapshot, takeMappingSnapshot } from '../definition/mapping-snapshot.js';
import { type CorrectionsSummary, loadPipeline, readPipelineBatches, type PipelineDefinition } from '../read-pipeline.js';
import type { SourceTally } from '../source/index.js';
import type { FrontRow } from '../types.js';
import { clientSink, type BatchEvent, type StagingSink } from '../uploader/index.js';
import { attachMigration } from './attach-migration.js';
import type { PipelineClient, RunLogger } from './ports.js';
import { progressTracker, type RunProgress } from './progress.js';
import { Resume, type ResumeReport, type ResumeStart } from './resume.js';
import { addSendReport, countRow, newRunReport, settleRunReport, type RunReport } from './run-report.js';
import { SEND_FORMAT, SendStage, TOO_LARGE } from './send.js';
import { SkipUnchanged } from './skip-unchanged.js';

/**
 * Threads a run keeps busy beside reading: this one (batches, uploads, results) and the ledger
 * writer. `concurrency.workers: auto` gives parallel readers only the cores left after them: on
 * 2 cores with the embedded service on the same machine, readers measured no faster and 100+ MB
 * larger (docs/performance.md).
 */
const RUN_BUSY_THREADS = 1;

export type { ResumeReport } from './resume.js';
export type { PipelineClient, RunLogger } from './ports.js';
export type { RunProgress } from './progress.js';
export type { RunOutcome, RunReport } from './run-report.js';

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

/**
 * Runs a pipeline against the tenant's current migration.
 * @example
 *   const report = await runPipeline({ pipelineFile: 'pipelines/crm.yaml', connection: { baseUrl, clientId, clientSecret, brokerKey, labelReferenceId } });
 *   console.log(`${report.staged} staged, ${report.skippedUnchanged} unchanged, ${report.rejected} rejected`);
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunReport> {
  const def = await loadPipeline(options.pipelineFile);
  // Nothing touches the platform (nor the ledger) before the configuration is known good.
  await checkConfiguration(def, options.signal);
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
  const mappings = await takeMappingSnapshot(def);
  const definitionHash = await pipelineHash(def, mappings);
  const resume = await Resume.look(def, ledger, definitionHash, { corrections: options.corrections !== undefined });
  const { run, scope, crashed } = ledger.startRun({
    pipeline: def.name,
    component: def.component,
    pipelineFile: def.file,
    pipelineHash: definitionHash,
    // The keyless rejects stay until the run is attached to its migration and knows it reads
    // everything (startReading): a run refused by the platform before reading reports none afresh.
    readsEverything: false,
  });
  ledger.runMappings.record(run.id, mappings);
  for (const c of crashed)
    log?.warn(
      { run: c.id, pid: c.pid, startedAt: c.startedAt },
      `run ${c.id} of ${def.name} ended without finishing (crashed); its in-flight records are sent again`,
    );
  const report = newRunReport({
    runId: run.id,
    pipeline: def.name,
    pipelineFile: def.file,
    component: def.component,
    ledgerFile: ledger.file,
    recoveredRuns: crashed.map((c) => c.id),
  });
  const tallies: SourceTally[] = [];
  const correctionsSummary: CorrectionsSummary = { files: [], unchangedDuplicates: 0 };

  const readAbort = new AbortController();
  const stopReading = () => readAbort.abort();
  options.signal?.addEventListener('abort', stopReading, { once: true });
  options.stop?.addEventListener('abort', stopReading, { once: true });
  let writer: LedgerWriter | undefined;
  let send: SendStage | undefined;
  const progress = progressTracker(def, options, report, () => send?.uploader, started);
  let failure: unknown;

  try {
    const migration = await attachMigration(def, client, options.signal, log);
    report.migrationId = migration.referenceId;
    report.migrationCreated = migration.created;
    ledger.setRunMigration(run.id, migration.referenceId);
    const migrationNo = ledger.migrationNo(migration.referenceId);
    const start = await startReading(resume, ledger, migration.referenceId, scope, run.id, report, log, options.corrections === undefined);
    // The export rows corrections replaced (read after startReading dropped the keyless rejects): a
    // run of the export leaves them alone while they are unchanged (corrections.ts).
    const corrected = options.corrections ? undefined : ledger.correctedOrigins(scope);
    const keptCorrected = (row: FrontRow) =>
      corrected !== undefined && corrected.size > 0 && corrected.has(originKey(row.row.provenance.file, row.row.provenance.hash));
    await progress.init();
    writer = openLedgerWriter(ledger, { thread: options.ledgerThread ?? 'auto' });
    send = new SendStage({
      def,
      writer,
      runId: run.id,
      scope,
      migrationNo,
      sink: options.sink ?? clientSink(client!.migrations, migration.referenceId),
      skip: new SkipUnchanged(
        ledger,
        scope,
        migrationNo,
        start ? { file: start.file, line: ledger.lastLineOf(scope, start.file) } : undefined,
      ),
      signal: options.signal,
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

    // In batches, and an await only where a batch closed: a promise and a microtask turn per
    // row cost about 0.3 µs each (read-pipeline.ts).
    const batchesOfRows = readPipelineBatches(def, {
      signal: readAbort.signal,
      tallies,
      ...(options.corrections ? { corrections: options.corrections, correctionsSummary } : {}),
      ...(start ? { resume: start } : {}),
      parallel: { workers: def.concurrency.workers, busyThreads: RUN_BUSY_THREADS, encode: SEND_FORMAT },
    });
    reading: for await (const rows of batchesOfRows) {
      for (const row of rows) {
        if (options.corrections) send.claim(row);
        if (keptCorrected(row)) countRow(report, row, 'kept-corrected');
        else if (row.kind === 'rejected') {
          countRow(report, row, 'rejected');
          send.reject(row);
        } else {
          const sent = send.mapped(row);
          // counted before the await: the progress shown while a batch waits includes this row
          countRow(report, row, sent === TOO_LARGE ? TOO_LARGE : 'mapped');
          if (sent !== TOO_LARGE && sent) await sent;
        }
        progress.row(row);
        if (send.failure || readAbort.signal.aborted) break reading;
      }
      report.skippedUnchanged = send.skipped;
    }
    if (!send.failure && !readAbort.signal.aborted) {
      await send.finish();
      // A file cut or rewritten while it was read: its rows are not the file's, and the run must
      // not end as if they were (a corrections run does not read the sources).
      const changed = options.corrections === undefined ? await resume.changedFiles() : [];
      if (changed.length > 0)
        throw new StagecoachError(
          'SOURCE_READ_FAILED',
          `${changed.map((c) => c.message).join('; ')}. The rows read from ${changed.length === 1 ? 'it' : 'them'} are staged but not accounted for: run again once the export is complete and no longer written to`,
          { file: changed[0]!.file },
        );
    }
  } catch (err) {
    failure = err;
  } finally {
    options.signal?.removeEventListener('abort', stopReading);
    options.stop?.removeEventListener('abort', stopReading);
  }

  // Wind down: whatever stopped the run, the ledger ends consistent.
  try {
    if (send) {
      addSendReport(report, await send.windDown());
      report.skippedUnchanged = send.skipped;
      failure ??= send.failure;
    }
  } catch (err) {
    failure ??= err;
  }
  try {
    await writer?.close(); // every write of the run is in the ledger after this
  } catch (err) {
    failure ??= err;
  }

  report.retries = retries?.count;
  if (options.corrections) report.corrections = correctionsSummary;
  settleRunReport(report, {
    ledger,
    failure,
    interrupted: options.signal?.aborted === true || options.stop?.aborted === true,
    durationMs: performance.now() - started,
    tallies,
    allowTruncated: options.allowTruncated === true,
  });
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

/**
 * Where this run starts reading (the resume stage's decision), recorded in the ledger and the
 * report. A run that reads every row (not a resumed one, not one over corrections files) clears
 * the keyless rejects, which it reports afresh as it reads; a resumed run keeps those of the rows
 * it does not read again.
 */
async function startReading(
  resume: Resume,
  ledger: Ledger,
  migrationId: string,
  scope: Scope,
  runId: number,
  report: RunReport,
  log: RunLogger | undefined,
  readsAllSources: boolean,
): Promise<ResumeStart | undefined> {
  const { report: resumed, start } = await resume
    .decide(ledger, migrationId)
    .catch((err: unknown): { report: ResumeReport; start?: undefined } => ({
      report: { mode: 'full', reason: `cannot resume: ${err instanceof Error ? err.message : String(err)}` },
    }));
  if (readsAllSources && !start) ledger.dropKeylessRejects(scope);
  ledger.setRunSources(runId, resume.record(start));
  report.resume = resumed;
  log?.info(
    { resume: resumed },
    resumed.mode === 'resumed' ? `resuming at ${resumed.file}:${resumed.line}: ${resumed.reason}` : `reading everything: ${resumed.reason}`,
  );
  return start;
}

/** Hash of the pipeline file, its mapping files and their scripts, to tell runs of changed definitions apart. */
async function pipelineHash(def: PipelineDefinition, mappings: MappingSnapshot): Promise<string> {
  const parts = [def.path, hash('sha256', await readFile(def.path), 'hex')];
  for (const [name, text] of Object.entries(mappings.files).sort(([a], [b]) => a.localeCompare(b)))
    parts.push(name, hash('sha256', text, 'hex'));
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
