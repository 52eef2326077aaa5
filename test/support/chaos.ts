/**
 * Test support for the reliability suites (test/reliability): the embedded service as a child
 * process that can be SIGKILLed and restarted on the same port and data folder, the real CLI
 * started and killed at a point chosen from its ledger, a read-only probe of that ledger, the
 * set of referenceIds the input must produce, and what the service holds afterwards (staged set,
 * its own log of every record it staged and imported, live counterparties, counters) compared
 * with that set: lost, duplicated, re-sent beyond the in-flight window.
 *
 * Sizes: each suite has a short form (in `npm test`) and a long form (`npm run soak`, which sets
 * STAGECOACH_SOAK=1); `soak(short, long)` picks one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import type { StagecoachClient } from '../../src/client/index.js';
import { loadPipeline, readPipeline } from '../../src/pipeline/read-pipeline.js';
import { CLI, ROOT } from './cli.js';
import { generateSamples, type Samples } from './pipeline-run.js';
import { identityKey } from '../../src/service/counterparties/store.js';

/** True under `npm run soak`: the suites run their long form. */
export const SOAK = process.env.STAGECOACH_SOAK === '1';

/** The short-form value in `npm test`, the long-form value under `npm run soak`. */
export function soak<T>(short: T, long: T): T {
  return SOAK ? long : short;
}

/** Test timeout for a suite's test: generous in the long form. */
export function suiteTimeout(shortMs: number, longMs = 45 * 60_000): number {
  return soak(shortMs, longMs);
}

/**
 * Appends one suite's figures as a JSON line to STAGECOACH_RELIABILITY_OUT (the soak runner's
 * figures file) and prints them, so a run leaves its numbers behind.
 */
