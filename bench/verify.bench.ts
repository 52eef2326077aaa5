/**
 * `stagecoach verify` after a whole migration of generated persons, against the embedded
 * service in a child process: the `run` that staged them is timed, the chain is driven to the
 * import (`migrate --no-verify`, not timed), then `verify` is timed with its peak RSS. On a clean
 * migration every record is proven by hash (the stream and the ledger, no export read); the note
 * says how many were, and how many were compared field by field with the export instead. The
 * issue's target: verification takes no longer than the run that staged the records, in
 * bounded memory (its peak RSS should not grow with the records). 100,000 persons (quick:
 * 10,000); VERIFY_BENCH_PERSONS=1000000 for the large size on a quiet machine.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { mb, runChild, type BenchOptions, type BenchRow } from './harness.js';
import { spawnService } from './counterparty-stream.bench.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import type { VerificationReport } from '../src/reconcile/verify/index.js';

export const title = 'verify (stream, prove by hash; the export rebuilt and compared only for what the proof leaves)';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = process.env.VERIFY_BENCH_PERSONS ? [Number(process.env.VERIFY_BENCH_PERSONS)] : options.quick ? [10_000] : [100_000];
  const rows: BenchRow[] = [];
  for (const persons of sizes) {
    const dir = join(options.workDir, `crm-${persons}`);
    await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 5 });
    appendFileSync(join(dir, 'pipeline.yaml'), 'batching: { records: 2000, bytes: 4194304 }\nconcurrency: { inFlight: 4 }\n');
    const service = await spawnService(join(options.workDir, `service-${persons}`));
    const cli = (args: string[]) =>
      runChild(process.execPath, [CLI, ...args, '--base-url', service.url, '--ledger', join(dir, 'ledger.db')], {
        cwd: dir,
        stdout: 'pipe',
      });
    try {
      const staged = await cli(['run', 'pipeline.yaml', '--json', '--log-level', 'warn']);
      if (staged.code !== 0) throw new Error(`run exited ${staged.code}`);
      const chain = await cli(['migrate', 'pipeline.yaml', '--no-verify', '--drop-invalid', '--json', '--out', join(dir, 'report')]);
      if (chain.code !== 0) throw new Error(`migrate exited ${chain.code}: ${chain.out.slice(0, 300)}`);
      const verified = await cli(['verify', '--json', '--out', join(dir, 'verified')]);
      const v = JSON.parse(verified.out) as VerificationReport;
      if (!v.passed) throw new Error(`verify did not pass on a clean migration: ${v.problems.join('; ')}`);
      const n = persons.toLocaleString('en');
      const s = (ms: number) => (ms / 1000).toFixed(1);
      rows.push({
        benchmark: title,
        metric: `verified, ${n}`,
        value: Math.round(v.imported / (verified.ms / 1000)),
        unit: 'records/s',
        note: `${v.identical.toLocaleString('en')} of ${v.imported.toLocaleString('en')} identical (${v.proven.toLocaleString('en')} proven by hash, ${v.compared.toLocaleString('en')} compared) in ${s(verified.ms)} s whole process against ${s(staged.ms)} s for the run that staged them: ${verified.ms <= staged.ms ? 'target ≤ the run met' : 'target ≤ the run NOT met'}`,
      });
      rows.push({
        benchmark: title,
        metric: `verify / run, ${n}`,
        value: Math.round((verified.ms / staged.ms) * 100) / 100,
        unit: '×',
        note: `CPU ${verified.cpu.toFixed(1)} s verify, ${staged.cpu.toFixed(1)} s run`,
      });
      rows.push({
        benchmark: title,
        metric: `verify peak RSS, ${n}`,
        value: mb(verified.peakRss),
        unit: 'MB',
        note: `run: ${mb(staged.peakRss)} MB`,
      });
    } finally {
      await service.stop();
    }
  }
  return rows;
}
