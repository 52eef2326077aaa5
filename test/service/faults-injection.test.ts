import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { get as httpGet, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { startService } from '../../src/service/index.js';
import { parseFaultSpec } from '../../src/service/faults/index.js';
import { call, getToken, startTestService, tempDir, type TestService } from '../support/service.js';
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
    Array.from({ length: 30 }, (_, i) => person(i + 1)),
  );
});
afterAll(async () => svc?.dispose());
afterEach(async () => {
  await call(svc.url, undefined, 'DELETE', '/_admin/faults');
});

const setFaults = (faults: string | null, seed?: number) =>
  call(svc.url, undefined, 'PUT', '/_admin/faults', { body: seed === undefined ? { faults } : { faults, seed } });
const current = () => call(svc.url, token, 'GET', '/migration-assistance/migrations/current');
const logs = () => `/migration-assistance/migrations/${m}/logs/stream`;

/** Reads a response until the server ends or cuts it; never throws on a cut. */
function readUntilCut(path: string, accept: string): Promise<{ status: number; text: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${svc.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept } }, (res) => {
      let text = '';
      let complete = false;
      res.on('data', (d) => (text += d));
      res.on('end', () => (complete = true));
      res.on('error', () => undefined);
      res.on('close', () => resolve({ status: res.statusCode ?? 0, text, complete }));
    });
    req.on('error', reject);
  });
}

