/**
 * Token expiry and hanging services: a migrate that lasts many token lifetimes (service
 * `--token-ttl 2`, slow jobs) finishes on fresh tokens; against a service that accepts
 * connections and never answers, one that sends headers and then nothing, and one whose job
 * polls hang, the client's timeouts fire, `migrate` exits 4 in bounded time with a message
 * naming the request and the timeout, and a run again (once the service answers) resumes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/service.js';
import { demoClient, type Samples } from '../support/pipeline-run.js';
import {
  cleanSamples,
  clientConfig,
  expectedReferenceIds,
  judge,
  latestJob,
  readLedgerState,
  reportFigures,
  seedIds,
  serviceTruth,
  setFaults,
  sleep,
  soak,
  spawnCli,
  startServiceProcess,
  startWatchingProxy,
  suiteTimeout,
  type ServiceProcess,
} from '../support/chaos.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(
  persons: number,
  batch: number,
  window: number,
  serviceArgs: string[],
): Promise<{ samples: Samples & { dropped: number }; work: string; service: ServiceProcess }> {
  const samples = await cleanSamples({ persons, batchRecords: batch, inFlight: window });
  const work = tempDir('stagecoach-timeouts-');
  cleanup.push(
    () => rmSync(samples.dir, { recursive: true, force: true }),
    () => rmSync(work, { recursive: true, force: true }),
  );
  const service = await startServiceProcess({ dataDir: join(work, 'service'), args: serviceArgs });
  cleanup.push(() => service.kill());
  return { samples, work, service };
}

/** Short client timeouts and a small retry budget, so a hang ends a run in seconds. */
const SHORT = {
  timeouts: { connectMs: 1_000, headersMs: 1_500, bodyMs: 1_500 },
  retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50, maxRetryTimeMs: 10_000 },
};

describe('a migrate longer than the token lifetime', () => {
  it(
    'finishes with every record imported once, fetching a new token as each one expires',
    async () => {
      const TTL = 2;
      const persons = soak(500, 5_000);
      const rate = soak(100, 500);
      const { samples, work, service } = await setup(persons, 50, 2, [
        '--token-ttl',
        String(TTL),
        '--job-rate',
        String(rate),
        '--faults',
        'PUT /counterparty-management/*:latency=200-500',
      ]);
      const client = demoClient(service.url);
      cleanup.push(() => client.close());
      const proxy = await startWatchingProxy(service.url);
      cleanup.push(() => proxy.close());
      const seeds = await seedIds(client);
      const expected = await expectedReferenceIds(samples.pipeline);
      const t0 = performance.now();
      const res = await spawnCli(
        ['migrate', 'pipeline.yaml', '--ledger', join(work, 'ledger.db'), '--out', join(work, 'report'), '--base-url', proxy.url, '--json'],
        { cwd: samples.dir },
      ).done;
      const seconds = (performance.now() - t0) / 1000;
      expect(res.code, res.stderr).toBe(0);
      const p = proxy.stats();
      const result = JSON.parse(res.stdout) as { report: { run: { migrationId: string } } };
      const verdict = judge(expected, await serviceTruth(client, result.report.run.migrationId), seeds);
      reportFigures('token-expiry', {
        records: expected.length,
        tokenTtlSeconds: TTL,
        seconds: Math.round(seconds * 10) / 10,
        tokenRequests: p.tokenRequests,
        refused401: p.statuses.get(401) ?? 0,
        requests: p.requests,
        ...verdict,
      });
      expect(verdict).toMatchObject({
        lost: { staged: 0, imported: 0, live: 0 },
        duplicates: { staged: 0, imported: 0, live: 0 },
        unexpected: 0,
        resent: 0,
        importJobs: 1,
      });
      // Two jobs of `persons / rate` seconds each: the run outlived its first tokens several times over.
      expect(seconds).toBeGreaterThan((2 * persons) / rate);
      expect(p.tokenRequests).toBeGreaterThanOrEqual(3);
    },
    suiteTimeout(90_000),
  );
});

