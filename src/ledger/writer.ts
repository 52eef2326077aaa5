/**
 * The ledger's record writes during a run, on a worker thread. A run's client is bound by its
 * single JavaScript thread (docs/dependencies.md, "Where the time of a run goes"), and the ledger's per-batch
 * transactions are about a third of that thread's work; on a worker they run beside the
 * reading and mapping instead of between them. The worker keeps its own connection to the same
 * WAL file and applies the writes strictly in the order they were asked for; each promise
 * resolves once its transaction has committed, so "in the ledger before the PUT" and "acked
 * only once the ledger has the result" hold exactly as with in-thread writes.
 *
 * Where the compiled worker is not there (tests run the TypeScript sources), or when asked, the
 * same interface writes on the calling thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StagecoachError } from '../contract/errors.js';
import type { Ledger } from './ledger.js';
import type { Scope } from './scopes.js';
import { PackedRecords, type RecordList } from './packed-records.js';
import type { LedgerRejectInput, RecordOutcome } from './types.js';
import type { CorrectionClaim } from './corrections.js';

/** The record writes of a run; every call is one transaction, applied in call order. */
export interface LedgerWriter {
  /** `main` or `worker`: where the writes happen. */
  readonly thread: 'main' | 'worker';
  beginBatch(runId: number, scope: Scope, migrationNo: number, records: RecordList, bytes: number): Promise<number>;
  recordUnsent(runId: number, scope: Scope, migrationNo: number | null, records: RecordList, bytes: number): Promise<number | undefined>;
  /** Outcomes of the records that were not staged; every other record of the batch is staged. */
  finishBatch(scope: Scope, batchId: number, refused: readonly RecordOutcome[]): Promise<void>;
  failBatch(batchId: number, error: string): Promise<void>;
  recordRejects(runId: number, scope: Scope, rejects: readonly LedgerRejectInput[]): Promise<void>;
  /** Ties rows read from a corrections file to the records they correct (ask before their writes). */
  claimCorrections(scope: Scope, claims: readonly CorrectionClaim[]): Promise<void>;
  /** Waits for every write asked for, then stops the worker. Rejects if any write failed. */
  close(): Promise<void>;
}

/** Messages to the worker: a method of the ledger and its arguments. */
export type WriterOp = 'beginBatch' | 'recordUnsent' | 'finishBatch' | 'failBatch' | 'recordRejects' | 'claimCorrections';
export interface WriterRequest {
  id: number;
  op: WriterOp;
  args: unknown[];
}
export type WriterReply = { id: number; result?: unknown } | { id: number; error: { message: string; code?: string } };

const WORKER_URL = new URL('./writer-worker.js', import.meta.url);

/**
 * A writer for the run: on a worker thread when the compiled worker exists (and `thread` is not
 * `main`), else on this thread.
 * @example
 *   const writer = openLedgerWriter(ledger);
 *   const batchId = await writer.beginBatch(run.id, scope, migrationNo, batch.records, batch.bytes);
 *   await writer.close();
 */
export function openLedgerWriter(ledger: Ledger, options: { thread?: 'main' | 'worker' | 'auto' } = {}): LedgerWriter {
  const want = options.thread ?? 'auto';
  const workerAvailable = existsSync(fileURLToPath(WORKER_URL));
  if (want === 'worker' && !workerAvailable)
    throw new StagecoachError('LEDGER_ERROR', `the ledger worker ${fileURLToPath(WORKER_URL)} is missing: build the project first`);
  if (want === 'main' || !workerAvailable) return mainThreadWriter(ledger);
  return workerWriter(ledger.file);
}

