/**
 * `plan` speed: the front half of the pipeline (parse, map, check; no network) on generated
 * persons, against two floors measured on the same file in the same run: csv-parse alone (and,
 * for comparison, stagecoach's own CSV reader alone, which splits plain lines natively), and
 * Miller (`mlr --icsv --ojsonl --ifs ';' cat`) when installed. Target: plan at least 0.8 of
 * Miller's rate (issue 44). Miller and `plan` with the generated pipeline (`concurrency.workers: auto`, big
 * CSV files read by worker threads beside the main thread) alternate in three rounds (one with
 * --quick), and the ratio is the median of the rounds' ratios; then `plan` on one thread, once.
 * 1,000,000 persons (100,000 with --quick).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvParseAlone, csvReaderAlone, mb, runChild, type BenchOptions, type BenchRow } from './harness.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import { workerCount } from '../src/pipeline/parallel/read-parallel.js';

export const title = 'plan: parse, map and check without network';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');

const rate = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

/** `plan` over Miller's rate, side by side in one run (issue 44; it was 0.5 before). */
const PLAN_TARGET = 0.8;

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const persons = options.quick ? 100_000 : 1_000_000;
  const dir = join(options.workDir, 'crm');
  const rows: BenchRow[] = [];
  const gen = await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 5 });
  const file = join(dir, 'klanten.csv');
  const size = `${persons.toLocaleString('en')} persons, ${mb(gen.bytes)} MB`;

  const floor = await csvParseAlone(file);
  rows.push({
    benchmark: title,
    metric: 'csv-parse alone (columns: true, relaxed)',
    value: rate(floor.rows, floor.ms),
    unit: 'rows/s',
    note: size,
  });
  const reader = await csvReaderAlone(file);
  rows.push({
    benchmark: title,
    metric: 'stagecoach CSV reader alone (plain lines natively)',
    value: rate(reader.rows, reader.ms),
    unit: 'rows/s',
    note: size,
  });

  // Miller and `plan` (workers auto) in alternating rounds, so that both meet the machine in the
  // same mood: its speed moves by a quarter within minutes, and one run of each, minutes apart,
  // put the ratio anywhere between 0.40 and 0.52 for the same build. The ratio reported is the
  // median of the rounds' ratios; every round's figures are in the notes.
  const rounds = options.quick ? 1 : 3;
  const mlrRates: number[] = [];
  const planRuns: { rate: number; ms: number; cpu: number; peakRss: number; rejected: number }[] = [];
  const autoLabel = `workers auto (${workerCount('auto')} + main)`;
  for (let round = 0; round < rounds; round++) {
    // --allow-ragged-csv-input: the file has planted short rows, which Miller refuses otherwise
    const mlr = await runChild('mlr', ['--icsv', '--ojsonl', '--ifs', ';', '--allow-ragged-csv-input', 'cat', file]).catch(() => undefined);
    if (mlr && mlr.code !== 0) throw new Error(`mlr exited with ${mlr.code}`);
    if (mlr) mlrRates.push(rate(persons, mlr.ms));
    planRuns.push(await planOnce(join(dir, 'pipeline.yaml')));
  }
  const list = (values: number[]) => values.map((v) => v.toLocaleString('en')).join(' / ');
  if (mlrRates.length > 0) {
    rows.push({
      benchmark: title,
      metric: "mlr --icsv --ojsonl --ifs ';' cat",
      value: median(mlrRates),
      unit: 'rows/s',
      note: `${size}; median of ${list(mlrRates)}`,
    });
  } else {
    process.stderr.write('  note: mlr (Miller) is not installed: apt-get install -y miller to measure the floor\n');
    rows.push({ benchmark: title, metric: "mlr --icsv --ojsonl --ifs ';' cat", value: NaN, unit: 'rows/s', note: 'mlr not installed' });
  }
  const planNote = (runs: typeof planRuns) =>
    `${size}; ${runs[0]!.rejected} rejected; ${runs.map((r) => `${(r.ms / 1000).toFixed(1)} s, ${r.cpu.toFixed(1)} s CPU`).join(' / ')} (2 passes, whole process)`;
  rows.push({
    benchmark: title,
    metric: `plan, ${autoLabel}`,
    value: median(planRuns.map((r) => r.rate)),
    unit: 'rows/s',
    note: `${planNote(planRuns)}${rounds > 1 ? `; median of ${list(planRuns.map((r) => r.rate))}` : ''}`,
  });
  rows.push({
    benchmark: title,
    metric: `plan peak RSS, ${autoLabel}`,
    value: mb(Math.max(...planRuns.map((r) => r.peakRss))),
    unit: 'MB',
  });

  // The same read on one thread, once.
  const oneThread = join(dir, 'pipeline-one-thread.yaml');
  writeFileSync(oneThread, `${readFileSync(join(dir, 'pipeline.yaml'), 'utf8')}concurrency: { workers: 0 }\n`);
  const single = await planOnce(oneThread);
  rows.push({ benchmark: title, metric: 'plan, one thread (workers: 0)', value: single.rate, unit: 'rows/s', note: planNote([single]) });
  rows.push({ benchmark: title, metric: 'plan peak RSS, one thread (workers: 0)', value: mb(single.peakRss), unit: 'MB' });

  if (mlrRates.length === planRuns.length) {
    const ratios = planRuns.map((r, i) => Math.round((r.rate / mlrRates[i]!) * 100) / 100);
    const ratio = median(ratios);
    rows.push({
      benchmark: title,
      metric: 'plan / mlr',
      value: ratio,
      unit: '×',
      note: `${ratio >= PLAN_TARGET ? `target ≥ ${PLAN_TARGET} met` : `target ≥ ${PLAN_TARGET} NOT met`}${rounds > 1 ? `; median of the rounds' ${ratios.join(' / ')}` : ''}`,
    });
  }
  return rows;
}

/** One `plan` of the file, as a child process: rows/s, wall, CPU, peak RSS. */
async function planOnce(pipeline: string): Promise<{ rate: number; ms: number; cpu: number; peakRss: number; rejected: number }> {
  const plan = await runChild(process.execPath, [CLI, 'plan', pipeline, '--json'], { stdout: 'pipe' });
  if (plan.code !== 0) throw new Error(`plan exited with ${plan.code}`);
  const summary = JSON.parse(plan.out) as { rowsRead: number; rejected: number };
  return { rate: rate(summary.rowsRead, plan.ms), ms: plan.ms, cpu: plan.cpu, peakRss: plan.peakRss, rejected: summary.rejected };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
