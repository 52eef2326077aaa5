/**
 * The release guard (`npm run bench -- guard`): the key figures of a release — `plan`, `run`,
 * `init`, `verify`, a killed-and-resumed run, and the peak RSS of the client and the service —
 * each as a ratio to a floor measured in the same round on the same file (csv-parse reading it
 * into objects, a process of its own: guard-judge.ts), so that another machine's speed, or this
 * one's load, cancels out. Times are CPU seconds (user + system, every thread), which a shared
 * machine disturbs far less than wall time; the resume figure is over a clean run's. Each figure
 * is the median of its rounds, printed beside the stored baseline of the last release
 * (bench/baseline.json); the guard exits 1 when one falls by more than 10%, when the baseline is
 * not of package.json's version, or when it holds no figures at the size measured.
 *
 * Options: --rows N (default 200,000, the size the baseline holds; --quick 100,000), --rounds N
 * (default 3), --cli PATH (the build to measure, default this one's dist/src/cli/main.js), --record
 * (write the medians into bench/baseline.json instead of judging; only for a release, with a
 * CHANGELOG line saying why). A baseline that cannot be judged against stops the guard at once.
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { baselineProblem, judgeFigures, renderVerdicts, type GuardBaseline, type GuardFigure } from './guard-judge.js';
import { cpuSeconds, mb, runChild, samplePeakRss, type BenchOptions, type BenchRow } from './harness.js';
import { spawnService } from './counterparty-stream.bench.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';

export const title = 'guard: key figures as ratios to their floors, against the last release';

const REPO = join(import.meta.dirname, '..', '..');
const BASELINE = join(REPO, 'bench', 'baseline.json');
const OWN_CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');
const FLOOR = join(import.meta.dirname, 'csv-parse-floor.js');
/** A few minutes on a quiet machine, and the size bench/baseline.json holds. */
const DEFAULT_ROWS = 200_000;

/** One process's accounting: wall ms, CPU seconds (every thread), peak RSS bytes. */
interface Cost {
  ms: number;
  cpu: number;
  peakRss: number;
}

/** What one round measured, each beside the floor measured just before it. */
interface Round {
  plan: { floor: Cost; plan: Cost };
  init: { floor: Cost; init: Cost };
  run: { floor: Cost; client: Cost; serviceCpu: number; servicePeak: number; staged: number; verify: Cost };
  resume: { clean: number; killedAndResumed: number };
}

/** A command of the measured build, in the samples folder; fails on a non-zero exit. */
async function cli(cliPath: string, dir: string, args: string[]): Promise<Cost & { out: string }> {
  const res = await runChild(process.execPath, [cliPath, ...args], { cwd: dir, stdout: 'pipe' });
  if (res.code !== 0) throw new Error(`${args.slice(0, 2).join(' ')} exited with ${res.code}: ${res.out.slice(0, 300)}`);
  return res;
}

async function floor(file: string): Promise<Cost> {
  const res = await runChild(process.execPath, [FLOOR, file], { stdout: 'pipe' });
  if (res.code !== 0) throw new Error(`the csv-parse floor exited with ${res.code}`);
  return res;
}

/** `run` on a fresh service and ledger (the service's CPU and peak beside it), then `migrate` (not timed) and `verify`. */
async function runAndVerify(cliPath: string, dir: string, workDir: string, round: number): Promise<Round['run']> {
  const service = await spawnService(join(workDir, `service-${round}`), [], cliPath);
  execFileSync('sync'); // the rounds before left dirty pages: written back now, not during the run
  const serviceRss = samplePeakRss(service.pid, 50);
  const ledger = ['--base-url', service.url, '--ledger', join(workDir, `ledger-${round}.db`)];
  try {
    const f = await floor(join(dir, 'klanten.csv'));
    const cpuBefore = await cpuSeconds(service.pid);
    const client = await cli(cliPath, dir, ['run', 'pipeline.yaml', '--json', '--log-level', 'warn', ...ledger]);
    const serviceCpu = (await cpuSeconds(service.pid)) - cpuBefore;
    const servicePeak = serviceRss.stop();
    const report = JSON.parse(client.out) as { status: string; staged: number };
    if (report.status !== 'completed') throw new Error(`run ended ${report.status}`);
    await cli(cliPath, dir, [
      'migrate',
      'pipeline.yaml',
      '--no-verify',
      '--drop-invalid',
      '--json',
      '--out',
      join(workDir, `report-${round}`),
      ...ledger,
    ]);
    const verify = await cli(cliPath, dir, ['verify', '--json', '--out', join(workDir, `verified-${round}`), ...ledger]);
    if (!(JSON.parse(verify.out) as { passed: boolean }).passed) throw new Error('verify did not pass on a clean migration');
    return { floor: f, client, serviceCpu, servicePeak, staged: report.staged, verify };
  } finally {
    serviceRss.stop();
    await service.stop();
  }
}

