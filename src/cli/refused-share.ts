/**
 * How much of an export moved: `run`, `migrate` and `demo` say in their first lines when more
 * than a set share of the rows was refused (default 5%), that the export largely did not move,
 * and exit 1 unless told that share is expected (`--expect-refused 70%`). A run that refuses
 * 62% of the rows before upload and ends "balanced" no longer reads as a success.
 */
import { StagecoachError } from '../contract/errors.js';
import type { RunReport } from '../pipeline/runner/index.js';

/** The share of refused rows a run accepts without saying so, unless told otherwise. */
export const DEFAULT_EXPECTED_REFUSED = 0.05;

/** `--expect-refused`: the same words on run, migrate and demo. */
export const EXPECT_REFUSED_HELP =
  'the share of rows that may be refused without the run saying the export largely did not move and exiting 1, e.g. 30% (default 5%)';

/**
 * `--expect-refused` as a share: `30%`, `0.3` or `30` (percent).
 * @example parseExpectedRefused('30%') // 0.3
 */
export function parseExpectedRefused(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text);
  const n = m ? Number(m[1]) : Number.NaN;
  const share = m && (m[2] === '%' || n > 1) ? n / 100 : n;
  if (!Number.isFinite(share) || share < 0 || share > 1)
    throw new StagecoachError('CONFIG_INVALID', `--expect-refused ${text}: expected a share of the rows, e.g. 30% or 0.3`);
  return share;
}

/**
 * The line that says the export largely did not move, or undefined when the refused share is
 * within what is expected.
 * @example refusedShareLine({ rows: 1000, refused: 620 }, 0.05)
 *          // 'Most of the export did not move: 62% of the rows (620 of 1,000) were refused, more than the 5% expected …'
 */
export function refusedShareLine(counts: { rows: number; refused: number }, expected = DEFAULT_EXPECTED_REFUSED): string | undefined {
  if (counts.rows === 0) return undefined;
  const share = counts.refused / counts.rows;
  if (share <= expected) return undefined;
  const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
  const lead = share > 0.5 ? 'Most of the export did not move' : 'Much of the export did not move';
  return `${lead}: ${pct(share)} of the rows (${counts.refused.toLocaleString('en-US')} of ${counts.rows.toLocaleString('en-US')}) were refused, more than the ${pct(expected)} expected; fix them (the corrections file, stagecoach status) or, if that share is expected, say so with --expect-refused ${pct(Math.ceil(share * 100) / 100)}`;
}

/** The rows a run read and refused, as the share is taken of them. */
export function runRefused(r: Pick<RunReport, 'rowsRead' | 'rejected' | 'failed' | 'corrections'>): { rows: number; refused: number } {
  // A corrections run reads only rows that were refused: its share says nothing of how much of
  // the export moved (its summary lists what is still refused).
  if (r.corrections) return { rows: 0, refused: 0 };
  return { rows: r.rowsRead, refused: r.rejected + r.failed };
}
