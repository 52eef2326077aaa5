/**
 * Staging ingest speed: 100,000 persons (10,000 with --quick) in one application/json-seq PUT
 * to the embedded service running in a child process. Reports records/s from the first byte
 * sent to the last result read, the service's CPU time per record and peak RSS, then the speed
 * of the validate-staging and import jobs over the same records. Every result must be
 * successful and the migration must count every record, or the benchmark fails.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, mb, samplePeakRss, type BenchOptions, type BenchRow } from './harness.js';

export const title = 'staging ingest (json-seq PUT, one request)';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js');
/**
 * Scattered like the UUIDv5 referenceIds a pipeline derives from legacy keys: counting ids
 * (00000000-…-000000000001, …) only ever append to the staging table's unique index, which
 * measured about 10 µs a record cheaper than real ids (100,000 mapped persons, one PUT).
 */
const id = (n: number) => {
  const h = createHash('sha1').update(`bench-${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

function record(n: number): string {
  return JSON.stringify({
    referenceId: id(n),
    type: 'person',
    isActive: true,
    initials: 'J.',
    firstName: `Jan${n}`,
    surname: `Jansen${n}`,
    dateOfBirth: '1980-02-03',
    nationalities: ['NL'],
    emailAddress: `jan${n}@example.org`,
    income: { amount: 3200 + (n % 100), currency: 'EUR', frequency: 'Monthly' },
    telephoneNumbers: [{ type: 'mobile', number: `+316${String(n).padStart(8, '0')}` }],
    addresses: [
      {
        referenceId: id(n + 50_000_000),
        type: 'main',
        addressLine1: `Straat ${n}`,
        postalCode: '1000 AA',
        locality: 'Amsterdam',
        countryCode: 'NL',
      },
    ],
  });
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const count = options.quick ? 10_000 : 100_000;
  // STAGECOACH_BENCH_SERVICE_ARGS passes node flags to the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = (process.env.STAGECOACH_BENCH_SERVICE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, CLI, 'serve', '--port', '0', '--data', join(options.workDir, 'service'), '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(out.slice(0, nl).trim());
      });
      child.on('exit', (code) => reject(new Error(`service exited (${code}) before listening`)));
    });
    const tokenRes = await fetch(`${url}/authentication/token/demo-broker/demo-label`, {
      headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    const created = await fetch(`${url}/migration-assistance/migrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ components: ['Counterparties'] }),
    });
    const migrationId = ((await created.json()) as { referenceId: string }).referenceId;

    const rss = samplePeakRss(child.pid!);
    const cpuBefore = await cpuSeconds(child.pid!);
    const started = process.hrtime.bigint();
    const { ok, total, bytes } = await upload(
      `${url}/counterparty-management/migrations/${migrationId}/staging/counterparties`,
      token,
      count,
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = (await cpuSeconds(child.pid!)) - cpuBefore;
    const peak = rss.stop();

    const migration = (await (
      await fetch(`${url}/migration-assistance/migrations/${migrationId}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { numberOfStagedEntities: number };
    if (total !== count || ok !== count || migration.numberOfStagedEntities !== count) {
      throw new Error(
        `expected ${count} successful results and staged records, got ${ok} of ${total} results, ${migration.numberOfStagedEntities} staged`,
      );
    }
    // The background jobs over the same data: validate-staging, then import into the live store.
    const jobs: BenchRow[] = [];
    for (const job of ['validate-staging', 'import'] as const) {
      const jobStarted = process.hrtime.bigint();
      const result = await runJob(url, token, migrationId, job);
      const jobSeconds = Number(process.hrtime.bigint() - jobStarted) / 1e9;
      const expected = job === 'import' ? result.numberOfImportedEntities === count : result.isValid === true;
      if (!expected) throw new Error(`${job} did not succeed: ${JSON.stringify(result).slice(0, 300)}`);
      jobs.push({
        benchmark: title,
        metric: `${job} job records/s`,
        value: Math.round(count / jobSeconds),
        unit: 'records/s',
        note: `${count} records in ${jobSeconds.toFixed(2)} s, polled every 100 ms`,
      });
    }
    return [
      {
        benchmark: title,
        metric: 'records/s',
        value: Math.round(count / seconds),
        unit: 'records/s',
        note: `${count} persons, ${mb(bytes)} MB in ${seconds.toFixed(2)} s`,
      },
      // CPU time is the fairer figure on a shared machine: wall time includes everyone else.
      {
        benchmark: title,
        metric: 'service CPU per record',
        value: Math.round((cpu / count) * 1e7) / 10,
        unit: 'µs',
        note: `${cpu.toFixed(2)} s CPU of the service process`,
      },
      {
        benchmark: title,
        metric: 'service peak RSS',
        value: mb(peak),
        unit: 'MB',
        note: 'child process, sampled every 100 ms (during the upload)',
      },
      ...jobs,
    ];
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** Starts a migration job and polls it to its result. */
async function runJob(
  url: string,
  token: string,
  migrationId: string,
  job: 'validate-staging' | 'import',
): Promise<Record<string, unknown>> {
  const headers = { authorization: `Bearer ${token}` };
  const jobId = (await (
    await fetch(`${url}/migration-assistance/migrations/${migrationId}/jobs/${job}`, { method: 'PUT', headers })
  ).json()) as string;
  for (;;) {
    const res = await fetch(`${url}/migration-assistance/jobs/${jobId}`, { headers });
    if (res.status === 200) return (await res.json()) as Record<string, unknown>;
    if (res.status !== 202) throw new Error(`polling ${job} answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Streams `count` records as json-seq with backpressure and reads the json-seq results as they come. */
function upload(url: string, token: string, count: number): Promise<{ ok: number; total: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    let ok = 0;
    let total = 0;
    let bytes = 0;
    const req = httpRequest(
      url,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json-seq', accept: 'application/json-seq' },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`staging answered ${res.statusCode}`));
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const parts = (rest + text).split('\x1e');
          rest = parts.pop()!;
          for (const p of parts) if (p) count1(p);
        });
        res.on('end', () => {
          if (rest) count1(rest);
          resolve({ ok, total, bytes });
        });
      },
    );
    const count1 = (text: string) => {
      total++;
      if (text.includes('"isSuccessful":true')) ok++;
    };
    req.on('error', reject);
    let n = 1;
    const write = () => {
      while (n <= count) {
        let chunk = '';
        for (let i = 0; i < 500 && n <= count; i++, n++) chunk += `\x1e${record(n)}\n`;
        bytes += Buffer.byteLength(chunk);
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}