export function reportFigures(suite: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ suite, form: SOAK ? 'long' : 'short', at: new Date().toISOString(), ...figures });
  const out = process.env.STAGECOACH_RELIABILITY_OUT;
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    appendFileSync(out, `${line}\n`);
  }
  process.stdout.write(`[reliability] ${line}\n`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A TCP port free on 127.0.0.1 right now (for a service that must come back on the same port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The service as a child process

export interface ServiceProcess {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Starts count: 1 after start, +1 per restart. */
  readonly starts: number;
  /** SIGKILLs the service and waits until the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder with the same arguments. */
  restart(): Promise<void>;
  /** Stops it with SIGTERM (graceful) and waits. */
  stop(): Promise<void>;
  /** What it wrote on stderr since the last start. */
  stderr(): string;
}

/**
 * `stagecoach serve --port <port> --data <dataDir> --log-level warn [args]` in a child process;
 * resolves once it printed its URL.
 * @example const svc = await startServiceProcess({ dataDir, args: ['--job-rate', '500'] }); await svc.kill(); await svc.restart();
 */
export async function startServiceProcess(opts: { dataDir: string; port?: number; args?: string[] }): Promise<ServiceProcess> {
  const port = opts.port ?? (await freePort());
  const args = ['serve', '--port', String(port), '--data', opts.dataDir, '--log-level', 'warn', ...(opts.args ?? [])];
  let child: ChildProcess | undefined;
  let err = '';
  let starts = 0;
  const launch = async (): Promise<void> => {
    // The port was just released by a killed process: a few tries cover a slow release.
    for (let attempt = 1; ; attempt++) {
      err = '';
      const c = spawn(process.execPath, [CLI, ...args], {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      c.stderr!.on('data', (d) => (err += d));
      const started = await new Promise<boolean>((resolve) => {
        let out = '';
        // Its log may come first (e.g. the warning that fault injection is on): wait for the URL line.
        c.stdout!.on('data', (d) => {
          out += d;
          if (/^http:\/\/\S+\n/m.test(out)) resolve(true);
        });
        c.once('exit', () => resolve(false));
      });
      if (started) {
        c.once('exit', (code, signal) => {
          if (signal !== 'SIGKILL' && signal !== 'SIGTERM') err += `\n[the service exited by itself: code ${code}, signal ${signal}]`;
        });
        child = c;
        starts++;
        return;
      }
      if (attempt >= 20 || !/EADDRINUSE/.test(err)) throw new Error(`the service did not start (attempt ${attempt}): ${err}`);
      await sleep(100);
    }
  };
  const gone = (c: ChildProcess) =>
    c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => c.once('exit', () => r()));
  await launch();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir: opts.dataDir,
    get starts() {
      return starts;
    },
    async kill() {
      const c = child!;
      c.kill('SIGKILL');
      await gone(c);
    },
    restart: launch,
    async stop() {
      const c = child!;
      c.kill('SIGTERM');
      await gone(c);
    },
    stderr: () => err,
  };
}

// ---------------------------------------------------------------------------------------------
// The CLI, killed at a chosen point

export interface CliRun {
  child: ChildProcess;
  /** Resolves when the process is gone. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  stderr(): string;
  running(): boolean;
}

/** Starts the compiled CLI with these arguments. */
export function spawnCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let alive = true;
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code, signal) => {
      alive = false;
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return { child, done, stderr: () => stderr, running: () => alive };
}

/**
 * Polls `reached` every `everyMs` while the CLI runs; SIGKILLs it as soon as `reached` is true.
 * Returns whether it was killed (false: it ended on its own first).
 */
export async function killWhen(run: CliRun, reached: () => boolean, everyMs = 15): Promise<boolean> {
  while (run.running()) {
    let hit = false;
    try {
      hit = reached();
    } catch {
      /* the ledger is not there yet */
    }
    if (hit && run.running()) {
      run.child.kill('SIGKILL');
      const res = await run.done;
      return res.signal === 'SIGKILL';
    }
    await sleep(everyMs);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The ledger, read-only

export interface LedgerState {
  /** Records per state (all pipelines). */
  records: Record<string, number>;
  /** Job rows, oldest first. */
  jobs: Array<{ kind: string; jobId: string; state: string }>;
}

/** The ledger's record counts and job rows, through a short read-only connection; undefined when the file is not there yet. */
export function readLedgerState(file: string): LedgerState | undefined {
  if (!existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 2000');
    // `records` is a view of record_rows since ledger version 4, a table before it.
    const hasTables = db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type IN ('table', 'view') AND name IN ('records', 'jobs')")
      .get() as {
      n: number;
    };
    if (hasTables.n < 2) return undefined;
    const records: Record<string, number> = {};
    for (const r of db.prepare('SELECT state, count(*) AS n FROM records GROUP BY state').all() as Array<{ state: string; n: number }>)
      records[r.state] = r.n;
    const jobs = db.prepare('SELECT kind, job_id AS jobId, state FROM jobs ORDER BY id').all() as LedgerState['jobs'];
    return { records, jobs };
  } finally {
    db.close();
  }
}

/** The referenceIds of the ledger's records in one state. */
export function ledgerIdsInState(file: string, state: string): string[] {
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare('SELECT reference_id AS id FROM records WHERE state = ? AND reference_id IS NOT NULL').all(state) as Array<{ id: string }>
    ).map((r) => r.id);
  } catch {
    return [];
  } finally {
    db.close();
  }
}

/** The distinct migrations the ledger's runs went into. */
export function ledgerMigrations(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare('SELECT DISTINCT migration_id AS id FROM runs WHERE migration_id IS NOT NULL ORDER BY id').all() as Array<{ id: string }>
    ).map((r) => r.id);
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check` of the ledger ('ok' when sound; 'missing' when no file yet). */
export function ledgerIntegrity(file: string): string {
  if (!existsSync(file)) return 'missing';
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

/** The newest job row of a kind, if any. */
export function latestJob(state: LedgerState | undefined, kind: string): { jobId: string; state: string } | undefined {
  return state?.jobs.filter((j) => j.kind === kind).at(-1);
}

// ---------------------------------------------------------------------------------------------
// What must arrive, and what did

/** The referenceIds the pipeline's input maps to (the expected set), read with the library, sorted. */
export async function expectedReferenceIds(pipelineFile: string): Promise<string[]> {
  const def = await loadPipeline(pipelineFile);
  const ids: string[] = [];
  for await (const row of readPipeline(def)) {
    if (row.kind !== 'mapped')
      throw new Error(`the reliability input must be clean, but ${row.row.provenance.file}:${row.row.provenance.line} was rejected`);
    ids.push(row.referenceId);
  }
  return ids.sort();
}

/**
 * Generated samples whose every row stages, validates and imports: generated legacy data has
 * natural collisions at scale (two persons with the same surname, initials and date of birth
 * are one identity to the platform, which refuses the second in validation), so rows that would
 * be refused — a repeated identity, a row the checks reject, a partner pointing at a dropped
 * row — are taken out of klanten.csv until none is left. Returns the rows taken out.
 * @example const samples = await cleanSamples({ persons: 20_000, batchRecords: 100, inFlight: 4 });
 */
export async function cleanSamples(opts: {
  persons: number;
  batchRecords: number;
  inFlight: number;
}): Promise<Samples & { dropped: number }> {
  const samples = await generateSamples(opts);
  const file = join(samples.dir, 'klanten.csv');
  let dropped = 0;
  for (let round = 0; round < 10; round++) {
    const def = await loadPipeline(samples.pipeline);
    const drop = new Set<number>();
    const seen = new Set<string>();
    for await (const row of readPipeline(def)) {
      if (row.kind === 'rejected') {
        drop.add(row.row.provenance.line);
        continue;
      }
      const key = identityKey(row.record);
      if (key && seen.has(key)) drop.add(row.row.provenance.line);
      else if (key) seen.add(key);
    }
    if (drop.size === 0) return { ...samples, dropped };
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, lines.filter((_, i) => !drop.has(i + 1)).join('\n'));
    dropped += drop.size;
  }
  throw new Error(`could not make ${file} clean in 10 rounds`);
}

/** How often each id occurs. */
export function tally(ids: Iterable<string>): Map<string, number> {
  const m = new Map<string, number>();
  for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1);
  return m;
}

export interface ServiceTruth {
  /** The migration's staged referenceIds, page by page, sorted. */
  staged: string[];
  /** Every referenceId the service staged, with how many times (its StagedEntities log entries). */
  stagedLog: Map<string, number>;
  /** Every referenceId imported (ImportedEntities INFO entries), with how many times. */
  importedLog: Map<string, number>;
  /** Import job ids named in the log (an import must run once). */
  importJobs: string[];
  /** Live counterparties by referenceId, with how many times each appears in the stream. */
  live: Map<string, number>;
  migration: { numberOfStagedEntities: number; numberOfImportedEntities: number; importStatus: string; activity?: string };
  /** Staged and imported persons from a counts job of our own. */
  counts: { staged: number; imported: number };
}

/** Reads everything the service holds about a migration through the client (no faults should be on). */
export async function serviceTruth(client: StagecoachClient, migrationId: string): Promise<ServiceTruth> {
  const staged: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await client.migrations.listStaged(migrationId, { offset, limit: 100 });
    for (const item of page.items) staged.push(String(item.referenceId));
    if (offset + 100 >= page.total) break;
  }
  const stagedLog = new Map<string, number>();
  const importedLog = new Map<string, number>();
  const importJobs = new Set<string>();
  for await (const entry of client.migrations.logs(migrationId, { Actions: ['StagedEntities', 'ImportedEntities'] })) {
    if (entry.action === 'StagedEntities') for (const id of entry.entityReferenceIds ?? []) stagedLog.set(id, (stagedLog.get(id) ?? 0) + 1);
    if (entry.action === 'ImportedEntities' && entry.logLevel === 'INFO') {
      const job = /import ([0-9a-f-]{36})/.exec(entry.message)?.[1];
      if (job) importJobs.add(job);
      for (const id of entry.entityReferenceIds ?? []) importedLog.set(id, (importedLog.get(id) ?? 0) + 1);
    }
  }
  const live = new Map<string, number>();
  for await (const cp of client.counterparties.stream({ format: 'jsonl' })) live.set(cp.referenceId, (live.get(cp.referenceId) ?? 0) + 1);
  const m = await client.migrations.get(migrationId);
  const jobId = await client.jobs.counts(migrationId);
  const result = await client.jobs.waitFor(jobId, { deadlineMs: 600_000 });
  const counts = { staged: 0, imported: 0 };
  if (result.jobType === 'Counts') {
    // The TotalEntity table: one row per entity type (the Counterparty table splits the same records by type).
    for (const table of result.counts.filter((t) => t.type === 'TotalEntity')) {
      for (const row of table.stagedRows) counts.staged += Number(row[1]);
      for (const row of table.importedRows) counts.imported += Number(row[1]);
    }
  }
  return {
    staged: staged.sort(),
    stagedLog,
    importedLog,
    importJobs: [...importJobs],
    live,
    migration: {
      numberOfStagedEntities: m.numberOfStagedEntities,
      numberOfImportedEntities: m.numberOfImportedEntities,
      importStatus: m.importStatus,
      ...(m.activity ? { activity: m.activity } : {}),
    },
    counts,
  };
}

export interface Verdict {
  expected: number;
  /** Expected records the service does not hold staged / imported / live. */
  lost: { staged: number; imported: number; live: number };
  /** Records staged, imported or live more than once (or the staged page listing repeats). */
  duplicates: { staged: number; imported: number; live: number };
  /** Records the service holds that the input does not have. */
  unexpected: number;
  /** Extra sends: the service's staging log entries beyond one per record. */
  resent: number;
  /** Extra sends not covered by a record being in flight at a crash or a failed upload. */
  resentBeyondWindow: number;
  /** Import jobs that ran on the migration. */
  importJobs: number;
}

/**
 * Compares the service's truth with the expected set. `allowedResends` says how many extra
 * sends each record may have had (once per crash that found it in flight); default none.
 */
export function judge(
  expected: readonly string[],
  truth: ServiceTruth,
  seedIds: ReadonlySet<string>,
  allowedResends: ReadonlyMap<string, number> = new Map(),
): Verdict {
  const want = new Set(expected);
  const stagedTally = tally(truth.staged);
  const count = (m: ReadonlyMap<string, number>, pred: (id: string, n: number) => boolean) =>
    [...m].filter(([id, n]) => pred(id, n)).length;
  let resent = 0;
  let beyond = 0;
  for (const [id, n] of truth.stagedLog) {
    resent += n - 1;
    beyond += Math.max(0, n - 1 - (allowedResends.get(id) ?? 0));
  }
  const live = new Map([...truth.live].filter(([id]) => !seedIds.has(id)));
  return {
    expected: expected.length,
    lost: {
      staged: expected.filter((id) => !stagedTally.has(id)).length,
      imported: expected.filter((id) => !truth.importedLog.has(id)).length,
      live: expected.filter((id) => !live.has(id)).length,
    },
    duplicates: {
      staged: count(stagedTally, (_, n) => n > 1),
      imported: count(truth.importedLog, (_, n) => n > 1),
      live: count(live, (_, n) => n > 1),
    },
    unexpected:
      count(stagedTally, (id) => !want.has(id)) +
      count(truth.importedLog, (id) => !want.has(id)) +
      count(live, (id) => !want.has(id)) +
      count(truth.stagedLog, (id) => !want.has(id)),
    resent,
    resentBeyondWindow: beyond,
    importJobs: truth.importJobs.length,
  };
}

/**
 * The yardstick every reliability suite ends with: nothing lost, nothing duplicated, nothing the
 * input does not have, no re-send beyond the in-flight window, one import job; the service's
 * counters and its own counts job agree with the expected set, and the ledger holds every
 * record as imported.
 */
export function expectMigratedExactlyOnce(expected: readonly string[], verdict: Verdict, truth: ServiceTruth, ledgerFile: string): void {
  expect(verdict).toEqual({
    expected: expected.length,
    lost: { staged: 0, imported: 0, live: 0 },
    duplicates: { staged: 0, imported: 0, live: 0 },
    unexpected: 0,
    resent: verdict.resent,
    resentBeyondWindow: 0,
    importJobs: 1,
  });
  expect(truth.migration).toMatchObject({
    numberOfStagedEntities: expected.length,
    numberOfImportedEntities: expected.length,
    importStatus: 'Completed',
  });
  expect(truth.counts).toEqual({ staged: expected.length, imported: expected.length });
  expect(readLedgerState(ledgerFile)!.records).toEqual({ imported: expected.length });
}

/** The referenceIds of the service's seed counterparties (there before any migration). */
export async function seedIds(client: StagecoachClient): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const cp of client.counterparties.stream({ format: 'jsonl' })) ids.add(cp.referenceId);
  return ids;
}

/** Writes a client config file (retry policy, timeouts) into `dir` and returns its path. */
export function clientConfig(dir: string, config: { retry?: Record<string, number>; timeouts?: Record<string, number> }): string {
  const file = join(dir, `client-${Math.random().toString(36).slice(2, 8)}.json`);
  appendFileSync(file, JSON.stringify(config));
  return file;
}

/** Fault-layer counters of a running service (GET /_admin/faults/stats). */
export async function faultStats(baseUrl: string): Promise<FaultStatsBody> {
  const res = await fetch(`${baseUrl}/_admin/faults/stats`);
  if (res.status !== 200) throw new Error(`fault stats: ${res.status} ${await res.text()}`);
  return (await res.json()) as FaultStatsBody;
}

export interface FaultStatsBody {
  requests: number;
  routes: Record<string, number>;
  faulted: number;
  fired: { status: number; latency: number; reset: number; cut: number };
  statuses: Record<string, number>;
  maxConcurrent: Record<string, number>;
  inProgress: Record<string, number>;
  since: string;
}

/** Replaces the fault rules of a running service (null clears them). */
export async function setFaults(baseUrl: string, faults: string | null, seed?: number): Promise<void> {
  const res = await fetch(`${baseUrl}/_admin/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(seed === undefined ? { faults } : { faults, seed }),
  });
  if (res.status !== 200) throw new Error(`setting faults: ${res.status} ${await res.text()}`);
}

