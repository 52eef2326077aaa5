/**
 * `migrate`: one pipeline through the whole chain — stage (the runner) → validate → import →
 * counts → report — resumable at every step: the runner sends only what is not staged yet,
 * and the jobs driver polls a job the ledger says is running instead of starting another.
 */
import { resolve } from 'node:path';
import { createClient, type ClientOptions, type StagecoachClient } from '../client/index.js';
import { StagecoachError } from '../contract/errors.js';
import { openLedger } from '../ledger/index.js';
import { loadPipeline } from '../pipeline/read-pipeline.js';
import { runPipeline, stagedFromWhatIsReadNow, type RunLogger, type RunProgress, type RunReport } from '../pipeline/runner/index.js';
import { DEFAULT_LEDGER_FILE } from '../ledger/index.js';
import { runChain, type ChainEvent, type ChainOutcome } from './chain.js';
import { reconcile, REPORTS_DIR, type ReconcileResult } from './reconcile.js';
import type { Tolerance } from './report-model.js';
import { join } from 'node:path';
import type { ValuesMode } from '../privacy/index.js';
import { verify, type AcceptRule, type VerificationReport } from './verify/index.js';

export interface MigrateOptions {
  /** The pipeline file, e.g. pipelines/crm.yaml. */
  pipelineFile: string;
  /** A client to use (left open), or the connection to build one from (closed at the end). */
  client?: StagecoachClient;
  connection?: ClientOptions;
  /** The ledger file (default .stagecoach/ledger.db). */
  ledgerFile?: string;
  /** Stage only the rows of these corrections files, or folders of them (docs/reconciliation.md). */
  corrections?: string | readonly string[];
  /** Accept a source file that was cut off or holds no rows (`--allow-truncated`); default: exit 1, named in the report. */
  allowTruncated?: boolean;
  /** Stage the records without their undecided fields (`--stage-undecided`); default: stop before sending, naming them. */
  stageUndecided?: boolean;
  /** Delete records refused by validation from staging, validate again and import the rest. */
  dropInvalid?: boolean;
  /** `3` or `0.5%`: unaccounted records the report accepts (default 0). */
  tolerance?: string | number | Tolerance;
  /** Folder of the report (default ./.stagecoach/reports/run-<id>). */
  outDir?: string;
  /** Longest wait for one job in ms (default 30 minutes). */
  jobDeadlineMs?: number;
  signal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  onEvent?: (event: ChainEvent) => void;
  logger?: RunLogger;
  /** How the report shows values of personal fields (default: the pipeline's setting, else masked). */
  values?: ValuesMode;
  /** Verify what the platform holds once the import is done (default true; docs/reconciliation.md). */
  verify?: boolean;
  /** Known platform normalisations verification accepts (`--accept`, `--accept-file`). */
  accept?: readonly AcceptRule[];
}

export interface MigrateResult {
  run: RunReport;
  /** Undefined when staging did not complete (nothing validated). */
  chain?: ChainOutcome;
  reconcile: ReconcileResult;
  /** What verification found (undefined: skipped, or the import is not done). */
  verification?: VerificationReport;
  /** 0 when the records were imported, the report balances, verification passed (when it ran) and no source file was cut off (or it was accepted), else 1. */
  exitCode: 0 | 1;
}

/**
 * Runs a pipeline through stage, validate, import and counts, and writes the report.
 * @example
 *   const result = await migrate({ pipelineFile: 'pipelines/crm.yaml', connection, tolerance: '0.5%' });
 *   console.log(result.reconcile.files.html, result.reconcile.report.balanced);
 */
