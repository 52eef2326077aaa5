/**
 * The run report: what one run did, as `stagecoach run` prints it (`--json`: exactly this). Made
 * empty when the run starts, filled in by the stages as they go, and settled when the run ends.
 */
import { type ChildTally, withChildGaps } from '../checks/child-tally.js';
import { StagecoachError, type ErrorCode } from '../../contract/errors.js';
import { noRecords, type Ledger, type RecordState } from '../../ledger/index.js';
import type { CorrectionsSummary } from '../read-pipeline.js';
import { tallyDisagreement, type SourceTally } from '../source/index.js';
import type { FrontRow } from '../types.js';
import type { ResumeReport } from './resume.js';
import { TOO_LARGE, type SendReport } from './send.js';

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
  /** The migration the pipeline's last run went into, when this run goes into another one (a re-run after a migration completed or was canceled). */
  previousMigrationId?: string;
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
  /**
   * Export rows a corrections file replaced, read again unchanged: the correction stands, the row
   * is neither sent nor refused (docs/reconciliation.md, "A record's life through corrections").
   */
  keptCorrected: number;
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
  /** Uploads refused for their size (413) and sent again in halves (uploader/split-batch.ts). */
  uploadsSplit: number;
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
  /** What became of each child source's rows (children/child-join.ts); absent without child sources. Kept in the ledger with the run. */
  children?: ChildTally[];
  /** The files cut off or without rows, unless accepted (allowTruncated): the run's exit is then not 0. */
  readFailures: string[];
  error?: { code: ErrorCode; message: string };
}

/** A report with nothing done yet. */
export function newRunReport(start: {
  runId: number;
  pipeline: string;
  pipelineFile: string;
  component: string;
  ledgerFile: string;
  recoveredRuns: number[];
}): RunReport {
  return {
    ...start,
    migrationId: undefined,
    migrationCreated: false,
    status: 'completed',
    complete: false,
    rowsRead: 0,
    mapped: 0,
    rejected: 0,
    rejectedByReason: {},
    skippedUnchanged: 0,
    keptCorrected: 0,
    sent: 0,
    staged: 0,
    failed: 0,
    failedByCode: {},
    unconfirmed: 0,
    unsent: 0,
    batches: 0,
    batchesFailed: 0,
    uploadsSplit: 0,
    retries: undefined,
    bytesSent: 0,
    durationMs: 0,
    recordsPerSecond: 0,
    ledger: noRecords(), // counted when the run ends
    resume: { mode: 'full', reason: 'the run stopped before it read anything' },
    files: [],
    disagreements: [],
    readFailures: [],
  };
}

/**
 * What became of a row read: an export row a correction replaced, read again unchanged
 * (`kept-corrected`); refused before upload (`rejected`); over the platform's per-record limit,
 * kept with the rejects (`TOO_LARGE`); on its way to staging or skipped as unchanged (`mapped`).
 */
export type RowFate = 'kept-corrected' | 'rejected' | typeof TOO_LARGE | 'mapped';

/** Counts one row read by its fate: rows read, and the count of its fate (a refusal by the code of its first reason). */
export function countRow(report: RunReport, row: FrontRow, fate: RowFate): void {
  report.rowsRead++;
  switch (fate) {
    case 'kept-corrected':
      report.keptCorrected++;
      return;
    case 'mapped':
      report.mapped++;
      return;
    case 'rejected':
      countRejected(report, (row.kind === 'rejected' ? row.reasons[0]?.code : undefined) ?? 'UNKNOWN');
      return;
    case TOO_LARGE:
      countRejected(report, TOO_LARGE);
      return;
  }
}

function countRejected(report: RunReport, code: string): void {
  report.rejected++;
  report.rejectedByReason[code] = (report.rejectedByReason[code] ?? 0) + 1;
}

/** Adds up what the send stage did. */
export function addSendReport(report: RunReport, sent: SendReport): void {
  const up = sent.upload;
  Object.assign(report, {
    sent: up.recordsSent,
    staged: up.staged,
    failed: up.failed,
    failedByCode: up.failedByCode,
    unconfirmed: up.unconfirmed,
    batches: up.batches,
    batchesFailed: up.batchesFailed,
    uploadsSplit: up.splits,
    bytesSent: up.bytesSent,
  });
  report.unsent += sent.unsent;
}

/**
 * Settles the report when the run ends: its status from what stopped it, the ledger's counts,
 * whether anything is left to send, and — for a whole read — each file's two-way count, kept in
 * the ledger for the reconciliation report.
 */
export function settleRunReport(
  report: RunReport,
  end: {
    ledger: Ledger;
    failure: unknown;
    interrupted: boolean;
    durationMs: number;
    tallies: SourceTally[];
    children?: ChildTally[];
    allowTruncated: boolean;
  },
): void {
  const { failure, interrupted } = end;
  const failureIsAbort = failure instanceof StagecoachError && failure.code === 'ABORTED';
  report.status = failure !== undefined && !(interrupted && failureIsAbort) ? 'failed' : interrupted ? 'interrupted' : 'completed';
  if (report.status === 'failed') report.error = errorOf(failure);
  report.durationMs = Math.round(end.durationMs);
  report.recordsPerSecond = report.durationMs > 0 ? Math.round((report.rowsRead * 1000) / report.durationMs) : 0;
  report.ledger = end.ledger.counts(report.pipeline, report.component);
  report.complete =
    report.status === 'completed' &&
    report.unconfirmed === 0 &&
    report.unsent === 0 &&
    (report.failedByCode.NO_STAGING_RESULT ?? 0) === 0 &&
    report.ledger.in_flight === 0 &&
    report.ledger.mapped === 0;
  if (report.status === 'completed' && end.tallies.length > 0) {
    // Only a whole read gives final counts; the tallies go into the ledger for the report.
    end.ledger.tallies.record(report.runId, end.tallies, { accepted: end.allowTruncated });
    report.files = end.tallies;
    report.disagreements = end.tallies.flatMap((t) => tallyDisagreement(t) ?? []);
    if (end.children && end.children.length > 0)
      report.children = withChildGaps({ children: end.children, disagreements: report.disagreements }).children;
    if (!end.allowTruncated) report.readFailures = end.tallies.flatMap((t) => (t.truncated ? [`${t.file}: ${t.truncated}`] : []));
  }
}

function errorOf(err: unknown): { code: ErrorCode; message: string } {
  if (err instanceof StagecoachError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: /SQLITE|database/i.test(message) ? 'LEDGER_ERROR' : 'INTERNAL_ERROR', message };
}
