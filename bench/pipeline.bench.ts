/**
 * The whole pipeline: `stagecoach run` (CSV → map → check → ledger → json-seq batches → four
 * uploads in flight → results → ledger) against the embedded service, both in child processes
 * so each one's peak RSS is its own, at 100,000 and 1,000,000 generated persons (quick: 10,000
 * and 100,000). On the same file in the same run: the floor, csv-parse alone. Targets on the
 * 2-core machine: 1,000,000 staged in under 45 s (≥ a fifth of the floor), client RSS under
 * 256 MB (Node's default heap settings) and within 20% between the two sizes. At the larger size, a run killed at half of the
 * clean run's time and then resumed: both runs together within 1.1× the clean run. At the larger
 * size too: what the phone step (libphonenumber-js) costs `run`, against the same mapping without
 * it, in alternated pairs (issue 29's budget: at most 10%).
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvParseAlone, mb, runChild, samplePeakRss, type BenchOptions, type BenchRow } from './harness.js';
import { spawnService } from './counterparty-stream.bench.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import type { RunReport } from '../src/pipeline/runner/index.js';

export const title = 'pipeline run (CSV to staging, ledger, 4 in flight)';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');

/** `stagecoach run` in the samples folder; wall time, its report and its peak RSS. */
async function runCli(
  dir: string,
  url: string,
  extra: string[] = [],
  pipeline = 'pipeline.yaml',
): Promise<{ ms: number; report: RunReport; peakRss: number; cpu: number }> {
  const res = await runChild(process.execPath, [CLI, 'run', pipeline, '--json', '--base-url', url, '--log-level', 'warn', ...extra], {
    cwd: dir,
    stdout: 'pipe',
  });
  try {
    return { ...res, report: JSON.parse(res.out) as RunReport };
  } catch {
    throw new Error(`run exited with ${res.code} without a report: ${res.out.slice(0, 500)}`);
  }
}

const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));

/** `stagecoach run` killed (SIGKILL) after `afterMs`; the milliseconds it ran. */
function killedRun(dir: string, url: string, ledger: string, afterMs: number): Promise<number> {
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [CLI, 'run', 'pipeline.yaml', '--json', '--base-url', url, '--ledger', ledger, '--log-level', 'warn'],
      {
        cwd: dir,
        stdio: 'ignore',
      },
    );
    const timer = setTimeout(() => child.kill('SIGKILL'), afterMs);
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`the run to kill ended by itself (${signal ?? 'exit'}) before ${afterMs} ms`));
      else resolveRun(performance.now() - started);
    });
  });
}

/** Rounds of kill at half + resume, each paired with a clean run of its own: the machine's speed drifts by 15% within a minute. */
const RESUME_ROUNDS = 3;

/**
 * `fn` against a service of its own, started on a fresh database. The runs before left hundreds
 * of MB of dirty pages: they are written back first, not during the run to be measured.
 */
async function onFreshService<T>(workDir: string, name: string, fn: (url: string) => Promise<T>): Promise<T> {
  const service = await spawnService(join(workDir, name));
  execFileSync('sync');
  try {
    return await fn(service.url);
  } finally {
    await service.stop();
  }
}

/** One round: `run` on a fresh service and ledger killed at half of `cleanMs`, then run again to the end. */
function killAndResumeOnce(dir: string, workDir: string, round: number, cleanMs: number) {
  return onFreshService(workDir, `service-resume-${round}`, async (url) => {
    const ledger = join(workDir, `resume-${round}.db`);
    const killedMs = await killedRun(dir, url, ledger, cleanMs / 2);
    const resumed = await runCli(dir, url, ['--ledger', ledger]);
    if (resumed.report.status !== 'completed' || !resumed.report.complete)
      throw new Error(`the resumed run ended ${resumed.report.status}`);
    return { ratio: (killedMs + resumed.ms) / cleanMs, killedMs, resumed };
  });
}

/** A clean run on a fresh service and ledger: its wall time. */
function cleanRun(dir: string, workDir: string, round: number): Promise<number> {
  return onFreshService(workDir, `service-clean-${round}`, async (url) => {
    const clean = await runCli(dir, url, ['--ledger', join(workDir, `clean-${round}.db`)]);
    if (clean.report.status !== 'completed') throw new Error(`the clean run ended ${clean.report.status}`);
    return clean.ms;
  });
}

/**
 * Kill at half + resume: in each round a clean run (the first round's is the one measured above),
 * then on a fresh service and ledger `run` killed at half of that clean run's time and run again
 * to the end. The figure is both runs' wall time over the clean run's, the median of the rounds.
 */
