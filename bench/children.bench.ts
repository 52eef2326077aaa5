/**
 * Child sources (issue 46): `stagecoach plan` on a generated table dump — customers, and two
 * addresses and two phone numbers per customer in child files (CSV and JSON Lines) in another
 * order than the customers, joined through the on-disk index (src/pipeline/children/) — against
 * the same records from one flat file (two address and two phone column groups per customer),
 * in alternated pairs (A B A B), each in a child process of its own: wall time, CPU seconds and
 * peak RSS of both, and the ratios of their medians. Targets: peak RSS ≤ 300 MB, time ≤ 1.5× the
 * flat file's. At 100,000 and 1,000,000 customers (quick: 20,000); `STAGECOACH_BENCH_CUSTOMERS`
 * names other sizes (comma-separated). The dumps are written once into .stagecoach/bench/.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mb, runChild, type BenchOptions, type BenchRow } from './harness.js';
import { generateTableDump } from '../src/pipeline/samples/generate-table-dump.js';
import type { PlanSummary } from '../src/pipeline/read-pipeline.js';

export const title = 'children: a table dump joined (unsorted children) against one flat file';

const CACHE = resolve('.stagecoach', 'bench');
const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');
const PAIRS = 2;

/** The dump of `customers` customers (and its flat twin), written once and cached. */
async function dump(customers: number): Promise<string> {
  const dir = join(CACHE, `table-dump-${customers}`);
  if (existsSync(join(dir, 'pipeline.yaml'))) return dir;
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await generateTableDump({ out: partial, customers, seed: 4646, defects: false, flat: true });
  renameSync(partial, dir); // only a whole dump is cached
  return dir;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function plan(dir: string, pipeline: string, customers: number) {
  const res = await runChild(process.execPath, [CLI, 'plan', pipeline, '--json'], { cwd: dir, stdout: 'pipe' });
  const s = JSON.parse(res.out) as PlanSummary;
  if (res.code !== 0 || s.mapped !== customers) throw new Error(`plan ${pipeline} exited ${res.code}, mapped ${s.mapped} of ${customers}`);
  const attached = (s.children ?? []).reduce((n, t) => n + t.attached, 0);
  return { ...res, attached };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = process.env.STAGECOACH_BENCH_CUSTOMERS
    ? process.env.STAGECOACH_BENCH_CUSTOMERS.split(',').map(Number)
    : options.quick
      ? [20_000]
      : [100_000, 1_000_000];
  const rows: BenchRow[] = [];
  for (const customers of sizes) {
    const dir = await dump(customers);
    const joined: Awaited<ReturnType<typeof plan>>[] = [];
    const flat: Awaited<ReturnType<typeof plan>>[] = [];
    for (let i = 0; i < PAIRS; i++) {
      joined.push(await plan(dir, 'pipeline.yaml', customers));
      flat.push(await plan(dir, 'pipeline-flat.yaml', customers));
    }
    if (joined[0]!.attached !== customers * 4) throw new Error(`attached ${joined[0]!.attached} child rows, expected ${customers * 4}`);
    const n = customers.toLocaleString('en');
    const side = (name: string, runs: typeof joined) => {
      const ms = median(runs.map((r) => r.ms));
      const cpu = median(runs.map((r) => r.cpu));
      const rss = Math.max(...runs.map((r) => r.peakRss));
      rows.push({
        benchmark: title,
        metric: `${name}, ${n} customers`,
        value: Math.round(ms / 100) / 10,
        unit: 's wall',
        note: `${cpu.toFixed(1)} s CPU, peak RSS ${mb(rss)} MB (median of ${runs.length}, loaded machine)`,
      });
      return { ms, cpu, rss };
    };
    const a = side(`joined (${n} + ${(customers * 4).toLocaleString('en')} child rows, unsorted)`, joined);
    const b = side('flat file, same records', flat);
    rows.push({
      benchmark: title,
      metric: `joined / flat, ${n} customers`,
      value: Math.round((a.ms / b.ms) * 100) / 100,
      unit: '× wall',
      note: `${(a.cpu / b.cpu).toFixed(2)}× CPU; target ≤ 1.5×, peak RSS ${mb(a.rss)} MB (target ≤ 300 MB)`,
    });
  }
  return rows;
}
