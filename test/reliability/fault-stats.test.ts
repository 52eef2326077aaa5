import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get as httpGet } from 'node:http';
import { call, getToken, startTestService, type TestService } from '../support/service.js';
import { faultStats, setFaults, STAGING_ROUTE } from '../support/chaos.js';
import { createMigration, frames, person, stage, stagingPath } from '../cases/migration/records.js';

let svc: TestService;
let token: string;
let m: string;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  m = await createMigration(svc.url, token);
  await stage(
    svc.url,
    token,
    m,
    Array.from({ length: 20 }, (_, i) => person(i + 1)),
  );
});
afterAll(async () => svc?.dispose());

const resetStats = async () => expect((await call(svc.url, undefined, 'DELETE', '/_admin/faults/stats')).status).toBe(204);

/** Reads a response until the server ends or cuts it. */
function readAll(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${svc.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/jsonl' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('error', () => undefined);
      res.on('close', () => resolve(text));
    });
    req.on('error', reject);
  });
}

describe('fault-layer counters', () => {
  it('count the requests, the faults that fired by kind and status, and nothing for the admin endpoint', async () => {
    await setFaults(svc.url, 'GET /migration-assistance/migrations/current:status=503;GET /migration-assistance/migrations/*:latency=5', 3);
    await resetStats();
    for (let i = 0; i < 3; i++) expect((await call(svc.url, token, 'GET', '/migration-assistance/migrations/current')).status).toBe(503);
    expect((await call(svc.url, token, 'GET', `/migration-assistance/migrations/${m}`)).status).toBe(200);
    await call(svc.url, undefined, 'GET', '/_admin/faults');
    const stats = await faultStats(svc.url);
    // current meets both rules (latency, then 503): 3 faulted requests, 3 statuses, 4 latencies
    expect(stats).toMatchObject({
      requests: 4,
      faulted: 4,
      fired: { status: 3, latency: 4, reset: 0, cut: 0 },
      statuses: { 503: 3 },
      inProgress: {},
    });
    await setFaults(svc.url, null);
  });

  it('count a body reset and a stream cut only when they happen', async () => {
    await setFaults(svc.url, `PUT */staging/counterparties:reset=1:after=100000;GET */logs/stream:cut=1`, 3);
    await resetStats();
    // a small body never reaches the reset point: staged, not counted
    expect(
      (
        await call(svc.url, token, 'PUT', stagingPath(m), {
          raw: frames('json-seq', [person(21)]),
          headers: { 'content-type': 'application/json-seq' },
        })
      ).status,
    ).toBe(200);
    const text = await readAll(`/migration-assistance/migrations/${m}/logs/stream`);
    expect(text.endsWith('\n')).toBe(false);
    let stats = await faultStats(svc.url);
    expect(stats).toMatchObject({ requests: 2, faulted: 1, fired: { status: 0, latency: 0, reset: 0, cut: 1 } });

    await setFaults(svc.url, `PUT */staging/counterparties:reset=1:after=100`, 3);
    await resetStats();
    await expect(
      call(svc.url, token, 'PUT', stagingPath(m), {
        raw: frames(
          'json-seq',
          Array.from({ length: 30 }, (_, i) => person(i + 100)),
        ),
        headers: { 'content-type': 'application/json-seq' },
      }),
    ).rejects.toThrow();
    stats = await faultStats(svc.url);
    expect(stats).toMatchObject({ requests: 1, faulted: 1, fired: { status: 0, latency: 0, reset: 1, cut: 0 } });
    await setFaults(svc.url, null);
  });

  it('record the most requests in progress at once per route', async () => {
    await setFaults(svc.url, 'PUT */staging/counterparties:latency=300', 3);
    await resetStats();
    const body = () => frames('json-seq', [person(1)]);
    await Promise.all(
      Array.from({ length: 4 }, () =>
        call(svc.url, token, 'PUT', stagingPath(m), { raw: body(), headers: { 'content-type': 'application/json-seq' } }),
      ),
    );
    await call(svc.url, token, 'PUT', stagingPath(m), { raw: body(), headers: { 'content-type': 'application/json-seq' } });
    const stats = await faultStats(svc.url);
    expect(stats.maxConcurrent[STAGING_ROUTE]).toBe(4);
    expect(stats.maxConcurrent['*']).toBe(4);
    expect(stats.inProgress).toEqual({});
    await setFaults(svc.url, null);
  });
});
