/**
 * `plan`'s report: reads the whole pipeline through mapping and checks (no network) and counts
 * what would be sent and what would be refused, by reason, with a few examples of each. Holds
 * counters and a bounded set of examples only.
 */
import type { FrontRow } from '../types.js';
import { tallyDisagreement, type SourceTally } from '../source/tally.js';
import type { ImpactTally, PlanImpact } from './plan-impact.js';
import type { ChildTally } from './child-tally.js';

export interface RejectSample {
  source: string;
  file: string;
  line: number;
  legacyKey?: string;
  field: string;
  value?: unknown;
  code: string;
  message: string;
  /** How the mapping made the refused value: column, transforms, values (RejectReason.trace). */
  trace?: string;
}

export interface PlanSummary {
  pipeline: string;
  component: string;
  rowsRead: number;
  mapped: number;
  rejected: number;
  /** Rejected rows by the code of their first reason. */
  rejectedByReason: Record<string, number>;
  /** Every reason counted (a row can have several). */
  reasons: Record<string, number>;
  bySource: Record<string, { rowsRead: number; mapped: number; rejected: number }>;
  /** Up to `samplesPerReason` examples of each reason code, in source order. */
  samples: RejectSample[];
  /**
   * Each file's two-way count (source/tally.ts), for the formats that keep one: physical lines,
   * blank and header lines, rows and row errors as the parser saw them, items for JSON arrays.
   */
  files: SourceTally[];
  /** Every file whose counts disagree, was cut off or held no rows, in words (tallyDisagreement). */
  disagreements: string[];
  /** What became of the rows of each child source (children/child-join.ts); absent without child sources. */
  children?: ChildTally[];
  /** With `plan --ledger`: what the next run would send, compared with the ledger (plan-impact.ts). */
  impact?: PlanImpact;
  elapsedMs: number;
}

/**
 * Adds the files' tallies to a summary, and every disagreement among them.
 * @example withTallies(summary, tallies).disagreements // ['b.json: the file ends inside element 101 of the array (…)']
 */
export function withTallies(summary: PlanSummary, tallies: readonly SourceTally[]): PlanSummary {
  summary.files = [...tallies];
  summary.disagreements = tallies.flatMap((t) => tallyDisagreement(t) ?? []);
  return summary;
}

/**
 * Folds a stream of mapped rows, in batches, into a plan summary.
 * @example const summary = await summariseRows(readPipelineBatches(def), { pipeline: def.file, component: def.component });
 */
export async function summariseRows(
  batches: AsyncIterable<Iterable<FrontRow>>,
  meta: { pipeline: string; component: string; samplesPerReason?: number; impact?: ImpactTally | undefined },
): Promise<PlanSummary> {
  const started = performance.now();
  const perReason = meta.samplesPerReason ?? 5;
  const summary: PlanSummary = {
    pipeline: meta.pipeline,
    component: meta.component,
    rowsRead: 0,
    mapped: 0,
    rejected: 0,
    rejectedByReason: {},
    reasons: {},
    bySource: {},
    samples: [],
    files: [],
    disagreements: [],
    elapsedMs: 0,
  };
  const sampled: Record<string, number> = {};
  const impact = meta.impact;
  for await (const rows of batches)
    for (const r of rows) {
      summary.rowsRead++;
      impact?.take(r);
      const source = r.row.source;
      const s = (summary.bySource[source] ??= { rowsRead: 0, mapped: 0, rejected: 0 });
      s.rowsRead++;
      if (r.kind === 'mapped') {
        summary.mapped++;
        s.mapped++;
        continue;
      }
      summary.rejected++;
      s.rejected++;
      const firstCode = r.reasons[0]?.code ?? 'UNKNOWN';
      summary.rejectedByReason[firstCode] = (summary.rejectedByReason[firstCode] ?? 0) + 1;
      for (const reason of r.reasons) {
        summary.reasons[reason.code] = (summary.reasons[reason.code] ?? 0) + 1;
        if ((sampled[reason.code] ?? 0) >= perReason) continue;
        sampled[reason.code] = (sampled[reason.code] ?? 0) + 1;
        summary.samples.push({
          source,
          file: r.row.provenance.file,
          line: r.row.provenance.line,
          ...(r.legacyKey !== undefined ? { legacyKey: r.legacyKey } : {}),
          field: reason.field,
          ...(reason.value !== undefined ? { value: reason.value } : {}),
          code: reason.code,
          message: reason.message,
          ...(reason.trace !== undefined ? { trace: reason.trace } : {}),
        });
      }
    }
  if (impact) summary.impact = impact.finish();
  summary.elapsedMs = Math.round(performance.now() - started);
  return summary;
}
