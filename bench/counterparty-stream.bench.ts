/**
 * Counterparty stream: objects/s through a real HTTP client, and the service's peak RSS, at
 * 100,000 and at 1,000,000 live counterparties (quick: 10,000 and 100,000). The service runs in
 * a child process (`serve`), restarted for each size so each peak is its own; the rows are
 * written straight into its SQLite file beforehand (10,000-row transactions), which is a
 * seeding shortcut, not what the bench measures. RSS must not grow with the count.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { mb, samplePeakRss, type BenchOptions, type BenchRow } from './harness.js';
import { openDatabase } from '../src/service/store/database.js';
import { createCounterpartyTables } from '../src/service/counterparties/store.js';

export const title = 'counterparty stream (JSON Lines over HTTP)';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

export interface ServiceChild {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `stagecoach serve` (of the build at `cli`, default this one) on a free port over `dataDir`; resolves once it prints its URL. */
export async function spawnService(dataDir: string, extra: string[] = [], cli = CLI): Promise<ServiceChild> {
  const child: ChildProcess = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data', dataDir, '--log-level', 'warn', ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`service exited with ${code} before listening`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A bearer token of the demo identity. */
export async function demoToken(url: string): Promise<string> {
  const res = await request(`${url}/authentication/token/demo-broker/demo-label`, {
    headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
  });
  return ((await res.body.json()) as { access_token: string }).access_token;
}

/** Appends `count` persons for demo-broker after the highest seq, in big transactions. */
function seedRows(dataDir: string, count: number): void {
  const db = openDatabase(dataDir);
  db.pragma('wal_autocheckpoint = 100000');
  createCounterpartyTables(db);
  let seq =
    ((db.prepare("SELECT MAX(seq) AS m FROM live_counterparties WHERE broker_key = 'demo-broker'").get() as { m: number | null }).m ?? 0) +
    1;
  const insert = db.prepare(
    "INSERT INTO live_counterparties (broker_key, reference_id, seq, type, identity_key, data, source, created_on, updated_on) VALUES ('demo-broker', ?, ?, 'person', NULL, ?, 'import', ?, ?)",
  );
  const now = new Date().toISOString();
  const batch = db.transaction((from: number, n: number) => {
    for (let i = from; i < from + n; i++) {
      const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
      const data = {
        referenceId: id,
        type: 'person',
        isActive: true,
        initials: 'B.',
        firstName: 'Bench',
        surname: `Person${i}`,
        dateOfBirth: '1980-01-01',
        nationalities: ['NL'],
        emailAddress: `bench${i}@example.org`,
        telephoneNumbers: [{ type: 'mobile', number: `+316${String(i).padStart(8, '0')}` }],
        income: { amount: 52000, currency: 'EUR', frequency: 'yearly' },
        addresses: [
          {
            referenceId: id,
            type: 'main',
            addressLine1: `Benchstraat ${i}`,
            postalCode: '1000 AA',
            locality: 'Amsterdam',
            countryCode: 'NL',
          },
        ],
      };
      insert.run(id, i, JSON.stringify(data), now, now);
    }
  });
  for (let done = 0; done < count; done += 10_000) {
    const n = Math.min(10_000, count - done);
    batch(seq, n);
    seq += n;
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Streams everything once; returns objects seen, the last sequenceNumber, bytes and seconds. */
async function streamAll(url: string, token: string): Promise<{ objects: number; last: number; bytes: number; seconds: number }> {
  const started = performance.now();
  const res = await request(`${url}/counterparty-management/counterparties/stream`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/jsonl;api-version=2025.1.0' },
  });
  if (res.statusCode !== 200) throw new Error(`stream answered ${res.statusCode}: ${await res.body.text()}`);
  let objects = 0;
  let bytes = 0;
  let tail = '';
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) objects++;
    tail = (tail + chunk.toString('utf8', Math.max(0, chunk.length - 4096))).slice(-8192);
  }
  const lastLine = tail.trimEnd().split('\n').at(-1) ?? '{}';
  const last = (JSON.parse(lastLine) as { sequenceNumber: number }).sequenceNumber;
  return { objects, last, bytes, seconds: (performance.now() - started) / 1000 };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = options.quick ? [10_000, 100_000] : [100_000, 1_000_000];
  const dataDir = join(options.workDir, 'service');
  const rows: BenchRow[] = [];
  let seeded = 0;
  for (const size of sizes) {
    seedRows(dataDir, size - seeded);
    seeded = size;
    const svc = await spawnService(dataDir);
    try {
      const token = await demoToken(svc.url);
      const idle = samplePeakRss(svc.pid);
      await new Promise((r) => setTimeout(r, 300));
      const idlePeak = idle.stop();
      const rss = samplePeakRss(svc.pid, 50);
      const got = await streamAll(svc.url, token);
      const peak = rss.stop();
      const expected = size + 5; // + the demo seed
      if (got.objects !== expected || got.last !== expected)
        throw new Error(`expected ${expected} objects ending at ${expected}, got ${got.objects} ending at ${got.last}`);
      const label = `${size.toLocaleString('en')} counterparties`;
      rows.push(
        {
          benchmark: title,
          metric: `objects/s at ${label}`,
          value: Math.round(got.objects / got.seconds),
          unit: 'objects/s',
          note: `${got.seconds.toFixed(1)} s, ${mb(got.bytes)} MB`,
        },
        { benchmark: title, metric: `service peak RSS at ${label}`, value: mb(peak), unit: 'MB', note: `idle before: ${mb(idlePeak)} MB` },
      );
    } finally {
      await svc.stop();
    }
  }
  return rows;
}
