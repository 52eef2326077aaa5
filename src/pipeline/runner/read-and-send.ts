/**
 * The middle of a run: the rows read (readPipelineBatches), each counted (run-report.ts
 * `countRow`) and handed to the send stage with its ledger writer. One way in (`openSending`),
 * one loop (`readAndSend`), one way out (`windDown`), which leaves the ledger consistent whatever
 * stopped the run.
 */
import { StagecoachError } from '../../contract/errors.js';
import { openLedgerWriter, type LedgerWriter } from '../../ledger/index.js';
import { readPipelineBatches } from '../read-pipeline.js';
import { clientSink } from '../uploader/index.js';
import type { PipelineClient } from './ports.js';
import type { ProgressTracker } from './progress.js';
import type { OpenRun } from './run-ends.js';
import { addSendReport, countRow, type RunReport } from './run-report.js';
import { SEND_FORMAT, SendStage, TOO_LARGE } from './send.js';
import { SkipUnchanged } from './skip-unchanged.js';
import type { RunStart } from './start-run.js';

/**
 * Threads a run keeps busy beside reading: this one (batches, uploads, results) and the ledger
 * writer. `concurrency.workers: auto` gives parallel readers only the cores left after them: on
 * 2 cores with the embedded service on the same machine, readers measured no faster and 100+ MB
 * larger (docs/performance.md).
 */
const RUN_BUSY_THREADS = 1;

/** The send stage and the ledger writer it writes through, open together and closed together. */
export interface Sending {
  writer: LedgerWriter;
  send: SendStage;
}

/** Opens the ledger writer and the send stage on it (the writer is closed again when the stage cannot be made). */
export async function openSending(
  run: OpenRun,
  client: PipelineClient | undefined,
  at: RunStart,
  progress: ProgressTracker,
): Promise<Sending> {
  const { def, ledger, options, scope } = run;
  const writer = openLedgerWriter(ledger, { thread: options.ledgerThread ?? 'auto' });
  try {
    const send = new SendStage({
      def,
      writer,
      runId: run.runId,
      scope,
      migrationNo: at.migrationNo,
      sink: options.sink ?? clientSink(client!.migrations, at.migrationId),
      skip: new SkipUnchanged(
        ledger,
        scope,
        at.migrationNo,
        at.start ? { file: at.start.file, line: ledger.lastLineOf(scope, at.start.file) } : undefined,
      ),
      signal: options.signal,
      onBatch: (e) => {
        if (e.type === 'failed' && !e.aborted)
          options.logger?.warn(
            { batch: e.batchId, seq: e.seq, error: e.error },
            'upload failed; its records stay in_flight and are sent again next run',
          );
        options.onBatch?.(e);
        progress.tick();
      },
    });
    return { writer, send };
  } catch (err) {
    await writer.close().catch(() => undefined); // the first failure is `err`
    throw err;
  }
}

/**
 * Reads every row and hands it on, until the input ends, `stop` fires or an upload fails for
 * good. At the end of the input the last batch goes out, and a source file that changed while it
 * was read fails the run.
 */
export async function readAndSend(
  run: OpenRun,
  { send }: Sending,
  at: RunStart,
  progress: ProgressTracker,
  stop: AbortSignal,
): Promise<void> {
  const { def, options, report, found } = run;
  const correcting = options.corrections !== undefined;
  // In batches, and an await only where a batch closed: a promise and a microtask turn per
  // row cost about 0.3 µs each (read-pipeline.ts).
  const batchesOfRows = readPipelineBatches(def, {
    signal: stop,
    tallies: found.tallies,
    childTallies: found.children,
    ...(options.corrections
      ? {
          corrections: options.corrections,
          correctionsSummary: found.corrections,
          // Checked against the ledger before anything is sent (corrections-pass.ts).
          correctionTarget: (origin, key) => run.ledger.correctionTarget(run.scope, origin, key),
        }
      : {}),
    ...(at.start ? { resume: at.start } : {}),
    parallel: { workers: def.concurrency.workers, busyThreads: RUN_BUSY_THREADS, encode: SEND_FORMAT },
  });
  for await (const rows of batchesOfRows) {
    for (const row of rows) {
      if (correcting) send.claim(row);
      if (at.keptCorrected(row)) countRow(report, row, 'kept-corrected');
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
      if (send.failure || stop.aborted) return;
    }
    report.skippedUnchanged = send.skipped;
  }
  if (send.failure || stop.aborted) return;
  await send.finish();
  // A file cut or rewritten while it was read: its rows are not the file's, and the run must
  // not end as if they were (a corrections run does not read the sources).
  const changed = correcting ? [] : await run.resume.changedFiles();
  if (changed.length > 0)
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `${changed.map((c) => c.message).join('; ')}. The rows read from ${changed.length === 1 ? 'it' : 'them'} are staged but not accounted for: run again once the export is complete and no longer written to`,
      { file: changed[0]!.file },
    );
}

/**
 * Whatever stopped the run: what was not sent is recorded, the uploads in flight finish (or are
 * aborted) and are recorded, and the writer closes, after which every write of the run is in the
 * ledger. Returns the run's failure: the first of `failure` and those met here.
 */
export async function windDown(sending: Sending | undefined, report: RunReport, failure: unknown): Promise<unknown> {
  try {
    if (sending) {
      addSendReport(report, await sending.send.windDown());
      report.skippedUnchanged = sending.send.skipped;
      failure ??= sending.send.failure;
    }
  } catch (err) {
    failure ??= err;
  }
  try {
    await sending?.writer.close();
  } catch (err) {
    failure ??= err;
  }
  return failure;
}
