/**
 * What a run is given from the outside: its options, the part of the platform client it uses,
 * and a logger.
 */
import type { ClientOptions } from '../../client/index.js';
import type { Component, StagingResult } from '../../contract/migration.js';
import type { BatchEvent, StagingSink } from '../uploader/index.js';
import type { RunProgress } from './progress.js';

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
  /**
   * Stage the records without their undecided fields (`--stage-undecided`). Default: a mapping
   * with an undecided field stops the run before anything is sent, naming each at its line.
   */
  stageUndecided?: boolean;
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
