/**
 * `init` on export personalities it was never tuned on (src/pipeline/samples/personalities/):
 * for the CHECK seeds only, the rows the untouched pipeline maps against the truth's mappable
 * rows, and the staged values that differ from the truth (silently wrong), per field. Target
 * (issue 39): ≥ 95% mapped, 0 silently wrong. `STAGECOACH_SEEDS=dev` scores the development
 * seeds instead and prints each seed's failures (never look at the check seeds' failures).
 */
import { join } from 'node:path';
import type { BenchOptions, BenchRow } from './harness.js';
import { CHECK_SEEDS, DEV_SEEDS } from '../src/pipeline/samples/personalities/index.js';
import { scoreSeed, type SeedScore } from '../src/init/personality-score.js';

export const title = 'init: export personalities (check seeds)';

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const dev = process.env.STAGECOACH_SEEDS === 'dev';
  const seeds = dev ? DEV_SEEDS : CHECK_SEEDS;
  const rows = options.quick ? 150 : 300;
  const scores: SeedScore[] = [];
  const started = performance.now();
  for (const seed of seeds) {
    const s = await scoreSeed(seed, join(options.workDir, `p-${seed}`), rows);
    scores.push(s);
    if (dev)
      process.stderr.write(
        `  ${seed} ${s.label}: ${s.mapped}/${s.mappable}${s.undecided ? ` undecided ${s.undecided}` : ''}${s.failure ? ` FAILED ${s.failure}` : ''} ${JSON.stringify(s.wrong)}\n`,
      );
  }
  const mappable = scores.reduce((n, s) => n + s.mappable, 0);
  const mapped = scores.reduce((n, s) => n + s.mapped, 0);
  const wrong = new Map<string, number>();
  for (const s of scores) for (const [f, w] of Object.entries(s.wrong)) wrong.set(f, (wrong.get(f) ?? 0) + w.count);
  const range = `${dev ? 'dev' : 'check'} seeds ${seeds[0]}–${seeds[seeds.length - 1]}, ${rows} rows each`;
  const out: BenchRow[] = [
    {
      benchmark: title,
      metric: 'rows mapped / mappable',
      value: Math.round((mapped / Math.max(1, mappable)) * 1000) / 10,
      unit: '%',
      note: `${mapped} of ${mappable}; ${range}`,
    },
    {
      benchmark: title,
      metric: 'silently wrong values',
      value: [...wrong.values()].reduce((a, b) => a + b, 0),
      unit: 'values',
      note: [...wrong].map(([f, n]) => `${f} ${n}`).join(', ') || 'none',
    },
    {
      benchmark: title,
      metric: 'init failed or mapping invalid',
      value: scores.filter((s) => s.failure).length,
      unit: 'exports',
      note: `of ${scores.length}`,
    },
    {
      benchmark: title,
      metric: 'exports under 95% mapped',
      value: scores.filter((s) => s.mapped < 0.95 * s.mappable).length,
      unit: 'exports',
      note: `of ${scores.length}`,
    },
    {
      benchmark: title,
      metric: 'undecided points',
      value: scores.reduce((n, s) => n + s.undecided, 0),
      unit: 'fields',
      note: `in ${scores.filter((s) => s.undecided > 0).length} exports: plan/run stop on them; rows counted as --stage-undecided stages them`,
    },
    { benchmark: title, metric: 'time', value: Math.round((performance.now() - started) / 100) / 10, unit: 's' },
  ];
  return out;
}