async function killAndResume(dir: string, workDir: string, persons: number, firstCleanMs: number): Promise<BenchRow> {
  const rounds: Array<Awaited<ReturnType<typeof killAndResumeOnce>> & { cleanMs: number }> = [];
  for (let round = 0; round < RESUME_ROUNDS; round++) {
    const cleanMs = round === 0 ? firstCleanMs : await cleanRun(dir, workDir, round);
    rounds.push({ ...(await killAndResumeOnce(dir, workDir, round, cleanMs)), cleanMs });
  }
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const ratio = Math.round(median.ratio * 100) / 100;
  const r = median.resumed.report.resume;
  const s = (ms: number) => (ms / 1000).toFixed(1);
  return {
    benchmark: title,
    metric: `kill at half + resume, ${persons.toLocaleString('en')}`,
    value: ratio,
    unit: '× clean',
    note: `median of ${rounds.map((x) => x.ratio.toFixed(2)).join(' / ')}; that round: ${s(median.killedMs)} s killed + ${s(median.resumed.ms)} s resumed against ${s(median.cleanMs)} s clean (${r.mode}${r.line ? ` at line ${r.line.toLocaleString('en')}` : ''}, ${median.resumed.report.rowsRead.toLocaleString('en')} rows read); ${ratio <= 1.1 ? 'target ≤ 1.1 met' : 'target ≤ 1.1 NOT met'}`,
  };
}

/** The generated mapping's phone step, as generate-samples writes it. */
const PHONE_STEP = 'transforms: [{ phone: { region: NL, check: possible } }]';

/**
 * A copy of the generated pipeline whose persons mapping has no phone step (the number is staged
 * as written, trimmed), everything else the same: the baseline of the phone step's cost.
 */
function pipelineWithoutPhone(dir: string): string {
  const mapping = readFileSync(join(dir, 'mappings', 'crm-persons.yaml'), 'utf8');
  if (!mapping.includes(PHONE_STEP)) throw new Error(`the generated persons mapping no longer holds ${PHONE_STEP}: update the bench`);
  writeFileSync(join(dir, 'mappings', 'crm-persons-no-phone.yaml'), mapping.replace(PHONE_STEP, 'transforms: [trim]'));
  const pipeline = readFileSync(join(dir, 'pipeline.yaml'), 'utf8');
  writeFileSync(join(dir, 'pipeline-no-phone.yaml'), pipeline.replace('mappings/crm-persons.yaml', 'mappings/crm-persons-no-phone.yaml'));
  return 'pipeline-no-phone.yaml';
}

/** Pairs of runs, without the phone step and with it, each on a fresh service and ledger. */
const PHONE_ROUNDS = 3;

/**
 * What the phone step costs `run`: in each round the mapping without it and then with it, each
 * on a fresh service and ledger; the figure is the median of the rounds' wall-time ratios, the
 * client's CPU ratios beside it (on 2 cores shared with the service, wall time follows both).
 */
