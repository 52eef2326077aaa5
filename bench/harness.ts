/**
 * Benchmark harness. Every `bench/*.bench.ts` module exports `run(options)` returning rows; the
 * runner prints them as one table. Figures live here, never in tests.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { readCsvBatches } from '../src/pipeline/source/csv/index.js';

export interface BenchRow {
  benchmark: string;
  metric: string;
  value: number;
  unit: string;
  note?: string;
}

export interface BenchOptions {
  /** Smaller sizes for a quick look (`npm run bench -- --quick`). */
  quick: boolean;
  /** Folder for temporary data. */
  workDir: string;
  /** Rows (persons) to measure at, for a bench that takes a size (`--rows 200000`). */
  rows?: number | undefined;
  /** Rounds of alternated measurements (`--rounds 5`). */
  rounds?: number | undefined;
  /** The CLI of the build to measure (`--cli /path/to/dist/src/cli/main.js`), default this one's. */
  cli?: string | undefined;
  /** Record the figures as the new baseline instead of judging them (`--record`: the guard). */
  record?: boolean | undefined;
}

export type BenchModule = { title: string; run(options: BenchOptions): Promise<BenchRow[]> };

/**
 * Peak RSS of a child process, sampled from /proc (Linux) every `everyMs`, and its CPU seconds
 * as last sampled (so up to `everyMs` short once the process has exited).
 */
export function samplePeakRss(pid: number, everyMs = 100): { stop(): number; cpuSeconds(): number } {
  let peak = 0;
  let cpu = 0;
  const read = async () => {
    try {
      const { readFile } = await import('node:fs/promises');
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const m = /VmRSS:\s+(\d+) kB/.exec(status);
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
      cpu = await cpuSeconds(pid);
    } catch {
      /* process gone */
    }
  };
  const timer = setInterval(() => void read(), everyMs);
  void read();
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
    cpuSeconds: () => cpu,
  };
}

export function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

/** User + system CPU seconds of a process so far (Linux /proc): on a shared machine, the fairer figure. */
export async function cpuSeconds(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
}

/** A child process run to its end: wall time, exit code, stdout (when piped), peak RSS and CPU seconds. */
export function runChild(
  cmd: string,
  args: string[],
  options: { cwd?: string; stdout?: 'ignore' | 'pipe' } = {},
): Promise<{ ms: number; code: number | null; out: string; peakRss: number; cpu: number }> {
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stdio: ['ignore', options.stdout ?? 'ignore', 'inherit'],
    });
    const rss = samplePeakRss(child.pid!, 50);
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const cpu = rss.cpuSeconds();
      resolveRun({ ms: performance.now() - started, code, out, peakRss: rss.stop(), cpu });
    });
  });
}

/**
 * stagecoach's own CSV reader alone on the generated persons (src/pipeline/source/csv/:
 * plain lines split natively, csv-parse from a line that is not plain), without row hashes.
 */
export async function csvReaderAlone(file: string): Promise<{ rows: number; ms: number }> {
  const started = performance.now();
  let rows = 0;
  const batches = readCsvBatches({
    source: 'bench',
    path: file,
    file,
    encoding: 'utf-8',
    csv: { delimiter: ';', quote: '"', header: true },
    hashRows: false,
  });
  for await (const batch of batches) rows += batch.length;
  return { rows, ms: performance.now() - started };
}

/** The floor the pipeline benchmarks compare with: csv-parse alone on the generated persons. */
export async function csvParseAlone(file: string): Promise<{ rows: number; ms: number }> {
  const started = performance.now();
  let rows = 0;
  for await (const _record of createReadStream(file).pipe(parse({ delimiter: ';', columns: true, relax_column_count: true }))) rows++;
  return { rows, ms: performance.now() - started };
}
