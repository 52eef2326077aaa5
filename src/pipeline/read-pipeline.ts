/**
 * The front half of a pipeline, as one entry: every source row through its mapping and the
 * checks before upload, yielded as `MappedRow`s (mapped, or rejected with reasons) in source
 * order — sources in pipeline order, files in sorted order, rows in file order. Nothing is
 * dropped: a row the source cannot read, a row the mapping refuses, a duplicate key, a relation
 * to a key no source holds, a record the staging schema refuses, each comes out as `rejected`
 * with file:line, field, value and reason.
 *
 * It chains passes (read/): the key pass (read/key-pass.ts) reads the sources for their key
 * column only and fills a `KeyIndex`, since whether a relation's target exists needs every
 * legacy key and a relation may point forward (a partner further down the file); then either
 * the source pass (read/source-pass.ts) maps and checks every row, or the corrections pass
 * (read/corrections-pass.ts) only the rows of corrections files. Memory stays flat in the rows:
 * no pass holds rows, and the index holds 10–24 bytes per distinct key (key-index.ts). The key
 * pass is skipped when no mapping can make a relation: duplicates are then caught in the one
 * pass, since a first occurrence always comes before its duplicates.
 */
import type { FrontRow, MappedRow } from './types.js';
import type { ParallelOptions } from './parallel/read-parallel.js';
import type { PipelineDefinition } from './definition/load-pipeline.js';
import type { SourceTally } from './source/index.js';
import { summariseRows, withTallies, type PlanSummary } from './checks/plan-summary.js';
import type { ImpactTally } from './checks/plan-impact.js';
import { etaFrom, sourcePosition } from './source/position.js';
import { correctionsPass } from './read/corrections-pass.js';
import type { ReadBatchesOptions, ReadPipelineOptions } from './read/options.js';
import { sourcePass } from './read/source-pass.js';
import { type ChildTally, withChildGaps } from './checks/child-tally.js';

export type { CorrectionsSummary, ReadBatchesOptions, ReadPipelineOptions, ReadResume } from './read/options.js';
export type { CorrectionsIndex } from './checks/corrections.js';

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
export function readPipelineBatches(def: PipelineDefinition, options: ReadBatchesOptions = {}): AsyncGenerator<Iterable<FrontRow>> {
  // The pass's own generator, not one wrapped in another: a wrapper would add a turn per batch.
  return options.corrections ? correctionsPass(def, options.corrections, options) : sourcePass(def, options);
}

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
  const childTallies: ChildTally[] = [];
  const { impact, onProgress } = options;
  const where = sourcePosition(def);
  if (onProgress && !options.corrections) await where.init();
  const batches = readPipelineBatches(def, {
    ...options,
    tallies,
    childTallies,
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
  if (childTallies.length > 0) summary.children = childTallies;
  return withChildGaps(withTallies(summary, tallies));
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
export { checkConfiguration } from './read/configuration.js';