async function phoneCost(dir: string, workDir: string, persons: number): Promise<BenchRow> {
  const without = pipelineWithoutPhone(dir);
  const rounds: { wall: number; cpu: number; withMs: number; withoutMs: number; withRss: number; withoutRss: number }[] = [];
  for (let round = 0; round < PHONE_ROUNDS; round++) {
    const once = (pipeline: string, name: string) =>
      onFreshService(workDir, `service-${name}-${round}`, async (url) => {
        const res = await runCli(dir, url, ['--ledger', join(workDir, `${name}-${round}.db`)], pipeline);
        if (res.report.status !== 'completed') throw new Error(`the run ${name} ended ${res.report.status}`);
        return res;
      });
    const a = await once(without, 'no-phone');
    const b = await once('pipeline.yaml', 'phone');
    if (a.report.staged !== b.report.staged)
      throw new Error(`with and without the phone step staged ${b.report.staged} and ${a.report.staged}`);
    rounds.push({ wall: b.ms / a.ms, cpu: b.cpu / a.cpu, withMs: b.ms, withoutMs: a.ms, withRss: b.peakRss, withoutRss: a.peakRss });
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const wall = Math.round((median(rounds.map((r) => r.wall)) - 1) * 1000) / 10;
  const cpu = Math.round((median(rounds.map((r) => r.cpu)) - 1) * 1000) / 10;
  const s = (ms: number) => (ms / 1000).toFixed(1);
  return {
    benchmark: title,
    metric: `phone step's cost in run, ${persons.toLocaleString('en')}`,
    value: wall,
    unit: '% wall',
    note: `client CPU +${cpu}%; median of ${PHONE_ROUNDS} alternated pairs, wall ${rounds.map((r) => `${s(r.withMs)}/${s(r.withoutMs)} s`).join(', ')} with/without; client peak RSS ${mb(median(rounds.map((r) => r.withRss)))}/${mb(median(rounds.map((r) => r.withoutRss)))} MB with/without; ${wall <= 10 ? 'budget ≤ 10% met' : 'budget ≤ 10% NOT met'}`,
  };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = options.quick ? [10_000, 100_000] : [100_000, 1_000_000];
  const rows: BenchRow[] = [];
  const clientRss: number[] = [];
  for (const persons of sizes) {
    const dir = join(options.workDir, `crm-${persons}`);
    const gen = await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 5 });
    appendFileSync(join(dir, 'pipeline.yaml'), 'batching: { records: 2000, bytes: 4194304 }\nconcurrency: { inFlight: 4 }\n');
    const size = `${persons.toLocaleString('en')} persons, ${mb(gen.bytes)} MB`;

    const alone = await csvParseAlone(join(dir, 'klanten.csv'));
    const floor = alone.rows / (alone.ms / 1000);
    rows.push({
      benchmark: title,
      metric: `csv-parse alone, ${persons.toLocaleString('en')}`,
      value: Math.round(floor),
      unit: 'rows/s',
      note: 'the floor, same file',
    });

    const service = await spawnService(join(options.workDir, `service-${persons}`));
    const serviceRss = samplePeakRss(service.pid, 50);
    try {
      const { ms, report, peakRss, cpu } = await runCli(dir, service.url);
      const serviceCpu = serviceRss.cpuSeconds();
      const svcPeak = serviceRss.stop();
      if (report.status !== 'completed' || !report.complete)
        throw new Error(`run ended ${report.status}${report.error ? `: ${report.error.code} ${report.error.message}` : ''}`);
      clientRss.push(peakRss);
      const staged = report.staged;
      const wallRate = rate(staged, ms);
      rows.push({
        benchmark: title,
        metric: `staged, ${persons.toLocaleString('en')}`,
        value: wallRate,
        unit: 'records/s',
        note: `${size}; ${staged.toLocaleString('en')} staged, ${report.rejected} rejected in ${(ms / 1000).toFixed(1)} s whole process (${(report.durationMs / 1000).toFixed(1)} s in the run); ${Math.round((wallRate / floor) * 100)}% of the floor`,
      });
      rows.push({
        benchmark: title,
        metric: `client peak RSS, ${persons.toLocaleString('en')}`,
        value: mb(peakRss),
        unit: 'MB',
        note: peakRss <= 256 * 1024 * 1024 ? 'target ≤ 256 MB met' : 'target ≤ 256 MB NOT met',
      });
      rows.push({ benchmark: title, metric: `service peak RSS, ${persons.toLocaleString('en')}`, value: mb(svcPeak), unit: 'MB' });
      // Where the 2 cores go: client and service CPU per record read (wall time hides which side bounds the run).
      const perRecord = (seconds: number) => Math.round((seconds / report.rowsRead) * 1e7) / 10;
      rows.push({
        benchmark: title,
        metric: `client CPU per record, ${persons.toLocaleString('en')}`,
        value: perRecord(cpu),
        unit: 'µs',
        note: `${cpu.toFixed(1)} s CPU, all threads`,
      });
      rows.push({
        benchmark: title,
        metric: `service CPU per record, ${persons.toLocaleString('en')}`,
        value: perRecord(serviceCpu),
        unit: 'µs',
        note: `${serviceCpu.toFixed(1)} s CPU; together ${((cpu + serviceCpu) / 2).toFixed(1)} s of both cores`,
      });
      if (persons === sizes.at(-1)) {
        rows.push(await killAndResume(dir, options.workDir, persons, ms));
        rows.push(await phoneCost(dir, options.workDir, persons));
      }
      if (persons === 1_000_000) {
        rows.push({
          benchmark: title,
          metric: '1,000,000 staged in',
          value: Math.round(ms / 100) / 10,
          unit: 's',
          note: ms < 45_000 ? 'target < 45 s met' : 'target < 45 s NOT met',
        });
      }
    } finally {
      serviceRss.stop();
      await service.stop();
    }
  }
  if (clientRss.length === 2) {
    // Judged on the unrounded ratio: 20.4% is over a 20% target, though it prints as 20.
    const growth = (clientRss[1]! / clientRss[0]! - 1) * 100;
    rows.push({
      benchmark: title,
      metric: 'client RSS growth, small → large',
      value: Math.round(growth * 10) / 10,
      unit: '%',
      note: Math.abs(growth) <= 20 ? 'target within 20% met' : 'target within 20% NOT met',
    });
  }
  return rows;
}
