import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDatabase } from '../../src/service/store/database.js';
import { upsertLiveCounterparties } from '../../src/service/counterparties/store.js';
import type { StagedCounterparty } from '../../src/contract/migration.js';
import { call, getToken, OTHER, startTestService, tempDir, type TestService } from '../support/service.js';

const V = { accept: 'application/json;api-version=2024.1.0' };
const FAST = { webhookRetryBaseMs: 20, webhookRetryCapMs: 200, webhookMaxAttempts: 3, webhookPollMs: 50, webhookTimeoutMs: 1000 };

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** A webhook receiver on loopback; `answer` decides each response (default 200). */
async function startReceiver(answer: (req: Received, n: number, res: ServerResponse) => void = (_r, _n, res) => res.end('ok')) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : undefined };
      received.push(r);
      answer(r, received.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 200; i++) {
    last = await probe();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

let svc: TestService;
let token: string;
const receivers: Receiver[] = [];
beforeAll(async () => {
  svc = await startTestService(FAST);
  token = await getToken(svc.url);
});
afterAll(async () => svc?.dispose());
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function subscribe(base: string, uri: string, who = token) {
  const res = await call(svc.url, who, 'POST', `${base}/endpoints`, { body: { uri }, headers: V });
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string };
}
const deliveries = (base: string, id: string, who = token) =>
  call(svc.url, who, 'GET', `${base}/endpoints/${id}/deliveries`, { headers: V }).then((r) => r.body as { items: any[]; total: number });
const settled = (page: { items: any[] }) => page.items.length > 0 && page.items.every((d) => d.status !== 'pending');

