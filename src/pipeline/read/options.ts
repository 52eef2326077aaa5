/**
 * What a read of the pipeline takes (`readPipeline`, `readPipelineBatches`) and what its passes
 * report besides rows.
 */
import type { CorrectionTarget } from '../../ledger/index.js';
import type { IgnoredColumns } from '../checks/corrections.js';
import type { ParallelOptions } from '../parallel/read-parallel.js';
import type { SourceStart, SourceTally } from '../source/index.js';
import type { ChildTally } from '../checks/child-tally.js';

/** Where a resumed run starts reading (runner/resume.ts ResumeStart). */
export interface ReadResume {
  source: string;
  file: string;
  range: SourceStart;
  /** The keys and lines the ledger holds of a file's rows before `beforeByte`. */
  keysBefore: (source: string, file: string, beforeByte: number) => Iterable<[legacyKey: string, line: number]>;
}

export interface ReadPipelineOptions {
  /** Stops reading (the generator throws an ABORTED StagecoachError). */
  signal?: AbortSignal;
  /**
   * Corrections files, or folders of them (CSV or JSON Lines, docs/reconciliation.md): the refused
   * rows, fixed. Only the rows they hold are yielded, mapped and checked like any other; the other
   * rows of the sources still count as relation targets and as holders of their keys.
   */
  corrections?: string | readonly string[];
  /** Filled in while corrections are read: the files, and the duplicates that came back unedited (not yielded). */
  correctionsSummary?: CorrectionsSummary;
  /**
   * The record a corrected row would correct, as the ledger holds it (by `_origin`, else by key):
   * each row of a corrections file is checked against it before anything is sent (a row replaces
   * only a refused record, never adds one; docs/reconciliation.md). Without it (`plan` without a
   * ledger) the rows are only checked among themselves and against the export.
   */
  correctionTarget?: (origin: { file: string; line: number } | undefined, legacyKey: string | undefined) => CorrectionTarget | undefined;
  /**
   * Hash each row into its provenance (default true). The hash is what the ledger keeps to tell
   * a changed row; `plan` keeps no ledger and skips it (about 0.5 µs a row).
   */
  hashRows?: boolean;
  /**
   * Collects each file's two-way count (source/tally.ts) for the formats that keep one: a tally
   * is pushed as its file starts and is final when the file's rows are all yielded.
   */
  tallies?: SourceTally[];
  /**
   * Collects what became of the rows of each child source (children/child-join.ts): pushed as
   * its parent source starts, final when the parent's rows are all yielded.
   */
  childTallies?: ChildTally[];
  /**
   * Parse the phone numbers of the rows this thread maps on a phone worker, a batch ahead
   * (parallel/phone-worker.ts; default true, and only when a mapping has a phone step). False
   * parses them as they are mapped: the same values, for tests and benches to compare.
   * `threadUrl`: the worker's script (tests give one that dies).
   */
  phoneWorker?: boolean | { threadUrl: URL };
}

/** What a read of corrections files did besides yielding rows. */
export interface CorrectionsSummary {
  files: string[];
  /** Rows refused as duplicate keys that came back as they were written: left refused, not re-staged. */
  unchangedDuplicates: number;
  /** Columns of a file that are none of its source's (a remark added in a spreadsheet): left out. */
  ignoredColumns?: IgnoredColumns[];
  /**
   * Rows refused against the ledger before anything was sent, and not written as records: a row
   * no refused record stands for (added), one whose record is not refused (live, staged, or
   * corrected in an earlier round), a second correction of the same record, a row under another
   * source's name. Kept with the run's report in the ledger.
   */
  refused?: RefusedCorrection[];
}

/** A row of a corrections file refused against the ledger (CorrectionsSummary.refused). */
export interface RefusedCorrection {
  file: string;
  line: number;
  source: string;
  /** `added` | `not-refused` | `repeated` | `other-source` | `key-change-held` (a key changed on a record refused at validation) */
  reason: 'added' | 'not-refused' | 'repeated' | 'other-source' | 'key-change-held';
  legacyKey?: string | undefined;
  message: string;
}

/** What `readPipelineBatches` takes besides: */
export interface ReadBatchesOptions extends ReadPipelineOptions {
  parallel?: ParallelOptions;
  /**
   * Start at a row of one file instead of at the start of every source (a resumed run, see
   * runner/resume.ts): the files before it are not read, and the keyed rows the ledger holds
   * before it stand in for them in the key index (duplicates later on name them as the first).
   */
  resume?: ReadResume | undefined;
  /**
   * Keep each mapped row's checked record (default true). `plan` only counts the rows: its mapped
   * rows come without a record, checked by the staging schema's validator (checkRecord).
   */
  keepRecords?: boolean;
}