/**
 * On a fresh service and ledger, `run` killed (SIGKILL) at half of the clean run's wall time and
 * run again to the end: both runs' CPU, the client's and the service's, over the clean run's.
 */
async function killAndResume(cliPath: string, dir: string, workDir: string, round: number, clean: Round['run']): Promise<Round['resume']> {
  const service = await spawnService(join(workDir, `service-resume-${round}`), [], cliPath);
  execFileSync('sync');
  const args = [
    'run',
    'pipeline.yaml',
    '--json',
    '--log-level',
    'warn',
    '--base-url',
    service.url,
    '--ledger',
    join(workDir, `resume-${round}.db`),
  ];
  try {
    const serviceBefore = await cpuSeconds(service.pid);
    const killedCpu = await new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, [cliPath, ...args], { cwd: dir, stdio: 'ignore' });
      const sampled = samplePeakRss(child.pid!, 50);
      const timer = setTimeout(() => child.kill('SIGKILL'), clean.client.ms / 2);
      child.on('error', reject);
      child.on('exit', (_code, signal) => {
        clearTimeout(timer);
        sampled.stop();
        if (signal !== 'SIGKILL') reject(new Error(`the run to kill ended by itself before ${Math.round(clean.client.ms / 2)} ms`));
        else resolve(sampled.cpuSeconds());
      });
    });
    const resumed = await cli(cliPath, dir, args);
    const report = JSON.parse(resumed.out) as { status: string; complete: boolean };
    if (report.status !== 'completed' || !report.complete) throw new Error(`the resumed run ended ${report.status}`);
    const serviceCpu = (await cpuSeconds(service.pid)) - serviceBefore;
    return { clean: clean.client.cpu + clean.serviceCpu, killedAndResumed: killedCpu + resumed.cpu + serviceCpu };
  } finally {
    await service.stop();
  }
}

async function measureRound(cliPath: string, dir: string, workDir: string, round: number): Promise<Round> {
  const file = join(dir, 'klanten.csv');
  const planFloor = await floor(file);
  const plan = await cli(cliPath, dir, ['plan', 'pipeline.yaml', '--json']);
  const initFloor = await floor(file);
  const init = await cli(cliPath, dir, ['init', 'klanten.csv', '--out', join(workDir, `init-${round}`), '--no-plan', '--force', '--json']);
  const run = await runAndVerify(cliPath, dir, workDir, round);
  const resume = await killAndResume(cliPath, dir, workDir, round, run);
  return { plan: { floor: planFloor, plan }, init: { floor: initFloor, init }, run, resume };
}