/** A loopback TCP server that accepts connections and then does `behave` (never answers, or answers headers only). */
async function hangingServer(behave: 'silent' | 'headers-only'): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      if (behave === 'headers-only')
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{"ac\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => connections };
}

describe('a service that hangs', () => {
  for (const [behave, what, timeout] of [
    [
      'silent',
      'accepts connections and never answers',
      'waiting for the response headers on GET /authentication/token/demo-broker/demo-label at {url} (UND_ERR_HEADERS_TIMEOUT)',
    ],
    [
      'headers-only',
      'answers with headers and then sends nothing more',
      'waiting for more of the response body on GET /authentication/token/demo-broker/demo-label at {url} (UND_ERR_BODY_TIMEOUT)',
    ],
  ] as const) {
    it(`that ${what}: migrate exits 4 once its timeouts and retries are spent, naming the request`, async () => {
      const hang = await hangingServer(behave);
      const dir = tempDir('stagecoach-hang-');
      cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
      const config = clientConfig(dir, SHORT);
      const t0 = performance.now();
      // The harness would SIGKILL after 60 s: a run that ends by itself ends in bounded time.
      const res = await runCli(
        [
          'migrate',
          'pipelines/crm.yaml',
          '--ledger',
          join(dir, 'ledger.db'),
          '--out',
          join(dir, 'report'),
          '--base-url',
          hang.url,
          '--config',
          config,
        ],
        { timeoutMs: 60_000 },
      );
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      reportFigures('hanging-service', { behave, seconds, connections: hang.connections(), code: res.code });
      expect(res.signal).toBeNull();
      expect(res.code).toBe(4);
      // Not at a terminal, the run logs at info (JSON lines); its one error line comes last.
      const lines = res.stderr.trimEnd().split('\n');
      expect(lines.at(-1)).toBe(
        `stagecoach: Staging failed in run 1: timed out ${timeout.replace('{url}', hang.url)}; raise the client's timeouts if the service is slow (gave up after 3 attempts)`,
      );
      for (const l of lines.slice(0, -1)) expect((JSON.parse(l) as { level: number }).level).toBeLessThan(50);
      // One attempt and two retries, each on a connection of its own or a reused one.
      expect(hang.connections()).toBeGreaterThanOrEqual(1);
    });
  }

  it(
    'while migrate polls a job: exit 4 naming the poll, and the run again polls the same job to the end',
    async () => {
      const { samples, work, service } = await setup(200, 50, 2, ['--job-rate', '100']);
      const config = clientConfig(work, SHORT);
      const ledger = join(work, 'ledger.db');
      const args = [
        'migrate',
        'pipeline.yaml',
        '--ledger',
        ledger,
        '--out',
        join(work, 'report'),
        '--base-url',
        service.url,
        '--config',
        config,
      ];
      // Job polls hang (20 s each) from the moment validation starts.
      const run = spawnCli(args, { cwd: samples.dir });
      while (run.running() && latestJob(readLedgerStateSafe(ledger), 'validate-staging') === undefined) await sleep(15);
      await setFaults(service.url, 'GET /migration-assistance/jobs/*:latency=20000');
      const hung = await run.done;
      expect(hung.code).toBe(4);
      const jobId = latestJob(readLedgerState(ledger), 'validate-staging')!.jobId;
      expect(hung.stderr).toContain(
        `stagecoach: timed out waiting for the response headers on GET /migration-assistance/jobs/${jobId} at ${service.url} (UND_ERR_HEADERS_TIMEOUT); raise the client's timeouts if the service is slow (gave up after 3 attempts)\n`,
      );

      await setFaults(service.url, null);
      const again = await runCli(args, { cwd: samples.dir });
      expect(again.stderr).toContain(`validate-staging job ${jobId} was running: polling it again`);
      expect(again.code).toBe(0);
      expect(readLedgerState(ledger)!.records).toEqual({ imported: 200 - samples.dropped });
    },
    suiteTimeout(90_000),
  );
});

function readLedgerStateSafe(file: string) {
  try {
    return readLedgerState(file);
  } catch {
    return undefined;
  }
}
