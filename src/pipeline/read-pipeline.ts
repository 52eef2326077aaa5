/**
 * The front half of a pipeline, as one entry: every source row through its mapping and the
 * checks before upload, yielded as `MappedRow`s (mapped, or rejected with reasons) in source
 * order — sources in pipeline order, files in sorted order, rows in file order. Nothing is
 * dropped: a row the source cannot read, a row the mapping refuses, a duplicate key, a relation
 * to a key no source holds, a record the staging schema refuses, each comes out as `rejected`
 * with file:line, field, value and reason.
 *
 * Two passes. Whether a relation's target exists needs every legacy key, and a relation may
 * point forward (a partner further down the file), so a first pass reads the sources for their
 * key column only and fills a `KeyIndex` (also what names the first occurrence of a duplicate);
 * the second pass maps and checks. Memory stays flat in the rows: neither pass holds rows, and
 * the index holds 10–24 bytes per distinct key (key-index.ts). The first pass is skipped when no
 * mapping can make a relation: duplicates are then caught in the one pass, since a first
 * occurrence always comes before its duplicates.
 */
import type { FrontRow, MappedRow, SourceRow, SourceRowError } from './types.js';
import type { CsvRange } from './source/csv/index.js';
import { ParallelReader, type ParallelOptions } from './parallel/read-parallel.js';
import { PhoneWorker, type PhoneAnswerMap } from './parallel/phone-worker.js';
import type { PipelineDefinition } from './definition/load-pipeline.js';
import type { MapContext } from './mapping/compile.js';
import type { PhoneQuestions } from './mapping/transforms/phone.js';
import {
  formatOf,
  formatTallies,
  isSourceRowError,
  newTally,
  readSourceBatches,
  readSourceFile,
  type SourceTally,
} from './source/index.js';
import { KeyIndex } from './checks/key-index.js';
import { mapAndCheck, rejectUnreadable, settleRow, type KeyChecks } from './checks/index.js';
import { readCorrections, type CorrectionsIndex, type IgnoredColumns } from './checks/corrections.js';
import { summariseRows, withTallies, type PlanSummary } from './checks/plan-summary.js';
import type { ImpactTally } from './checks/plan-impact.js';
import { preparePipeline, type PreparedSource } from './prepare-pipeline.js';
import { etaFrom, sourcePosition } from './source/position.js';