/** The guarded figures of one round. */
function figuresOf(r: Round): GuardFigure[] {
  const per = (f: Cost, x: Cost | number) => f.cpu / (typeof x === 'number' ? x : x.cpu);
  return [
    { name: 'plan', value: per(r.plan.floor, r.plan.plan), better: 'higher', what: 'floor CPU ÷ plan CPU' },
    { name: 'init', value: per(r.init.floor, r.init.init), better: 'higher', what: 'floor CPU ÷ init --no-plan CPU' },
    {
      name: 'run',
      value: per(r.run.floor, r.run.client.cpu + r.run.serviceCpu),
      better: 'higher',
      what: 'floor CPU ÷ (run CPU + service CPU)',
    },
    { name: 'verify', value: per(r.run.floor, r.run.verify), better: 'higher', what: 'floor CPU ÷ verify CPU' },
    {
      name: 'resume',
      value: r.resume.killedAndResumed / r.resume.clean,
      better: 'lower',
      what: 'killed at half + resumed ÷ clean, CPU of client and service',
    },
    { name: 'client peak RSS', value: r.run.client.peakRss / r.run.floor.peakRss, better: 'lower', what: 'run peak RSS ÷ floor peak RSS' },
    { name: 'service peak RSS', value: r.run.servicePeak / r.run.floor.peakRss, better: 'lower', what: 'serve peak RSS ÷ floor peak RSS' },
    { name: 'plan peak RSS', value: r.plan.plan.peakRss / r.plan.floor.peakRss, better: 'lower', what: 'plan peak RSS ÷ floor peak RSS' },
    { name: 'init peak RSS', value: r.init.init.peakRss / r.init.floor.peakRss, better: 'lower', what: 'init peak RSS ÷ floor peak RSS' },
  ];
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Per figure, the median of the rounds; every round's value follows its description (the spread). */
function medians(rounds: readonly GuardFigure[][]): GuardFigure[] {
  return rounds[0]!.map((f, i) => {
    const values = rounds.map((r) => r[i]!.value);
    const spread = rounds.length > 1 ? `; rounds ${values.map((v) => v.toFixed(3)).join(' / ')}` : '';
    return { ...f, value: median(values), what: `${f.what}${spread}` };
  });
}

/** Figures printed for reading, not guarded: the wall-time shares and absolute sizes. */
function readingRows(rounds: readonly Round[], rows: number): BenchRow[] {
  const m = (pick: (r: Round) => number) => median(rounds.map(pick));
  const rate = (n: number, ms: number) => n / (ms / 1000);
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const row = (metric: string, value: number, unit: string, note: string): BenchRow => ({ benchmark: title, metric, value, unit, note });
  return [
    row(
      'run records/s ÷ floor rows/s (wall)',
      r2(m((r) => rate(r.run.staged, r.run.client.ms) / rate(rows, r.run.floor.ms))),
      '×',
      'issue 44: ≥ 0.3 at 1,000,000',
    ),
    row('plan rows/s ÷ floor rows/s (wall)', r2(m((r) => r.plan.floor.ms / r.plan.plan.ms)), '×', 'not guarded'),
    row('init ÷ plan (CPU)', r2(m((r) => r.init.init.cpu / r.plan.plan.cpu)), '×', 'issue 44: ≤ 1'),
    row('client peak RSS', mb(m((r) => r.run.client.peakRss)), 'MB', 'not guarded as such: as a ratio to the floor'),
    row('service peak RSS', mb(m((r) => r.run.servicePeak)), 'MB', 'not guarded as such: as a ratio to the floor'),
    row('init peak RSS', mb(m((r) => r.init.init.peakRss)), 'MB', 'issue 44: ≤ 300 MB at 100,000'),
    row(
      'floor',
      Math.round(m((r) => rate(rows, r.plan.floor.ms))),
      'rows/s',
      `csv-parse objects, CPU ${m((r) => r.plan.floor.cpu).toFixed(2)} s`,
    ),
  ];
}

function readBaseline(): GuardBaseline | undefined {
  return existsSync(BASELINE) ? (JSON.parse(readFileSync(BASELINE, 'utf8')) as GuardBaseline) : undefined;
}

function buildOf(cliPath: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: join(cliPath, '..'), encoding: 'utf8' }).trim();
  } catch {
    return 'unknown build';
  }
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const rows = options.rows ?? (options.quick ? 100_000 : DEFAULT_ROWS);
  const rounds = options.rounds ?? 3;
  const cliPath = options.cli ?? OWN_CLI;
  const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  const baseline = readBaseline();
  const problem = options.record ? undefined : baselineProblem(baseline, version, rows);
  // Minutes of measuring that could not be judged: said at once instead.
  if (problem) throw new Error(`the guard cannot judge: ${problem}`);

  const dir = join(options.workDir, 'crm');
  await generateCrmSamples({ out: dir, persons: rows, organisations: 0, seed: 42, defectsPer10k: 5 });
  appendFileSync(join(dir, 'pipeline.yaml'), 'batching: { records: 2000, bytes: 4194304 }\nconcurrency: { inFlight: 4 }\n');
  const measured: Round[] = [];
  for (let round = 0; round < rounds; round++) {
    measured.push(await measureRound(cliPath, dir, options.workDir, round));
    process.stderr.write(`  round ${round + 1} of ${rounds} done\n`);
  }
  const figures = medians(measured.map(figuresOf));
  const out: BenchRow[] = figures.map((f) => ({
    benchmark: title,
    metric: f.name,
    value: Math.round(f.value * 1000) / 1000,
    unit: '×',
    note: f.what,
  }));
  out.push(...readingRows(measured, rows));

  if (options.record) {
    const next: GuardBaseline = {
      version,
      recorded: `${new Date().toISOString()}, build ${buildOf(cliPath)}, ${rounds} rounds`,
      why: baseline?.version === version ? baseline.why : 'recorded for the release: say why in CHANGELOG.md',
      figures: {
        ...(baseline?.version === version ? baseline.figures : {}),
        [String(rows)]: Object.fromEntries(figures.map((f) => [f.name, f.value])),
      },
    };
    writeFileSync(BASELINE, `${JSON.stringify(next, null, 2)}\n`);
    process.stderr.write(
      `  baseline written to bench/baseline.json at ${rows.toLocaleString('en')} rows: add a CHANGELOG.md line saying why\n`,
    );
    return out;
  }
  const verdicts = judgeFigures(figures, baseline!.figures[String(rows)]);
  process.stderr.write(
    `  at ${rows.toLocaleString('en')} rows, median of ${rounds} rounds, against the baseline of ${baseline?.version ?? 'no release'}:\n`,
  );
  for (const line of renderVerdicts(verdicts)) process.stderr.write(`  ${line}\n`);
  const fell = verdicts.filter((v) => v.fell);
  if (fell.length > 0) {
    process.stderr.write(`  guard FAILED: ${fell.map((v) => v.figure.name).join(', ')} fell by more than 10%\n`);
    process.exitCode = 1;
  } else process.stderr.write('  guard passed: no figure fell by more than 10%\n');
  return out;
}