export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
  const ledgerFile = resolve(options.ledgerFile ?? DEFAULT_LEDGER_FILE);
  let own: StagecoachClient | undefined;
  const client = options.client ?? (options.connection ? (own = createClient(options.connection)) : undefined);
  if (!client) throw new StagecoachError('CONFIG_INVALID', 'migrate needs a client or a connection to reach the platform');
  try {
    const run =
      (options.corrections ? undefined : await importedRun(ledgerFile, options.pipelineFile, options.logger)) ??
      (await runPipeline({
        pipelineFile: options.pipelineFile,
        client,
        ledgerFile,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.corrections ? { corrections: options.corrections } : {}),
        ...(options.allowTruncated ? { allowTruncated: true } : {}),
        ...(options.stageUndecided ? { stageUndecided: true } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      }));
    if (run.status === 'interrupted')
      throw new StagecoachError('ABORTED', `Interrupted while staging run ${run.runId}; run migrate again to continue`);
    if (run.status === 'failed')
      throw new StagecoachError(
        run.error?.code ?? 'INTERNAL_ERROR',
        `Staging failed in run ${run.runId}: ${run.error?.message ?? 'unknown error'}`,
      );
    const migrationId = run.migrationId!;
    const ledger = openLedger(ledgerFile);
    try {
      let chain: ChainOutcome | undefined;
      if (run.complete) {
        chain = await runChain(client, ledger, migrationId, {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.jobDeadlineMs ? { jobDeadlineMs: options.jobDeadlineMs } : {}),
          ...(options.dropInvalid ? { dropInvalid: true } : {}),
          ...(options.onEvent ? { onEvent: options.onEvent } : {}),
        });
      }
      // Once imported, prove the data landed field by field (verify/index.ts), unless asked not to.
      const verification =
        chain?.status === 'imported' && options.verify !== false
          ? await verify({
              ledger,
              migrationId,
              client,
              ...(options.accept ? { accept: options.accept } : {}),
              ...(options.values ? { values: options.values } : {}),
              ...(options.signal ? { signal: options.signal } : {}),
            })
          : undefined;
      // The platform's log is not copied into the ledger: the jobs' results carry every
      // per-record outcome the report needs, and `stagecoach logs` reads the log from the platform.
      const result = await reconcile({
        ledger,
        migrationId,
        client,
        ...(options.tolerance !== undefined ? { tolerance: options.tolerance } : {}),
        outDir: options.outDir ?? join(REPORTS_DIR, `run-${run.runId}`),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.values ? { values: options.values } : {}),
        ...(verification ? { verification } : {}),
      });
      // A source file cut off or without rows fails the migration unless accepted (the report names it too).
      const readFailed = (run.readFailures?.length ?? 0) > 0;
      const exitCode = chain?.status === 'imported' && result.report.balanced && !readFailed && verification?.passed !== false ? 0 : 1;
      return { run, ...(chain ? { chain } : {}), reconcile: result, ...(verification ? { verification } : {}), exitCode };
    } finally {
      ledger.close();
    }
  } finally {
    await own?.close();
  }
}

/**
 * The staging run of this pipeline's migration when that migration's import was already started
 * (the ledger holds its import job, running or done, and when done the export and pipeline are as
 * that run read them): staging is closed then, and a migrate that was killed after it (during the
 * import, the counts or the report) must resume that migration's chain, not stage every record
 * again into a new migration.
 */
async function importedRun(ledgerFile: string, pipelineFile: string, logger: RunLogger | undefined): Promise<RunReport | undefined> {
  const def = await loadPipeline(pipelineFile);
  const ledger = openLedger(ledgerFile);
  try {
    const runs = ledger.runs(def.name);
    const migrationId = runs.filter((r) => r.migrationId).at(-1)?.migrationId;
    if (!migrationId) return undefined;
    const job = ledger.jobs.latest(migrationId, 'import');
    if (!job || job.state === 'failed') return undefined;
    const staged = runs.filter((r) => r.migrationId === migrationId && r.status === 'completed' && r.report).at(-1);
    if (!staged) return undefined;
    // An import that is done, of an export or pipeline changed since: the next migrate reads them
    // again and stages what changed (into a new migration), instead of resuming a finished chain.
    const completed = runs.filter((r) => r.migrationId === migrationId && r.status === 'completed');
    if (job.state === 'done' && !(await stagedFromWhatIsReadNow(def, ledger, completed))) return undefined;
    logger?.info(
      { migration: migrationId, run: staged.id, job: job.jobId },
      `the import of migration ${migrationId} was started by an earlier migrate: resuming its chain instead of staging again`,
    );
    return staged.report as RunReport;
  } finally {
    ledger.close();
  }
}