describe('webhook delivery', () => {
  it('posts a triggered event with the registration token, once, and journals it', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const base = '/lodging/events/lodging.message.handling_succeeded';
    const reg = await subscribe(base, `${rx.url}/hooks/lodging`);
    const trig = await call(svc.url, token, 'POST', `${base}/trigger`, { body: { messageReferenceId: 'm-1' }, headers: V });
    expect(trig.status).toBe(202);
    expect(trig.body).toMatchObject({ eventName: 'lodging.message.handling_succeeded' });
    const page = await until('delivery', () => deliveries(base, reg.id), settled);
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.path).toBe('/hooks/lodging');
    expect(got.headers['x-event-token']).toBe(reg.token);
    expect(got.headers['x-event-id']).toBe(trig.body.id);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.body).toEqual({
      id: trig.body.id,
      eventName: 'lodging.message.handling_succeeded',
      occurredOn: trig.body.occurredOn,
      data: { messageReferenceId: 'm-1' },
    });
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({
      eventId: trig.body.id,
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(page.items[0].attemptLog).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered', statusCode: 200, error: null })]);
    expect(typeof page.items[0].attemptLog[0].latencyMs).toBe('number');
  });

  it('retries a failing receiver with the same event id and marks it delivered after the first 2xx', async () => {
    const rx = await startReceiver((_r, n, res) => {
      res.statusCode = n <= 2 ? 503 : 204;
      res.end();
    });
    receivers.push(rx);
    const base = '/process-orchestration/events/process.status-changed';
    const reg = await subscribe(base, `${rx.url}/flaky`);
    const trig = await call(svc.url, token, 'POST', `${base}/trigger`, { headers: V });
    const page = await until('retried delivery', () => deliveries(base, reg.id), settled);
    expect(page.items[0]).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 204 });
    expect(page.items[0].attemptLog.map((a: any) => [a.attempt, a.outcome, a.statusCode, a.error])).toEqual([
      [1, 'retry', 503, 'receiver answered 503'],
      [2, 'retry', 503, 'receiver answered 503'],
      [3, 'delivered', 204, null],
    ]);
    expect(rx.received.map((r) => r.headers['x-event-id'])).toEqual([trig.body.id, trig.body.id, trig.body.id]);
    expect(rx.received.map((r) => r.body.id)).toEqual([trig.body.id, trig.body.id, trig.body.id]);
    // without a body the example data is sent
    const example = await call(svc.url, token, 'GET', `${base}/example`, { headers: V });
    expect(rx.received[0]!.body.data).toEqual(example.body.data);
  });

  it('does not follow a redirect and gives up after the last attempt', async () => {
    const rx = await startReceiver((r, _n, res) => {
      if (r.path === '/moved') {
        res.writeHead(302, { location: '/elsewhere' });
        return res.end();
      }
      res.end('ok');
    });
    receivers.push(rx);
    const base = '/counterparty-management/events/counterparty_master.consolidated';
    const reg = await subscribe(base, `${rx.url}/moved`);
    await call(svc.url, token, 'POST', `${base}/trigger`, { body: { referenceId: 'x' }, headers: V });
    const page = await until('failed delivery', () => deliveries(base, reg.id), settled);
    expect(page.items[0]).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastStatusCode: 302,
      lastError: 'redirect to /elsewhere not followed',
    });
    expect(rx.received.map((r) => r.path)).toEqual(['/moved', '/moved', '/moved']);
  });

  it('fails at once on a 4xx other than 408 and 429', async () => {
    const rx = await startReceiver((_r, _n, res) => {
      res.statusCode = 410;
      res.end();
    });
    receivers.push(rx);
    const base = '/lodging/events/lodging.message.handling_failed';
    const reg = await subscribe(base, `${rx.url}/gone`);
    await call(svc.url, token, 'POST', `${base}/trigger`, { headers: V });
    const page = await until('failed delivery', () => deliveries(base, reg.id), settled);
    expect(page.items[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410, lastError: 'receiver answered 410' });
  });

  it('retries a receiver that does not answer in time', async () => {
    const rx = await startReceiver((_r, n, res) => {
      if (n > 1) res.end('ok'); // the first request is left hanging
    });
    receivers.push(rx);
    const quick = await startTestService({ ...FAST, webhookTimeoutMs: 200 });
    try {
      const t = await getToken(quick.url);
      const base = '/counterparty-management/events/counterparty.merged';
      const reg = (await call(quick.url, t, 'POST', `${base}/endpoints`, { body: { uri: `${rx.url}/slow` }, headers: V })).body;
      await call(quick.url, t, 'POST', `${base}/trigger`, { headers: V });
      const page = await until(
        'delivery after a timeout',
        () => call(quick.url, t, 'GET', `${base}/endpoints/${reg.id}/deliveries`, { headers: V }).then((r) => r.body),
        settled,
      );
      expect(page.items[0].attemptLog.map((a: any) => [a.outcome, a.error])).toEqual([
        ['retry', 'no answer within 200 ms'],
        ['delivered', null],
      ]);
    } finally {
      await quick.dispose();
    }
  });

  it('delivers counterparty.merged when an upsert merges two counterparties, only to the tenant', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const base = '/counterparty-management/events/counterparty.merged';
    const mine = await subscribe(base, `${rx.url}/mine`);
    const theirs = await subscribe(base, `${rx.url}/theirs`, await getToken(svc.url, OTHER));
    const db = openDatabase(svc.dataDir);
    const a = '00000000-0000-4000-8000-0000000000a1';
    const b = '00000000-0000-4000-8000-0000000000b2';
    const person = (referenceId: string) =>
      ({ referenceId, type: 'person', initials: 'M', surname: 'Merger', dateOfBirth: '1977-07-07' }) as StagedCounterparty;
    db.transaction(() => upsertLiveCounterparties(db, 'demo-broker', [person(a)], 'import'))();
    db.transaction(() => upsertLiveCounterparties(db, 'demo-broker', [person(b)], 'lodging'))();
    db.close();
    await until('merge delivery', () => deliveries(base, mine.id), settled);
    const merged = rx.received.filter((r) => r.path === '/mine' && r.body.data.source === 'lodging');
    expect(merged.map((r) => r.body.data)).toEqual([
      {
        survivorReferenceId: a,
        mergedReferenceIds: [b],
        counterpartyType: 'person',
        matchedOn: ['surname', 'initials', 'dateOfBirth'],
        source: 'lodging',
      },
    ]);
    expect(merged[0]!.headers['x-event-token']).toBe(mine.token);
    expect(rx.received.filter((r) => r.path === '/theirs')).toEqual([]);
    expect((await deliveries(base, theirs.id, await getToken(svc.url, OTHER))).total).toBe(0);
  });

  it('delivers everything when more deliveries are due than may be in flight', async () => {
    const rx = await startReceiver((_r, _n, res) => setTimeout(() => res.end('ok'), 20));
    receivers.push(rx);
    const narrow = await startTestService({ ...FAST, webhookConcurrency: 2 });
    try {
      const t = await getToken(narrow.url);
      const base = '/counterparty-management/events/counterparty.merged';
      const reg = (await call(narrow.url, t, 'POST', `${base}/endpoints`, { body: { uri: `${rx.url}/narrow` }, headers: V })).body;
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await call(narrow.url, t, 'POST', `${base}/trigger`, { body: { i }, headers: V })).body.id);
      const page = await until(
        '12 deliveries',
        () => call(narrow.url, t, 'GET', `${base}/endpoints/${reg.id}/deliveries?limit=100`, { headers: V }).then((r) => r.body),
        (p) => p.total === 12 && settled(p),
      );
      expect(page.items.every((d: any) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
      expect(rx.received.map((r) => r.body.id).sort()).toEqual([...ids].sort());
    } finally {
      await narrow.dispose();
    }
  });

  it('resumes pending deliveries after a restart', async () => {
    const dataDir = tempDir('stagecoach-svc-');
    const first = await startTestService({ ...FAST, webhookMaxAttempts: 50, webhookRetryBaseMs: 100, webhookRetryCapMs: 100, dataDir });
    const t = await getToken(first.url);
    const base = '/counterparty-management/events/counterparty_operational.consolidated';
    // a port that refuses connections until the receiver starts there
    const probe = await startReceiver();
    const port = new URL(probe.url).port;
    await probe.close();
    const reg = (await call(first.url, t, 'POST', `${base}/endpoints`, { body: { uri: `http://127.0.0.1:${port}/later` }, headers: V }))
      .body;
    const trig = (await call(first.url, t, 'POST', `${base}/trigger`, { headers: V })).body;
    await until(
      'a failed attempt',
      () => call(first.url, t, 'GET', `${base}/endpoints/${reg.id}/deliveries`, { headers: V }).then((r) => r.body),
      (p) => p.items[0]?.attempts >= 1,
    );
    await first.close();

    const rx = await startReceiver();
    receivers.push(rx);
    const second = await startTestService({ ...FAST, dataDir, webhookMaxAttempts: 50 });
    try {
      const t2 = await getToken(second.url);
      await call(second.url, t2, 'PUT', `${base}/endpoints/${reg.id}`, { body: { uri: `${rx.url}/later` }, headers: V });
      const page = await until(
        'resumed delivery',
        () => call(second.url, t2, 'GET', `${base}/endpoints/${reg.id}/deliveries`, { headers: V }).then((r) => r.body),
        settled,
      );
      expect(page.items[0]).toMatchObject({ eventId: trig.id, status: 'delivered' });
      expect(page.items[0].attemptLog[0]).toMatchObject({ outcome: 'retry', statusCode: null });
      expect(page.items[0].attemptLog[0].error).toContain('ECONNREFUSED');
      expect(rx.received.map((r) => r.body.id)).toEqual([trig.id]);
    } finally {
      await second.dispose();
    }
  });
});