describe('fault injection admin endpoint', () => {
  it('shows, replaces and clears the rules', async () => {
    expect((await call(svc.url, undefined, 'GET', '/_admin/faults')).body).toEqual({ faults: '', seed: 1, rules: [] });
    const set = await setFaults('GET /migration-assistance/*:status=429:retry-after=7:p=0.5', 9);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      faults: 'GET /migration-assistance/*:status=429:retry-after=7:p=0.5',
      seed: 9,
      rules: [
        {
          text: 'GET /migration-assistance/*:status=429:retry-after=7:p=0.5',
          method: 'GET',
          path: '/migration-assistance/*',
          kind: 'status',
          p: 0.5,
          status: 429,
          retryAfter: 7,
        },
      ],
    });
    const cleared = await call(svc.url, undefined, 'DELETE', '/_admin/faults');
    expect(cleared.status).toBe(204);
    expect((await call(svc.url, undefined, 'GET', '/_admin/faults')).body.rules).toEqual([]);
  });

  it('refuses a bad rule with 400 naming the rule and what was expected', async () => {
    const res = await setFaults('*:latency=50;PUT /x:status=503:cut=0.1');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'FAULT_SPEC_INVALID',
      detail:
        'fault rule 2 `PUT /x:status=503:cut=0.1`: one fault kind per rule, got status and cut: write one rule each; expected e.g. "PUT /counterparty-management/*:status=503:p=0.1" (docs/fault-injection.md)',
    });
    expect(() => parseFaultSpec('*:p=2:status=500')).toThrow(
      'fault rule 1 `*:p=2:status=500`: p must be a probability from 0 to 1, got "2"',
    );
    expect(() => parseFaultSpec('GET /a:bogus=1')).toThrow(
      'fault rule 1 `GET /a:bogus=1`: unknown setting "bogus" (known: status, p, retry-after, latency, reset, cut, after)',
    );
  });

  /** An admin request over loopback with a Host header of our choosing (fetch sets its own). */
  const withHost = (method: string, path: string, host: string, body?: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const { hostname, port } = new URL(svc.url);
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { host, ...(text === undefined ? {} : { 'content-type': 'application/json' }) };
      const req = httpRequest({ hostname, port, method, path, headers }, (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (answer += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: answer ? JSON.parse(answer) : undefined }));
      });
      req.on('error', reject);
      req.end(text);
    });

  it('refuses a Host header that is not a loopback name (DNS rebinding) with 403 ADMIN_HOST_NOT_LOOPBACK, on every admin route', async () => {
    const port = new URL(svc.url).port;
    const hosts = [
      `rebind.attacker.example:${port}`,
      'rebind.attacker.example',
      `127.0.0.1.nip.io:${port}`,
      `localhost.attacker.example:${port}`,
      `127.0.0.2:${port}`,
      `[::2]:${port}`,
      '0.0.0.0',
      `127.0.0.1:${port}@evil.example`,
      `127.0.0.1 :${port}`,
    ];
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/_admin/faults'],
      ['PUT', '/_admin/faults', { faults: '*:status=500' }],
      ['DELETE', '/_admin/faults'],
      ['GET', '/_admin/faults/stats'],
      ['DELETE', '/_admin/faults/stats'],
    ];
    for (const host of hosts) {
      for (const [method, path, body] of routes) {
        const res = await withHost(method, path, host, body);
        expect([host, method, path, res.status, res.body?.code]).toEqual([host, method, path, 403, 'ADMIN_HOST_NOT_LOOPBACK']);
        expect(res.body).toMatchObject({
          status: 403,
          detail: `the fault-injection admin endpoint answers requests addressed to a loopback name only; expected Host 127.0.0.1, localhost or [::1] (any port), got Host ${JSON.stringify(host)}`,
        });
      }
    }
    // no Host at all (HTTP/1.0) and an empty one, written on the socket as they are
    for (const [raw, got] of [
      ['GET /_admin/faults HTTP/1.0\r\n\r\n', 'no Host header'],
      ['GET /_admin/faults HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n', 'Host ""'],
    ] as const) {
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(raw));
        socket.on('data', (d) => (text += d));
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
      });
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
        code: 'ADMIN_HOST_NOT_LOOPBACK',
        detail: expect.stringMatching(new RegExp(`got ${got}$`)),
      });
    }
    // the refused PUTs changed nothing
    expect((await call(svc.url, undefined, 'GET', '/_admin/faults')).body.rules).toEqual([]);
    for (const host of [
      `127.0.0.1:${port}`,
      '127.0.0.1',
      `localhost:${port}`,
      'localhost',
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      '[::1]',
    ]) {
      expect([host, (await withHost('GET', '/_admin/faults', host)).status]).toEqual([host, 200]);
    }
  });

  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  it.skipIf(!external)('answers loopback callers only', async () => {
    const dataDir = tempDir('stagecoach-faults-');
    const open = await startService({ dataDir, host: '0.0.0.0', port: 0, logLevel: 'silent' });
    try {
      const res = await fetch(`http://${external}:${open.port}/_admin/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ faults: '*:status=500' }),
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe('ADMIN_LOOPBACK_ONLY');
      expect((await fetch(`http://127.0.0.1:${open.port}/_admin/faults`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('injected faults', () => {
  it('answers with an error status, Retry-After and a problem body naming the rule', async () => {
    await setFaults('GET /migration-assistance/migrations/current:status=503;GET /authentication/*:status=429:retry-after=7');
    const res = await current();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('x-injected-fault')).toBe('GET /migration-assistance/migrations/current:status=503');
    expect(res.body).toMatchObject({
      status: 503,
      code: 'INJECTED_FAULT',
      detail:
        'injected fault: rule `GET /migration-assistance/migrations/current:status=503` answered 503 (fault injection is on; see docs/fault-injection.md)',
    });
    const limited = await call(svc.url, token, 'GET', '/authentication/validation');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    // other routes and the admin endpoint are untouched
    expect((await call(svc.url, token, 'GET', `/migration-assistance/migrations/${m}`)).status).toBe(200);
    await setFaults('*:status=500');
    expect((await call(svc.url, undefined, 'GET', '/_admin/faults')).status).toBe(200);
  });

  it('decides the same way for the same seed and the same requests', async () => {
    const run = async (seed: number) => {
      await setFaults('GET /migration-assistance/migrations/current:status=500:p=0.5', seed);
      const statuses: number[] = [];
      for (let i = 0; i < 24; i++) statuses.push((await current()).status);
      return statuses;
    };
    const first = await run(42);
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await run(42)).toEqual(first);
    expect(await run(43)).not.toEqual(first);
  });

  it('adds latency', async () => {
    await setFaults('GET /migration-assistance/migrations/current:latency=300');
    const started = Date.now();
    expect((await current()).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('resets the connection, before a response and in the middle of an upload', async () => {
    await setFaults('GET /migration-assistance/migrations/current:reset=1;PUT /counterparty-management/*:reset=1');
    await expect(current()).rejects.toThrow('fetch failed');
    const upload = call(svc.url, token, 'PUT', stagingPath(m), {
      raw: frames('json-seq', [person(99)]),
      headers: { 'content-type': 'application/json-seq' },
    });
    await expect(upload).rejects.toThrow('fetch failed');
    await call(svc.url, undefined, 'DELETE', '/_admin/faults');
    expect((await call(svc.url, token, 'GET', `${stagingPath(m)}/${person(99).referenceId}`)).status).toBe(404);
  });

  it('cuts a stream in the middle of a record, and the client resumes with continue-from', async () => {
    for (const [accept, separator] of [
      ['application/jsonl', ''],
      ['application/json-seq', '\x1e'],
    ] as const) {
      await setFaults(`GET ${logs()}:cut=1:after=600`);
      const cut = await readUntilCut(logs(), accept);
      expect(cut.status).toBe(200);
      expect(cut.complete).toBe(false);
      const lines = cut.text.split('\n');
      const partial = lines.pop()!;
      expect(partial.startsWith(separator)).toBe(true);
      expect(() => JSON.parse(partial.slice(separator.length))).toThrow();
      const received = lines.map((l) => JSON.parse(l.slice(separator.length)) as { sequenceNumber: number });
      expect(received.length).toBeGreaterThan(0);
      expect(received.map((e) => e.sequenceNumber)).toEqual(received.map((_, i) => i + 1));

      await call(svc.url, undefined, 'DELETE', '/_admin/faults');
      const rest = await readUntilCut(`${logs()}?continue-from=${received.length + 1}`, accept);
      expect(rest.complete).toBe(true);
      const next = JSON.parse(rest.text.split('\n')[0]!.slice(separator.length)) as { sequenceNumber: number };
      expect(next.sequenceNumber).toBe(received.length + 1);
    }
  });

  it('applies rules given at start (serve --faults) and refuses a bad spec there', async () => {
    const faulty = await startTestService({ faults: 'GET /authentication/jwks:status=500' });
    try {
      expect((await call(faulty.url, undefined, 'GET', '/authentication/jwks')).status).toBe(500);
    } finally {
      await faulty.dispose();
    }
    await expect(startTestService({ faults: 'GET /a:status=700' })).rejects.toThrow(
      'fault rule 1 `GET /a:status=700`: status must be from 400 to 599, got 700',
    );
  });
});
