/**
 * The XLSX source against SheetJS on the CHECK seeds (bench/xlsx-generated.ts): thousands of
 * generated workbooks, each read by both readers and every cell compared (xlsx-differential.ts).
 * The CI test reads 40 development seeds; this range is never looked at while building.
 * `npm run bench -- workbook-differential` (--quick: 500 workbooks).
 */
import type { BenchOptions, BenchRow } from './harness.js';
import { compareSeed } from './xlsx-differential.js';
import { CHECK_SEEDS } from './xlsx-generated.js';

export const title = 'workbook-differential: every cell of generated workbooks, ours against SheetJS';

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const to = options.quick ? CHECK_SEEDS.from + 499 : CHECK_SEEDS.to;
  let cells = 0;
  let refused = 0;
  const mismatches: string[] = [];
  const started = performance.now();
  for (let seed = CHECK_SEEDS.from; seed <= to; seed++) {
    const c = await compareSeed(seed, options.workDir);
    cells += c.cells;
    refused += c.refused;
    mismatches.push(...c.mismatches);
  }
  const workbooks = to - CHECK_SEEDS.from + 1;
  const seconds = (performance.now() - started) / 1000;
  for (const m of mismatches.slice(0, 20)) process.stderr.write(`  ${m}\n`);
  return [
    {
      benchmark: title,
      metric: `cells that differ, seeds ${CHECK_SEEDS.from}–${to}`,
      value: mismatches.length,
      unit: 'cells',
      note: `${workbooks} workbooks, ${cells} cells compared (${refused} refused by both), ${seconds.toFixed(0)} s`,
    },
  ];
}
