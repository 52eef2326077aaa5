/**
 * `stagecoach init` on a big export: sniffing, profiling every column of every row (through the
 * product's own CSV reader) and guessing the mapping, at 100,000 and 1,000,000 generated
 * persons (quick: 10,000 and 100,000), without the `plan` that init runs afterwards
 * (`--no-plan`: that is `plan`'s own bench). Target on the 2-core machine: 1,000,000 rows well
 * under a minute, with peak RSS flat between the sizes apart from the key candidates' sets.
 * Then the corpus of foreign exports (src/pipeline/samples/foreign/: UK/IE core banking, US CRM,
 * German latin-1, French/Belgian) at 100,000 rows each (quick: 10,000).
 */
import { join } from 'node:path';
import { mb, runChild, type BenchOptions, type BenchRow } from './harness.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import { generateForeignExport, type ForeignKind } from '../src/pipeline/samples/foreign/index.js';

const CORPUS: ForeignKind[] = ['uk-core-banking', 'us-crm', 'german-latin1', 'french-belgian'];

export const title = 'init: sniff, profile and guess a pipeline';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = options.quick ? [10_000, 100_000] : [100_000, 1_000_000];
  const rows: BenchRow[] = [];
  for (const persons of sizes) {
    const dir = join(options.workDir, `crm-${persons}`);
    const gen = await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 5 });
    const res = await runChild(process.execPath, [CLI, 'init', 'klanten.csv', '--out', 'gen', '--no-plan', '--json'], {
      cwd: dir,
      stdout: 'pipe',
    });
    if (res.code !== 0) throw new Error(`init exited with ${res.code}: ${res.out.slice(0, 300)}`);
    const size = `${persons.toLocaleString('en')} persons, ${mb(gen.bytes)} MB`;
    rows.push({
      benchmark: title,
      metric: `init, ${persons.toLocaleString('en')} rows`,
      value: Math.round(res.ms / 100) / 10,
      unit: 's',
      note: size,
    });
    rows.push({
      benchmark: title,
      metric: `init rate, ${persons.toLocaleString('en')}`,
      value: Math.round(persons / (res.ms / 1000)),
      unit: 'rows/s',
      note: `CPU ${res.cpu.toFixed(1)} s`,
    });
    rows.push({ benchmark: title, metric: `init peak RSS, ${persons.toLocaleString('en')}`, value: mb(res.peakRss), unit: 'MB' });
  }
  const corpusRows = options.quick ? 10_000 : 100_000;
  for (const kind of CORPUS) {
    const dir = join(options.workDir, `corpus-${kind}`);
    const exp = await generateForeignExport(kind, { out: join(dir, 'export'), rows: corpusRows, seed: 29 });
    const res = await runChild(process.execPath, [CLI, 'init', exp.files[0]!, '--out', 'gen', '--no-plan', '--json'], {
      cwd: dir,
      stdout: 'pipe',
    });
    if (res.code !== 0) throw new Error(`init on ${kind} exited with ${res.code}: ${res.out.slice(0, 300)}`);
    rows.push({
      benchmark: title,
      metric: `init ${kind}, ${corpusRows.toLocaleString('en')} rows`,
      value: Math.round(res.ms / 100) / 10,
      unit: 's',
      note: `${mb(exp.bytes)} MB, peak RSS ${mb(res.peakRss)} MB`,
    });
  }
  return rows;
}
