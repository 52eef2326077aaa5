/**
 * The hostile-input fuzzer's bench form (bench/fuzz-cases.ts): 10,000 CHECK seeds (quick: 1,000)
 * over every kind of file, each read in-process within its bound — in a child process
 * (fuzz-child.ts), so that a case that aborts the process (a native assertion) or blocks its
 * event loop is recorded as that case's failure and the run goes on with the next seed. Prints
 * the cases per kind and outcome, the slowest case, and every failure's kind and reason, grouped,
 * with a seed to replay.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CHECK_SEEDS, fuzzInput, KINDS, type CaseResult } from './fuzz-cases.js';
import type { BenchOptions, BenchRow } from './harness.js';

const CHILD = join(import.meta.dirname, 'fuzz-child.js');

/** Runs seeds [from, to] in child processes; a case that ends its process is its own failure. */
async function runSeeds(from: number, to: number, dir: string, boundMs: number): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  let next = from;
  while (next <= to) {
    let running: number | undefined;
    const child = spawn(process.execPath, [CHILD, String(next), String(to), dir, String(boundMs)], { stdio: ['ignore', 'pipe', 'ignore'] });
    let watchdog = setTimeout(() => child.kill('SIGKILL'), boundMs * 3);
    for await (const line of createInterface({ input: child.stdout })) {
      const msg = JSON.parse(line) as { start: number } | CaseResult;
      clearTimeout(watchdog);
      watchdog = setTimeout(() => child.kill('SIGKILL'), boundMs * 3);
      if ('start' in msg) running = msg.start;
      else {
        results.push(msg);
        running = undefined;
        next = msg.seed + 1;
      }
    }
    clearTimeout(watchdog);
    const code = await new Promise<string>((done) =>
      child.exitCode !== null || child.signalCode !== null
        ? done(String(child.exitCode ?? child.signalCode))
        : child.on('close', (c, sig) => done(String(c ?? sig))),
    );
    if (running === undefined && next <= to && results.at(-1)?.seed !== next - 1)
      throw new Error(`the fuzz child ended before seed ${next} without a case running (exit ${code})`);
    if (running !== undefined) {
      const { kind, damage } = await fuzzInput(running);
      results.push({
        seed: running,
        kind,
        damage,
        outcome: 'failed',
        ms: boundMs * 3,
        why: `the process ended in the case (exit ${code}): a crash, or no end`,
      });
      next = running + 1;
    }
  }
  return results;
}

export const title = 'fuzz: damaged files of every kind, read within a bound';

const BOUND_MS = 2_000;

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const count = options.quick ? 1_000 : 10_000;
  const started = performance.now();
  const results = await runSeeds(CHECK_SEEDS.from, CHECK_SEEDS.from + count - 1, options.workDir, BOUND_MS);
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
