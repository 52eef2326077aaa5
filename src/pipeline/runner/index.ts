/**
 * The runner: one run of a pipeline, end to end. It only chains the stages and adds up their
 * reports:
 *
 *   open the run (run-ends.ts) ─▶ attach and start (start-run.ts) ─▶ read and send
 *   (read-and-send.ts: readPipeline ─▶ ledger (rejected rows) ─▶ unchanged? skip ─▶ batcher ─▶
 *   uploader ─▶ ledger) ─▶ wind down ─▶ settle (run-ends.ts)
 *
 * It attaches to the tenant's current migration (or creates one for the pipeline's component),
 * records the run in the ledger, and returns a typed report. Whatever stops it — the end of the
 * input, Ctrl-C, a failing service, a crash — the ledger is consistent, and the next run sends
 * only what is not yet staged with its current content.
 */
import { resolve } from 'node:path';
import { createClient, type ClientLogger } from '../../client/index.js';
import { StagecoachError } from '../../contract/errors.js';
import { DEFAULT_LEDGER_FILE, openLedger, type Ledger } from '../../ledger/index.js';
import { checkConfiguration } from '../read/configuration.js';
import { checkCorrectionsColumns } from '../checks/corrections.js';
import { loadPipeline, type PipelineDefinition } from '../read-pipeline.js';
import type { PipelineClient, RunPipelineOptions } from './ports.js';
import { progressTracker } from './progress.js';
import { openSending, readAndSend, windDown, type Sending } from './read-and-send.js';
import { openRun, settleRun } from './run-ends.js';
import type { RunReport } from './run-report.js';
import { attachAndStart } from './start-run.js';

export { stagedFromWhatIsReadNow } from './run-ends.js';
export type { ResumeReport } from './resume.js';
export type { PipelineClient, RunLogger, RunPipelineOptions } from './ports.js';
export type { RunProgress } from './progress.js';
export type { RunOutcome, RunReport } from './run-report.js';

/**
 * Runs a pipeline against the tenant's current migration.
 * @example
 *   const report = await runPipeline({ pipelineFile: 'pipelines/crm.yaml', connection: { baseUrl, clientId, clientSecret, brokerKey, labelReferenceId } });
 *   console.log(`${report.staged} staged, ${report.skippedUnchanged} unchanged, ${report.rejected} rejected`);
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunReport> {
  const def = await loadPipeline(options.pipelineFile);
  // Nothing touches the platform (nor the ledger) before the configuration is known good.
  await checkConfiguration(def, options.signal, { stageUndecided: options.stageUndecided === true });
  if (options.corrections !== undefined)
    await checkCorrectionsColumns(typeof options.corrections === 'string' ? [options.corrections] : options.corrections, def);
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

/**
 * One run, as a chain: open it in the ledger, attach it to its migration and decide where reading
 * starts, read and send, wind down, settle. The first failure wins; whatever stopped the run
 * (the end of the input, `signal`, `stop`, a failure), the ledger ends consistent.
 */
async function runWith(
  def: PipelineDefinition,
  ledger: Ledger,
  client: PipelineClient | undefined,
  options: RunPipelineOptions,
  retries: { count: number } | undefined,
): Promise<RunReport> {
  const run = await openRun(def, ledger, options);
  const reading = stopReadingOn(options.signal, options.stop);
  let sending: Sending | undefined;
  const progress = progressTracker(def, options, run.report, () => sending?.send.uploader, run.started);
  let failure: unknown;
  try {
    const at = await attachAndStart(run, client);
    await progress.init();
    sending = await openSending(run, client, at, progress);
    await readAndSend(run, sending, at, progress, reading.signal);
  } catch (err) {
    failure = err;
  } finally {
    reading.release();
  }
  failure = await windDown(sending, run.report, failure);
  return settleRun(run, progress, failure, retries);
}

/** Reading stops on either signal: `signal` (which also aborts the uploads in flight) or `stop`. */
function stopReadingOn(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal; release: () => void } {
  const readAbort = new AbortController();
  const stopReading = () => readAbort.abort();
  for (const s of signals) s?.addEventListener('abort', stopReading, { once: true });
  return {
    signal: readAbort.signal,
    release: () => {
      for (const s of signals) s?.removeEventListener('abort', stopReading);
    },
  };
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