/** The staging route as the fault stats name it. */
export const STAGING_ROUTE = 'PUT /counterparty-management/migrations/:id/staging/counterparties';

// ---------------------------------------------------------------------------------------------
// A pass-through proxy that watches the client from outside

export interface ProxyStats {
  requests: number;
  /** Most staging uploads in progress at once, as the client opened them. */
  maxStagingInFlight: number;
  /** Staging uploads per batch (keyed by the batch's first referenceId): 1 + the retries it took. */
  stagingAttempts: Map<string, number>;
  /** Answers by status. */
  statuses: Map<number, number>;
  /** Token requests (GET /authentication/token/…). */
  tokenRequests: number;
}

/**
 * A loopback HTTP proxy in front of `target` that forwards every request and answer byte for byte
 * (a connection the service drops is dropped towards the client too, so resets and cut streams
 * reach it as they are) and records what the client did: its requests, the staging uploads it
 * had open at once, and how often it sent each batch.
 * @example const proxy = await startWatchingProxy(service.url); … proxy.stats().maxStagingInFlight
 */
export async function startWatchingProxy(
  target: string,
): Promise<{ url: string; stats(): ProxyStats; reset(): void; close(): Promise<void> }> {
  const { createServer: createHttpServer, request: httpRequest } = await import('node:http');
  const up = new URL(target);
  let stats: ProxyStats = { requests: 0, maxStagingInFlight: 0, stagingAttempts: new Map(), statuses: new Map(), tokenRequests: 0 };
  let active = 0;
  const server = createHttpServer((req, res) => {
    stats.requests++;
    if ((req.url ?? '').startsWith('/authentication/token/')) stats.tokenRequests++;
    const staging = req.method === 'PUT' && /\/staging\/counterparties$/.test((req.url ?? '').split('?')[0]!);
    let open = staging;
    const leave = () => {
      if (open) active--;
      open = false;
    };
    if (staging) stats.maxStagingInFlight = Math.max(stats.maxStagingInFlight, ++active);
    const drop = () => {
      leave();
      res.destroy();
    };
    const upstream = httpRequest(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        stats.statuses.set(answer.statusCode ?? 0, (stats.statuses.get(answer.statusCode ?? 0) ?? 0) + 1);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('close', () => {
          if (!answer.complete) drop();
        });
      },
    );
    upstream.on('error', drop);
    let head: string | undefined = staging ? '' : undefined;
    const counted = stats;
    req.on('data', (chunk: Buffer) => {
      if (head === undefined) return;
      head += chunk.toString('latin1');
      const m = /"referenceId":"([0-9a-f-]{36})"/.exec(head);
      if (m) {
        counted.stagingAttempts.set(m[1]!, (counted.stagingAttempts.get(m[1]!) ?? 0) + 1);
        head = undefined;
      }
    });
    req.pipe(upstream);
    res.on('close', () => {
      leave();
      // The client went away before the answer was complete: so does the request upstream.
      if (!res.writableFinished) upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => stats,
    reset: () => {
      stats = { requests: 0, maxStagingInFlight: 0, stagingAttempts: new Map(), statuses: new Map(), tokenRequests: 0 };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
