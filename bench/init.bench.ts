/**
 * `stagecoach init` on a big export: sniffing, profiling every column of every row (through the
 * product's own CSV reader) and guessing the mapping, at 100,000 and 1,000,000 generated
 * persons (quick: 10,000 and 100,000), without the `plan` that init runs afterwards
 * (`--no-plan`: that is `plan`'s own bench). Target on the 2-core machine: 1,000,000 rows well
 * under a minute, with peak RSS flat between the sizes apart from the key candidates' sets.
 */
import { join } from 'node:path';
import { mb, runChild, type BenchOptions, type BenchRow } from './harness.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';

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
  return rows;
}
