/**
 * The hostile-input fuzzer's bench form (bench/fuzz-cases.ts): 10,000 CHECK seeds (quick: 1,000)
 * over every kind of file, each read in-process within its bound. Prints the cases per kind and
 * outcome, the slowest case, and every failure's kind and reason, grouped, with a seed to replay.
 */
import { CHECK_SEEDS, fuzzCase, KINDS, type CaseResult } from './fuzz-cases.js';
import type { BenchOptions, BenchRow } from './harness.js';

export const title = 'fuzz: damaged files of every kind, read within a bound';

const BOUND_MS = 2_000;

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const count = options.quick ? 1_000 : 10_000;
  const results: CaseResult[] = [];
  const started = performance.now();
  for (let seed = CHECK_SEEDS.from; seed < CHECK_SEEDS.from + count; seed++) results.push(await fuzzCase(seed, options.workDir, BOUND_MS));
  const seconds = (performance.now() - started) / 1000;
  const rows: BenchRow[] = [
    {
      benchmark: title,
      metric: 'cases',
      value: results.length,
      unit: 'cases',
      note: `seeds ${CHECK_SEEDS.from}–${CHECK_SEEDS.from + count - 1}, bound ${BOUND_MS} ms each, ${Math.round(seconds)} s in all`,
    },
  ];
  for (const kind of KINDS) {
    const of = results.filter((r) => r.kind === kind);
    const n = (o: CaseResult['outcome']) => of.filter((r) => r.outcome === o).length;
    const slowest = Math.max(0, ...of.map((r) => r.ms));
    rows.push({
      benchmark: title,
      metric: `${kind}: failed`,
      value: n('failed'),
      unit: `of ${of.length}`,
      note: `read ${n('read')}, refused naming the file ${n('refused')}; slowest ${slowest} ms`,
    });
  }
  // Failures grouped by reason (numbers and offsets dropped), each with one seed to replay.
  const groups = new Map<string, { count: number; seed: number }>();
  for (const r of results.filter((x) => x.outcome === 'failed')) {
    const key = `${r.kind}: ${(r.why ?? '').replace(/\d+/g, 'N').slice(0, 140)}`;
    const g = groups.get(key) ?? { count: 0, seed: r.seed };
    g.count++;
    groups.set(key, g);
  }
  for (const [why, g] of groups)
    rows.push({ benchmark: title, metric: 'failure', value: g.count, unit: 'cases', note: `${why} (e.g. seed ${g.seed})` });
  return rows;
}
