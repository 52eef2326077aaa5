/**
 * A run's progress for whoever watches it (the CLI's progress line, a log): counts, speed and an
 * ETA from the share of source bytes read, emitted at most every `progressEveryMs`.
 */
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import { etaFrom, sourcePosition } from '../source/position.js';
import type { FrontRow } from '../types.js';
import type { Uploader } from '../uploader/index.js';
import type { RunReport } from './run-report.js';

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

export type ProgressTracker = ReturnType<typeof progressTracker>;

/** Progress: counts, speed and an ETA from the share of source bytes read. */
export function progressTracker(
  def: PipelineDefinition,
  options: { onProgress?: ((progress: RunProgress) => void) | undefined; progressEveryMs?: number | undefined; corrections?: unknown },
  report: RunReport,
  uploader: () => Uploader | undefined,
  started: number,
) {
  const every = options.progressEveryMs ?? 250;
  const where = sourcePosition(def);
  let last = 0;
  const snapshot = (done: boolean): RunProgress => {
    const elapsedMs = performance.now() - started;
    const fraction = options.corrections ? undefined : where.fraction();
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
      etaMs: done ? 0 : etaFrom(elapsedMs, fraction),
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
      if (options.onProgress) await where.init();
    },
    row(row: FrontRow) {
      if (!options.onProgress) return;
      where.at(row);
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
