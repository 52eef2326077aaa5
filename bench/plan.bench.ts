/**
 * `plan` speed: the front half of the pipeline (parse, map, check; no network) on generated
 * persons, against two floors measured on the same file in the same run: csv-parse alone, and
 * Miller (`mlr --icsv --ojsonl --ifs ';' cat`) when installed. Target: plan at least half of
 * Miller's rate. Plan runs twice: with the generated pipeline (`concurrency.workers: auto`, big
 * CSV files read by worker threads beside the main thread) and on one thread. 1,000,000 persons
 * (100,000 with --quick).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvParseAlone, mb, runChild, type BenchOptions, type BenchRow } from './harness.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import { workerCount } from '../src/pipeline/parallel/read-parallel.js';

export const title = 'plan: parse, map and check without network';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');

const rate = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const persons = options.quick ? 100_000 : 1_000_000;
  const dir = join(options.workDir, 'crm');
  const rows: BenchRow[] = [];
  const gen = await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 5 });
  const file = join(dir, 'klanten.csv');
  const size = `${persons.toLocaleString('en')} persons, ${mb(gen.bytes)} MB`;

  const floor = await csvParseAlone(file);
  rows.push({ benchmark: title, metric: 'csv-parse alone (columns: true, relaxed)', value: rate(floor.rows, floor.ms), unit: 'rows/s', note: size });

  let mlrRate: number | undefined;
  // --allow-ragged-csv-input: the file has planted short rows, which Miller refuses otherwise
  const mlr = await runChild('mlr', ['--icsv', '--ojsonl', '--ifs', ';', '--allow-ragged-csv-input', 'cat', file]).catch(() => undefined);
  if (mlr && mlr.code !== 0) throw new Error(`mlr exited with ${mlr.code}`);
  if (mlr) {
    mlrRate = rate(persons, mlr.ms);
    rows.push({ benchmark: title, metric: 'mlr --icsv --ojsonl --ifs \';\' cat', value: mlrRate, unit: 'rows/s', note: size });
  } else {
    process.stderr.write('  note: mlr (Miller) is not installed: apt-get install -y miller to measure the floor\n');
    rows.push({ benchmark: title, metric: 'mlr --icsv --ojsonl --ifs \';\' cat', value: NaN, unit: 'rows/s', note: 'mlr not installed' });
  }

  // The pipeline as generated (concurrency.workers: auto), and the same read on one thread.
  const oneThread = join(dir, 'pipeline-one-thread.yaml');
  writeFileSync(oneThread, `${readFileSync(join(dir, 'pipeline.yaml'), 'utf8')}concurrency: { workers: 0 }\n`);
  let planRate = 0;
  for (const [label, file] of [[`workers auto (${workerCount('auto')} + main)`, join(dir, 'pipeline.yaml')], ['one thread (workers: 0)', oneThread]] as const) {
    const plan = await runChild(process.execPath, [CLI, 'plan', file, '--json'], { stdout: 'pipe' });
    if (plan.code !== 0) throw new Error(`plan exited with ${plan.code}`);
    const summary = JSON.parse(plan.out) as { rowsRead: number; rejected: number };
    const r = rate(summary.rowsRead, plan.ms);
    planRate ||= r;
    rows.push({ benchmark: title, metric: `plan, ${label}`, value: r, unit: 'rows/s', note: `${size}; ${summary.rejected} rejected; ${(plan.ms / 1000).toFixed(1)} s, ${plan.cpu.toFixed(1)} s CPU (2 passes, whole process)` });
    rows.push({ benchmark: title, metric: `plan peak RSS, ${label}`, value: mb(plan.peakRss), unit: 'MB' });
  }
  if (mlrRate) {
    const ratio = Math.round((planRate / mlrRate) * 100) / 100;
    rows.push({ benchmark: title, metric: 'plan / mlr', value: ratio, unit: '×', note: ratio >= 0.5 ? 'target ≥ 0.5 met' : 'target ≥ 0.5 NOT met' });
  }
  return rows;
}