/** Where a resumed run starts reading (runner/resume.ts ResumeStart). */
export interface ReadResume {
  source: string;
  file: string;
  range: CsvRange;
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

/**
 * Streams every source row of the pipeline through mapping and checks.
 * @example for await (const row of readPipeline(await loadPipeline('pipelines/crm.yaml'))) {
 *            if (row.kind === 'rejected') console.log(row.row.provenance, row.reasons);
 *          }
 */
export function readPipeline(def: PipelineDefinition, options?: ReadPipelineOptions): AsyncGenerator<MappedRow>;
/**
 * With `parallel`, big CSV files are read by worker threads (parallel/read-parallel.ts): the rows
 * come in the same order with the same verdicts, as `FrontRow`s (framed for upload when asked;
 * source values only on rows a worker refused).
 */
export function readPipeline(
  def: PipelineDefinition,
  options: ReadPipelineOptions & { parallel: ParallelOptions },
): AsyncGenerator<FrontRow>;
export async function* readPipeline(
  def: PipelineDefinition,
  options: ReadPipelineOptions & { parallel?: ParallelOptions } = {},
): AsyncGenerator<FrontRow> {
  for await (const rows of readPipelineBatches(def, options)) yield* rows;
}

/**
 * The same rows in batches (the rows of a file chunk or a range), for consumers that take many
 * rows: an async generator's yield costs a promise and a turn of the microtask queue per row
 * (0.3 µs), a batch's rows cost nothing. Take each batch's rows before asking for the next:
 * they are mapped as they are taken.
 * @example for await (const rows of readPipelineBatches(def)) for (const row of rows) count(row);
 */
export async function* readPipelineBatches(def: PipelineDefinition, options: ReadBatchesOptions = {}): AsyncGenerator<Iterable<FrontRow>> {
  const { signal } = options;
  const prepared = await preparePipeline(def);
  const { sources, files } = prepared;
  const corrections = options.corrections ? await readCorrections(options.corrections, def, signal) : undefined;
  const rejectMissing = def.checks.missingRelationTarget === 'reject';

  const index = new KeyIndex();
  const keyPass = prepared.needsKeyPass || corrections !== undefined;
  const hashRows = options.hashRows !== false;
  const resume = corrections ? undefined : options.resume;
  // Files in reading order; a resumed run skips those before its start.
  const order = sources.flatMap((s) => s.files.map((f) => `${s.def.name}\u0000${f.file}`));
  const resumeAt = resume ? order.indexOf(`${resume.source}\u0000${resume.file}`) : -1;
  const parallel = options.parallel && !corrections ? new ParallelReader(def.path, { ...options.parallel, hashRows }) : undefined;
  const phoneOption = options.phoneWorker ?? true;
  // Started by the first batch with a number to parse.
  const phoneWorker =
    phoneOption === false || (phoneOption === true && !PhoneWorker.available())
      ? undefined
      : new PhoneWorker(phoneOption === true ? undefined : phoneOption.threadUrl);
  try {
    // Pass 1: the legacy keys every source holds (see the module comment). Meanwhile the workers
    // of a parallel reader read the first ranges of the first file they take.
    if (keyPass) {
      // A resumed run reads the files before its start not at all, and its start on this thread.
      if (parallel) await prefetchFirstFile(parallel, sources, resumeAt, signal);
      await readKeys(sources, index, signal);
    }

    // Pass 2: map and check, in source order.
    const ctx: MapContext = { reasons: null, refs: [], key: '' };
    const keyChecks: KeyChecks = { index, duplicates: undefined, rejectMissing, files };
    const keepRecords = options.keepRecords !== false;
    const mapRow = (s: PreparedSource, row: SourceRow, fileIndex: number, keys: KeyChecks): FrontRow => {
      const v = mapAndCheck(s.mapping, row, ctx, keepRecords);
      if (v.kind === 'final') return v.row;
      const reasons = settleRow(
        s.mapping,
        {
          key: v.legacyKey,
          fileIndex,
          line: row.provenance.line,
          refs: v.refs,
          mappingReasons: v.mappingReasons,
          checkReasons: v.check.ok ? null : v.check.reasons,
        },
        keys,
      );
      if (reasons === null && v.check.ok)
        return {
          kind: 'mapped',
          component: 'Counterparties',
          legacyKey: v.legacyKey,
          referenceId: v.referenceId,
          ...(v.check.record ? { record: v.check.record } : {}),
          row,
        };
      return {
        kind: 'rejected',
        component: 'Counterparties',
        legacyKey: v.legacyKey,
        referenceId: v.referenceId,
        reasons: reasons ?? [],
        row,
      };
    };

    if (corrections) {
      // Only the corrected rows. Their originals' keys are in the index already: a corrected row
      // is a duplicate of another corrected row, or of a source row that holds its key and was not
      // itself refused (a row refused as a duplicate never replaces the row that staged).
      const amongThemselves: KeyChecks = { ...keyChecks, duplicates: new KeyIndex() };
      const released = new Set<string>(); // keys whose holder is itself a refused row being corrected
      for await (const c of corrections.rows()) {
        if (isSourceRowError(c.row) || c.codes.includes('DUPLICATE_LEGACY_KEY')) continue;
        const s = sources.find((x) => x.def.name === c.sourceName)!;
        const key = s.mapping.key(c.row.values);
        if (key !== undefined) released.add(`${s.mapping.scope}\u0000${key}`);
      }
      const summary = options.correctionsSummary;
      if (summary) summary.files = corrections.files;
      for await (const { row: read, sourceName, codes, unchanged, origin } of corrections.rows()) {
        const s = sources.find((x) => x.def.name === sourceName)!;
        // The export row it corrects travels with the row, to tie it to its record (corrections.ts).
        const row = origin ? { ...read, provenance: { ...read.provenance, origin } } : read;
        if (isSourceRowError(row)) {
          yield [rejectUnreadable(row)];
          continue;
        }
        const fileIndex = corrections.fileIndex(files, row.provenance.file);
        const key = s.mapping.key(row.values);
        if (codes.includes('DUPLICATE_LEGACY_KEY')) {
          if (unchanged) {
            if (summary) summary.unchangedDuplicates++;
            continue;
          }
          const holder = key === undefined ? undefined : index.get(s.mapping.scope, key);
          if (key !== undefined && holder && !released.has(`${s.mapping.scope}\u0000${key}`)) {
            const at = holder.line > 0 ? `the row at ${files[holder.fileIndex] ?? '?'}:${holder.line}` : `a row of ${s.def.name}`;
            yield [
              {
                kind: 'rejected',
                component: 'Counterparties',
                legacyKey: key,
                reasons: [
                  {
                    field: s.mapping.keyColumn,
                    value: key,
                    code: 'DUPLICATE_LEGACY_KEY',
                    message: `${s.mapping.keyColumn}: duplicate legacy key ${s.mapping.scope} ${key}, still held by ${at}, which staged; give this row its own key if it is another counterparty, or leave it out`,
                  },
                ],
                row,
              },
            ];
            continue;
          }
        }
        if (key !== undefined) index.mark(s.mapping.scope, key);
        yield [mapRow(s, row, fileIndex, amongThemselves)];
      }
      if (summary) summary.ignoredColumns = corrections.ignoredColumns;
      return;
    }

    if (resume && resumeAt >= 0) indexSkipped(sources, resume, index);

    let at = -1;
    for (const [sourceIndex, s] of sources.entries()) {
      for (const f of s.files) {
        if (++at < resumeAt) continue;
        // Each row is mapped as it is taken, not the chunk's rows all at once: a few hundred mapped
        // rows alive together were what every scavenge copied (about 1 MB each time).
        const phones = s.mapping.phones;
        function* mapEach(batch: readonly (SourceRow | SourceRowError)[], answers?: PhoneAnswerMap): Generator<FrontRow> {
          phones?.answers.use(answers);
          for (const row of batch) yield isSourceRowError(row) ? rejectUnreadable(row) : mapRow(s, row, f.index, keyChecks);
          phones?.answers.use(undefined);
        }
        // A file read from a resume point is not read whole: its count would be partial. A file
        // the parallel reader takes is read in ranges, each counted where it is read and added up.
        const byWorkers = at !== resumeAt && parallel !== undefined && (await parallel.takes(s, f.path));
        const whole = at !== resumeAt;
        const tally = whole && options.tallies && formatTallies(s.def.format) ? newTally(s.def.name, f.file, s.def.format) : undefined;
        if (tally) options.tallies!.push(tally);
        async function* onThisThread(range: CsvRange | undefined): AsyncGenerator<Iterable<FrontRow>> {
          const batches = readSourceBatches(s.def, f, { requiredColumns: s.mapping.columns, signal, range, hashRows, tally });
          if (phones === undefined || phoneWorker === undefined) {
            for await (const batch of batches) yield mapEach(batch);
            return;
          }
          const ask = (batch: readonly (SourceRow | SourceRowError)[], questions: PhoneQuestions) => {
            for (const row of batch) if (!isSourceRowError(row)) phones.ask(row.values, questions);
          };
          for await (const [batch, answers] of phoneWorker.ahead(batches, ask)) yield mapEach(batch, answers);
        }
        const rows =
          at === resumeAt
            ? onThisThread(resume!.range)
            : byWorkers
              ? parallel!.readFile(sourceIndex, s, f, keyChecks, onThisThread, signal, tally)
              : onThisThread(undefined);
        yield* rows;
      }
    }
  } finally {
    await parallel?.close();
    await phoneWorker?.close();
  }
}

/**
 * A resumed run's key index for the rows it does not read: every keyed row the ledger holds before
 * the start, at its file and line, as pass 2 would have added it.
 */
function indexSkipped(sources: readonly PreparedSource[], resume: ReadResume, index: KeyIndex): void {
  for (const s of sources) {
    for (const f of s.files) {
      const atStart = s.def.name === resume.source && f.file === resume.file;
      for (const [key, line] of resume.keysBefore(s.def.name, f.file, atStart ? resume.range.start : Number.MAX_SAFE_INTEGER))
        index.add(s.mapping.scope, key, f.index, line);
      if (atStart) return;
    }
  }
}

/** Pass 1: marks every legacy key of every source in the index (CSV: only the key column is read). */
async function readKeys(sources: readonly PreparedSource[], index: KeyIndex, signal: AbortSignal | undefined): Promise<void> {
  for (const s of sources) {
    const { scope, keyColumn } = s.mapping;
    const probe: Record<string, unknown> = {};
    const mark = (raw: string) => {
      probe[keyColumn] = raw;
      const key = s.mapping.key(probe);
      if (key !== undefined) index.mark(scope, key);
    };
    const scanKeys = formatOf(s.def.format).scanKeys;
    for (const f of s.files) {
      if (scanKeys && (await scanKeys(s.def, f, keyColumn, signal, mark))) continue;
      for await (const row of readSourceFile(s.def, f, { requiredColumns: s.mapping.columns, signal, hashRows: false })) {
        if (isSourceRowError(row)) continue;
        const key = s.mapping.key(row.values);
        if (key !== undefined) index.mark(scope, key);
      }
    }
  }
}

/** Starts the first file the parallel reader takes on its workers (the key pass keeps this thread). */
async function prefetchFirstFile(
  parallel: ParallelReader,
  sources: readonly PreparedSource[],
  resumeAt: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  let at = -1;
  for (const [sourceIndex, s] of sources.entries()) {
    for (const f of s.files) {
      if (++at > resumeAt && (await parallel.takes(s, f.path))) return parallel.prefetch(sourceIndex, s, f, signal);
    }
  }
}

export type { CorrectionsIndex };

/**
 * Dry run for `plan`: reads everything, sends nothing; counts and examples of refusals.
 * @example const s = await summarisePlan(def); s.rejectedByReason // { UNKNOWN_CODE: 1, … }
 */
export async function summarisePlan(
  def: PipelineDefinition,
  options: ReadPipelineOptions & {
    samplesPerReason?: number;
    impact?: ImpactTally;
    /** Called after each batch of rows: rows read so far and the share of the source bytes. */
    onProgress?: (progress: PlanProgress) => void;
  } = {},
): Promise<PlanSummary> {
  const tallies: SourceTally[] = [];
  const { impact, onProgress } = options;
  const where = sourcePosition(def);
  if (onProgress && !options.corrections) await where.init();
  const batches = readPipelineBatches(def, {
    ...options,
    tallies,
    // Compared with a ledger, each row is hashed (an export row a correction replaced is told by
    // its hash) and each record framed and hashed as a run does it.
    hashRows: impact !== undefined,
    keepRecords: impact !== undefined,
    parallel: { workers: def.concurrency.workers, ...(impact ? { encode: 'json-seq' as const } : {}) },
  });
  const summary = await summariseRows(onProgress ? reportingProgress(batches, where, onProgress) : batches, {
    pipeline: def.file,
    component: def.component,
    ...(options.samplesPerReason !== undefined ? { samplesPerReason: options.samplesPerReason } : {}),
    impact,
  });
  return withTallies(summary, tallies);
}

export interface PlanProgress {
  rowsRead: number;
  elapsedMs: number;
  /** Share of the source bytes read (0..1), when their sizes are known. */
  fraction: number | undefined;
  etaMs: number | undefined;
}

/** Passes the batches on, telling how far the reading is after each. */
async function* reportingProgress(
  batches: AsyncIterable<Iterable<FrontRow>>,
  where: ReturnType<typeof sourcePosition>,
  onProgress: (progress: PlanProgress) => void,
): AsyncGenerator<Iterable<FrontRow>> {
  const started = performance.now();
  let rowsRead = 0;
  for await (const rows of batches) {
    // A batch may be read only once: counted while the summary reads it.
    let last: FrontRow | undefined;
    yield (function* () {
      for (const r of rows) {
        rowsRead++;
        last = r;
        yield r;
      }
    })();
    if (last) where.at(last);
    const elapsedMs = performance.now() - started;
    const fraction = where.fraction();
    onProgress({ rowsRead, elapsedMs, fraction, etaMs: etaFrom(elapsedMs, fraction) });
  }
}

export { loadPipeline, type PipelineDefinition, type SourceDefinition } from './definition/load-pipeline.js';
export type { PlanSummary, RejectSample } from './checks/plan-summary.js';
export { ImpactTally, type PlanImpact, type ImpactExample } from './checks/plan-impact.js';
export { checkConfiguration } from './checks/configuration.js';
