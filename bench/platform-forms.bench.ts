/**
 * Same data in another form (issue 42), on the CHECK seeds of the platform-variation generator
 * (platform-forms.ts), never tuned on: the share of variations `verify`'s comparison finds
 * identical (target 100%), the share its proof by hash settles without the export, and the share
 * of controls (one value really changed) it finds different (target 100%).
 */
import type { BenchOptions, BenchRow } from './harness.js';
import { CHECK_SEEDS, judge, variations } from './platform-forms.js';

export const title = 'platform forms (check seeds: same data in another form found identical, real changes found)';

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const seeds = options.quick ? { from: CHECK_SEEDS.from, count: 200 } : CHECK_SEEDS;
  let identical = 0;
  let proven = 0;
  let caught = 0;
  const missed: string[] = [];
  for (const v of variations(seeds)) {
    const j = judge(v);
    identical += Number(j.identical);
    proven += Number(j.proven);
    caught += Number(j.caught);
    if (!j.identical) missed.push(`seed ${j.seed}: ${j.differing.join(', ')} called different`);
    if (!j.caught) missed.push(`seed ${j.seed}: changed ${j.changedField} not found`);
  }
  const pct = (n: number) => Math.round((n / seeds.count) * 10_000) / 100;
  const range = `seeds ${seeds.from}–${seeds.from + seeds.count - 1}`;
  for (const m of missed.slice(0, 10)) process.stderr.write(`  ${m}\n`);
  return [
    {
      benchmark: title,
      metric: 'variations found identical',
      value: pct(identical),
      unit: '%',
      note: `${identical} of ${seeds.count}, ${range}`,
    },
    {
      benchmark: title,
      metric: 'variations proven by hash',
      value: pct(proven),
      unit: '%',
      note: `${proven} of ${seeds.count} (the rest: compared field by field)`,
    },
    { benchmark: title, metric: 'real changes found', value: pct(caught), unit: '%', note: `${caught} of ${seeds.count}` },
  ];
}