function mainThreadWriter(ledger: Ledger): LedgerWriter {
  let failed: unknown;
  const guard = async <T>(fn: () => T): Promise<T> => {
    try {
      return fn();
    } catch (err) {
      failed ??= err;
      throw err;
    }
  };
  return {
    thread: 'main',
    beginBatch: (runId, scope, migrationNo, records, bytes) => guard(() => ledger.beginBatch(runId, scope, migrationNo, records, bytes)),
    recordUnsent: (runId, scope, migrationNo, records, bytes) =>
      guard(() => ledger.recordUnsent(runId, scope, migrationNo, records, bytes)),
    finishBatch: (scope, batchId, refused) => guard(() => ledger.finishBatch(scope, batchId, refused)),
    failBatch: (batchId, error) => guard(() => ledger.failBatch(batchId, error)),
    recordRejects: (runId, scope, rejects) => guard(() => ledger.recordRejects(runId, scope, rejects)),
    claimCorrections: (scope, claims) => guard(() => ledger.claimCorrections(scope, claims)),
    close: async () => {
      if (failed) throw failed;
    },
  };
}

/**
 * The worker's young generation, in MB. The worker holds little (a connection and the batch it is
 * writing), but V8's default lets its young generation grow to 16 MB and more, which counts in
 * the run's peak RSS: with 4 MB the worker's heap peaked at 11 MB instead of 23 MB on 100,000
 * persons, and the worker, idle three quarters of the time, hardly notices the extra scavenges.
 */
const WORKER_YOUNG_GENERATION_MB = 4;

function workerWriter(file: string): LedgerWriter {
  const worker = new Worker(WORKER_URL, { workerData: { file }, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 1;
  let failed: unknown;
  let exited = false;
  const failAll = (err: unknown) => {
    failed ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('message', (reply: WriterReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if ('error' in reply) {
      const err = new StagecoachError('LEDGER_ERROR', `ledger ${file}: ${reply.error.message}`, { file });
      failed ??= err;
      p.reject(err);
    } else p.resolve(reply.result);
  });
  worker.on('error', (err) =>
    failAll(new StagecoachError('LEDGER_ERROR', `the ledger worker failed: ${err.message}`, { file }, { cause: err })),
  );
  worker.on('exit', (code) => {
    exited = true;
    if (pending.size > 0)
      failAll(
        new StagecoachError('LEDGER_ERROR', `the ledger worker stopped (exit code ${code}) with ${pending.size} write(s) unanswered`, {
          file,
        }),
      );
  });
  const call = <T>(op: WriterOp, ...args: unknown[]): Promise<T> => {
    if (exited) return Promise.reject(new StagecoachError('LEDGER_ERROR', 'the ledger worker is closed', { file }));
    const id = nextId++;
    const promise = new Promise<T>((resolve, reject) => pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
    // Packed records travel as their bytes (a class does not survive the copy); see writer-worker.ts.
    const wireArgs = args.map((a) => (a instanceof PackedRecords ? a.toWire() : a));
    worker.postMessage({ id, op, args: wireArgs } satisfies WriterRequest);
    return promise;
  };
  // Unanswered rejections surface through close(); callers that await get them directly.
  const quiet = <T>(p: Promise<T>) => {
    p.catch(() => undefined);
    return p;
  };
  return {
    thread: 'worker',
    beginBatch: (runId, scope, migrationNo, records, bytes) => quiet(call<number>('beginBatch', runId, scope, migrationNo, records, bytes)),
    recordUnsent: (runId, scope, migrationNo, records, bytes) =>
      quiet(call<number | undefined>('recordUnsent', runId, scope, migrationNo, records, bytes)),
    finishBatch: (scope, batchId, refused) => quiet(call<void>('finishBatch', scope, batchId, refused)),
    failBatch: (batchId, error) => quiet(call<void>('failBatch', batchId, error)),
    recordRejects: (runId, scope, rejects) => quiet(call<void>('recordRejects', runId, scope, rejects)),
    claimCorrections: (scope, claims) => quiet(call<void>('claimCorrections', scope, claims)),
    async close() {
      if (!exited) {
        // Messages are handled in order: once this one is answered, every earlier write is in.
        const done = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage({ id: 0, op: 'close', args: [] });
        await done;
      }
      if (failed) throw failed;
    },
  };
}
