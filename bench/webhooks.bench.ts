/**
 * Webhook deliveries per second to a local receiver (node:http on loopback, in this process),
 * from a service in a child process with its default settings (8 in flight):
 *  - triggered: N events triggered over HTTP (16 requests in flight) until all N arrived;
 *  - backlog: N events written to the outbox while the service is down, drained after start.
 * Each delivery's token is checked; the journal's mean attempt latency is reported.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { request } from 'undici';
import type { BenchOptions, BenchRow } from './harness.js';
import { demoToken, spawnService } from './counterparty-stream.bench.js';
import { openDatabase } from '../src/service/store/database.js';
import { emitEvent } from '../src/service/events/outbox.js';

export const title = 'webhook deliveries to a loopback receiver';

const EVENT = 'counterparty_operational.consolidated';
const V = 'application/json;api-version=2024.1.0';

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const n = options.quick ? 500 : 5000;
  const dataDir = join(options.workDir, 'service');

  let expectedToken = '';
  let received = 0;
  let badToken = 0;
  let onReceived = () => {};
  const receiver = createServer((req, res) => {
    if (req.headers['x-event-token'] !== expectedToken) badToken++;
    req.resume();
    req.on('end', () => {
      res.end();
      received++;
      onReceived();
    });
  });
  receiver.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const arrived = (count: number) =>
    new Promise<void>((resolve) => {
      onReceived = () => received >= count && resolve();
      onReceived();
    });

  const rows: BenchRow[] = [];
  try {
    // Triggered over HTTP, end to end.
    let svc = await spawnService(dataDir);
    let registration: { id: string; token: string };
    try {
      const token = await demoToken(svc.url);
      const auth = { authorization: `Bearer ${token}`, accept: V, 'content-type': 'application/json' };
      const reg = await request(`${svc.url}/counterparty-management/events/${EVENT}/endpoints`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ uri: receiverUrl }),
      });
      registration = (await reg.body.json()) as { id: string; token: string };
      expectedToken = registration.token;
      const limit = pLimit(16);
      const started = performance.now();
      const done = arrived(n);
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          limit(async () => {
            const res = await request(`${svc.url}/counterparty-management/events/${EVENT}/trigger`, {
              method: 'POST',
              headers: auth,
              body: JSON.stringify({ referenceId: `bench-${i}`, fields: ['emailAddress'] }),
            });
            await res.body.dump();
            if (res.statusCode !== 202) throw new Error(`trigger answered ${res.statusCode}`);
          }),
        ),
      );
      await done;
      const seconds = (performance.now() - started) / 1000;
      rows.push({
        benchmark: title,
        metric: `deliveries/s, ${n} triggered over HTTP`,
        value: Math.round(n / seconds),
        unit: 'deliveries/s',
        note: `${seconds.toFixed(2)} s end to end`,
      });
    } finally {
      await svc.stop();
    }

    // A backlog written while the service is down, drained after start.
    const db = openDatabase(dataDir);
    db.transaction(() => {
      for (let i = 0; i < n; i++)
        emitEvent(db, { brokerKey: 'demo-broker', eventName: EVENT, data: { referenceId: `backlog-${i}`, fields: ['addresses'] } });
    })();
    db.close();
    const before = received;
    const started = performance.now();
    svc = await spawnService(dataDir);
    try {
      await arrived(before + n);
      const seconds = (performance.now() - started) / 1000;
      rows.push({
        benchmark: title,
        metric: `deliveries/s, backlog of ${n} after start`,
        value: Math.round(n / seconds),
        unit: 'deliveries/s',
        note: `${seconds.toFixed(2)} s incl. service start`,
      });
    } finally {
      await svc.stop();
    }

    const check = openDatabase(dataDir);
    const stats = check
      .prepare(
        "SELECT COUNT(*) AS n, SUM(status = 'delivered') AS ok, AVG(last_latency_ms) AS latency, MAX(attempts) AS attempts FROM webhook_deliveries",
      )
      .get() as { n: number; ok: number; latency: number; attempts: number };
    check.close();
    if (stats.ok !== 2 * n || badToken > 0)
      throw new Error(`expected ${2 * n} delivered with the right token, got ${stats.ok} delivered, ${badToken} bad tokens`);
    rows.push({
      benchmark: title,
      metric: 'mean attempt latency (journal)',
      value: Math.round(stats.latency * 10) / 10,
      unit: 'ms',
      note: `${stats.n} deliveries, max attempts ${stats.attempts}`,
    });
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((r) => receiver.close(() => r()));
  }
  return rows;
}
