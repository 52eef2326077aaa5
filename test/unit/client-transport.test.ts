/**
 * The client's HTTP behaviour against a scripted node:http server: token sharing and refresh,
 * retries by request kind, Retry-After, timeouts, stream resumption. The real service is
 * exercised in test/e2e/client-*.test.ts; here each rule is isolated.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, ClientError, type ClientOptions, type StagecoachClient } from '../../src/client/index.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => unknown;

/** The ClientError a call fails with (fails the test if it succeeds). */
const failure = (p: Promise<unknown>): Promise<ClientError> =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as ClientError,
  );
interface Fake {
  url: string;
  requests: Array<{ method: string; url: string; authorization?: string; accept?: string }>;
  close(): Promise<void>;
}

const servers: Server[] = [];
const clients: StagecoachClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((r) => {
          s.closeAllConnections();
          s.close(r);
        }),
    ),
  );
});

function jwt(expSecondsFromNow: number, extra: Record<string, unknown> = {}): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part({ exp: Math.floor(Date.now() / 1000) + expSecondsFromNow, scope: '/migration-assistance', ...extra })}.c2ln`;
}

/** A server that answers the token route itself (counting) and the rest with `routes`. */
async function fake(
  routes: Handler,
  tokenBody: () => string = () => JSON.stringify({ access_token: jwt(300), token_type: 'Bearer', expires_in: 300 }),
): Promise<Fake & { tokens: number }> {
  const state = { tokens: 0 };
  const requests: Fake['requests'] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    if (req.url!.startsWith('/authentication/token/')) {
      state.tokens++;
      await new Promise((r) => setTimeout(r, 20)); // long enough for concurrent callers to pile up
      res.writeHead(200, { 'content-type': 'application/json' }).end(tokenBody());
      return;
    }
    requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, accept: req.headers.accept });
    await routes(req, res, ++n);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, { url, requests, close: async () => {} });
}

function client(url: string, extra: Partial<ClientOptions> = {}): StagecoachClient {
  const c = createClient({
    baseUrl: url,
    clientId: 'id',
    clientSecret: 'secret',
    brokerKey: 'b',
    labelReferenceId: 'l',
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    ...extra,
  });
  clients.push(c);
  return c;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res
    .writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers })
    .end(JSON.stringify(body));
const MIGRATION = {
  referenceId: '11111111-1111-4111-8111-111111111111',
  stagingStatus: 'Pending',
  importStatus: 'Pending',
  numberOfStagedEntities: 0,
  numberOfImportedEntities: 0,
  activity: 'Active',
  components: [],
};

describe('access tokens', () => {
  it('shares one token fetch between concurrent callers and sends it as Bearer with the group version in Accept', async () => {
    const f = await fake((_req, res) => json(res, 200, MIGRATION));
    const c = client(f.url, { versions: { 'migration-assistance': '2030.2.0' } });
    await Promise.all(Array.from({ length: 8 }, () => c.migrations.get(MIGRATION.referenceId)));
    expect(f.tokens).toBe(1);
    expect(new Set(f.requests.map((r) => r.authorization)).size).toBe(1);
    expect(f.requests[0]!.authorization).toMatch(/^Bearer eyJ/);
    expect(f.requests[0]!.accept).toBe('application/json;api-version=2030.2.0');
  });

  it('fetches a new token once on a 401 and repeats the request, even a POST', async () => {
    const f = await fake((_req, res, n) =>
      n === 1 ? json(res, 401, { title: 'Unauthorized', status: 401, code: 'TOKEN_EXPIRED' }) : json(res, 201, MIGRATION),
    );
    const c = client(f.url);
    expect((await c.migrations.create(['Counterparties'])).referenceId).toBe(MIGRATION.referenceId);
    expect([f.tokens, f.requests.length]).toEqual([2, 2]);
  });

  it('gives up after the second 401 with a message that does not contain the token', async () => {
    const f = await fake((_req, res) =>
      json(res, 401, {
        title: 'Unauthorized',
        status: 401,
        code: 'INVALID_TOKEN',
        detail: 'token signature, algorithm or claims are not valid',
      }),
    );
    const c = client(f.url);
    const err = await failure(c.migrations.get(MIGRATION.referenceId));
    expect(err).toBeInstanceOf(ClientError);
    expect(err.message).toBe(
      `the service refused the access token even after a fresh one was fetched (401 on GET /migration-assistance/migrations/${MIGRATION.referenceId}): token signature, algorithm or claims are not valid; check that the service's signing keys did not change and that the clock of this machine is right`,
    );
    expect(JSON.stringify({ m: err.message, c: err.context })).not.toContain('eyJ');
    expect(f.tokens).toBe(2);
  });

  it('refreshes shortly before exp without a 401 (token of 2 s: a fifth of its life before expiry)', async () => {
    const f = await fake(
      (_req, res) => json(res, 200, MIGRATION),
      () => JSON.stringify(jwt(2)),
    );
    const c = client(f.url);
    await c.migrations.get(MIGRATION.referenceId);
    await new Promise((r) => setTimeout(r, 1700));
    await c.migrations.get(MIGRATION.referenceId);
    expect(f.tokens).toBe(2);
  });
});

describe('retries', () => {
  it('retries a GET through 503s and honours Retry-After', async () => {
    const f = await fake((_req, res, n) =>
      n < 3 ? json(res, 503, { title: 'Service unavailable', status: 503 }, { 'retry-after': '0' }) : json(res, 200, MIGRATION),
    );
    const c = client(f.url);
    expect((await c.migrations.get(MIGRATION.referenceId)).referenceId).toBe(MIGRATION.referenceId);
    expect(f.requests.length).toBe(3);
  });

  it('waits as long as Retry-After says (capped by maxDelayMs)', async () => {
    const f = await fake((_req, res, n) =>
      n === 1 ? json(res, 429, { title: 'Too many requests', status: 429 }, { 'retry-after': '1' }) : json(res, 200, MIGRATION),
    );
    const c = client(f.url, { retry: { baseDelayMs: 1, maxDelayMs: 5_000 } });
    const t0 = Date.now();
    await c.migrations.get(MIGRATION.referenceId);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
  });

  it('does not retry a POST that got a 503: it may have created the migration', async () => {
    const f = await fake((_req, res) =>
      json(res, 503, { title: 'Service unavailable', status: 503, code: 'SERVICE_UNAVAILABLE', detail: 'overloaded' }),
    );
    const c = client(f.url);
    const err = await failure(c.migrations.create(['Counterparties']));
    expect([err.code, err.attempts, f.requests.length]).toEqual(['SERVICE_UNAVAILABLE', 1, 1]);
  });

  it('does not retry a job start after a 502, and retries it after a 429 (refused unprocessed)', async () => {
    const f = await fake((req, res, n) => {
      if (req.url!.endsWith('/jobs/import')) return json(res, 502, { title: 'Bad gateway', status: 502 });
      return n === 1
        ? json(res, 429, { title: 'Too many requests', status: 429 }, { 'retry-after': '0' })
        : res.writeHead(200, { 'content-type': 'application/json' }).end('"job-1"');
    });
    const c = client(f.url);
    expect(await c.jobs.validateStaging('m')).toBe('job-1');
    await expect(c.jobs.import('m')).rejects.toMatchObject({ code: 'INTERNAL_ERROR', attempts: 1 });
    expect(f.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PUT /migration-assistance/migrations/m/jobs/validate-staging',
      'PUT /migration-assistance/migrations/m/jobs/validate-staging',
      'PUT /migration-assistance/migrations/m/jobs/import',
    ]);
  });

  it('stops at the retry budget and says how many attempts it made', async () => {
    const f = await fake((_req, res) => json(res, 503, { title: 'Service unavailable', status: 503, detail: 'down' }));
    const c = client(f.url, { retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    const err = await failure(c.migrations.get('m'));
    expect(err.message).toBe(
      'the service failed (503 on GET /migration-assistance/migrations/m): down; try again later, and see the service log if it persists (gave up after 4 attempts)',
    );
    expect(f.requests.length).toBe(4);
  });

  it('stops waiting at once when the signal aborts', async () => {
    const f = await fake((_req, res) => json(res, 503, { title: 'x', status: 503 }, { 'retry-after': '30' }));
    const c = client(f.url, { retry: { maxDelayMs: 60_000 } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await expect(c.migrations.get('m', { signal: ac.signal })).rejects.toMatchObject({
      code: 'ABORTED',
      message: 'GET /migration-assistance/migrations/m was aborted',
    });
  });
});

describe('staging upload', () => {
  it('re-sends the batch when the connection breaks while the results arrive', async () => {
    const r = (id: string) => `\x1e${JSON.stringify({ referenceId: id, isSuccessful: true, errors: [] })}\n`;
    const bodies: string[] = [];
    const f = await fake(async (req, res, n) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json-seq' });
      if (n === 1) {
        res.write(r('a'));
        setTimeout(() => res.destroy(), 20);
        return;
      }
      res.end(r('a') + r('b'));
    });
    const c = client(f.url);
    const results = await c.migrations.stageCounterparties('m', '\x1e{"referenceId":"a"}\n\x1e{"referenceId":"b"}\n', {
      format: 'json-seq',
    });
    expect(results.map((x) => x.referenceId)).toEqual(['a', 'b']);
    expect(bodies).toEqual(['\x1e{"referenceId":"a"}\n\x1e{"referenceId":"b"}\n', '\x1e{"referenceId":"a"}\n\x1e{"referenceId":"b"}\n']);
    expect(f.requests[0]!.accept).toBe('application/json-seq;api-version=2025.1.0, application/json;api-version=2025.1.0;q=0.9');
  });
});

describe('lodging send after a lost answer', () => {
  it('returns the message when the repeated send is refused with 409 because the first one went through', async () => {
    const message = {
      referenceId: '22222222-2222-4222-8222-222222222222',
      messageType: 'CleanOrder',
      status: 'Sent',
      createdOn: '2025-01-01T00:00:00Z',
      sentOn: '2025-01-01T00:00:01Z',
    };
    const f = await fake((req, res, n) => {
      if (req.method === 'GET') return json(res, 200, message);
      if (n === 1) return req.socket.destroy(); // the send arrives, its answer is lost
      return json(res, 409, { title: 'Conflict', status: 409, code: 'MESSAGE_NOT_DRAFT', detail: 'message is Sent' });
    });
    const c = client(f.url);
    expect(await c.lodging.send('p', message.referenceId)).toEqual(message);
    expect(f.requests.map((r) => r.method)).toEqual(['PUT', 'PUT', 'GET']);
  });
});

describe('timeouts', () => {
  it('fails with TIMEOUT when the headers do not come in time, after retrying', async () => {
    const f = await fake(() => {
      /* never answers */
    });
    const c = client(f.url, { timeouts: { headersMs: 100 }, retry: { retries: 1, baseDelayMs: 1 } });
    const err = await failure(c.migrations.get('m'));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toBe(
      `timed out waiting for the response headers on GET /migration-assistance/migrations/m at ${f.url} (UND_ERR_HEADERS_TIMEOUT); raise the client's timeouts if the service is slow (gave up after 2 attempts)`,
    );
  });

  it('reports a refused connection with a hint to start the service', async () => {
    const c = client('http://127.0.0.1:1', { retry: { retries: 0 } });
    const err = await failure(c.migrations.get('m'));
    expect(err.code).toBe('NETWORK_ERROR');
    expect(err.message).toMatch(
      /^could not complete GET \/authentication\/token\/b\/l at http:\/\/127\.0\.0\.1:1: .*\(ECONNREFUSED\); is the service running at http:\/\/127\.0\.0\.1:1\? \(start one with `stagecoach serve`\)$/,
    );
  });
});

describe('resumable streams', () => {
  const rec = (n: number) => JSON.stringify({ sequenceNumber: n, type: 'StreamingPersonCounterparty', referenceId: `r${n}` });

  it('resumes after a cut mid-record with continue-from = last + 1, without duplicates or gaps', async () => {
    const f = await fake((req, res, n) => {
      const from = Number(new URL(req.url!, 'http://x').searchParams.get('continue-from') ?? 1);
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      if (n === 1) {
        res.write(`${rec(1)}\n${rec(2)}\n${rec(3).slice(0, 20)}`);
        setTimeout(() => res.destroy(), 20);
        return;
      }
      // The second answer repeats record 3 once on purpose: the client must not yield it twice.
      const lines = [];
      for (let i = from; i <= 6; i++) lines.push(rec(i));
      res.end(lines.join('\n') + '\n');
    });
    const c = client(f.url);
    const resumes: unknown[] = [];
    const seen: number[] = [];
    for await (const cp of c.counterparties.stream({ format: 'jsonl', onResume: (i) => resumes.push(i) })) seen.push(cp.sequenceNumber!);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(f.requests.map((r) => r.url)).toEqual([
      '/counterparty-management/counterparties/stream',
      '/counterparty-management/counterparties/stream?continue-from=3',
    ]);
    expect(resumes).toEqual([{ continueFrom: 3, reason: expect.stringMatching(/^connection ended early: /), attempt: 1 }]);
    expect(f.requests[0]!.accept).toBe('application/jsonl;api-version=2025.1.0');
  });

  it('treats a truncated final json-seq record of a cleanly ended response as a cut, never yielding it', async () => {
    const seq = (n: number) => `\x1e${rec(n)}\n`;
    const f = await fake((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json-seq' });
      res.end(n === 1 ? seq(1) + seq(2).slice(0, 15) : seq(2));
    });
    const c = client(f.url);
    const seen: string[] = [];
    for await (const cp of c.counterparties.stream()) seen.push(cp.referenceId);
    expect(seen).toEqual(['r1', 'r2']);
    expect(f.requests[1]!.url).toBe('/counterparty-management/counterparties/stream?continue-from=2');
  });

  it('gives up with STREAM_TRUNCATED after maxResumes cuts in a row without a new record', async () => {
    const f = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      res.end(rec(1).slice(0, 10));
    });
    const c = client(f.url, { stream: { maxResumes: 2 } });
    const err = await failure(
      (async () => {
        for await (const _ of c.counterparties.stream({ format: 'jsonl' })) void _;
      })(),
    );
    expect(err.code).toBe('STREAM_TRUNCATED');
    expect(err.message).toBe(
      'GET /counterparty-management/counterparties/stream was cut 3 times in a row without a new record (last: record cut short at byte 0 (last line is incomplete JSON and has no final newline)); last counter received: none; resume later with continue-from omitted',
    );
    expect(f.requests.length).toBe(3);
  });

  it('streamUnchecked hands out records of any shape with a referenceId (nulls read as absent, the counter under sequenceNumber), where stream stops at the first', async () => {
    const lines = [
      { seq: 1, type: 'StreamingPersonCounterparty', referenceId: 'r1', surname: 42, telephoneNumbers: 'none', firstName: null },
      { seq: 2, type: 'StreamingPersonCounterparty', referenceId: 'r2', surname: 'Jansen' },
    ];
    const f = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      res.end(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    });
    const c = client(f.url);
    const seen: unknown[] = [];
    for await (const cp of c.counterparties.streamUnchecked({ format: 'jsonl' })) seen.push(cp);
    expect(seen).toEqual([
      { seq: 1, sequenceNumber: 1, type: 'StreamingPersonCounterparty', referenceId: 'r1', surname: 42, telephoneNumbers: 'none' },
      { seq: 2, sequenceNumber: 2, type: 'StreamingPersonCounterparty', referenceId: 'r2', surname: 'Jansen' },
    ]);
    const err = await failure(
      (async () => {
        for await (const _ of c.counterparties.stream({ format: 'jsonl' })) void _;
      })(),
    );
    expect(err.message).toBe(
      'streamed counterparty 1 from the service is not of the expected shape: telephoneNumbers: Invalid input: expected array, received string',
    );
  });

  it('streamUnchecked refuses a record without a string referenceId, naming the record and the field', async () => {
    const f = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      res.end(`${JSON.stringify({ sequenceNumber: 1, type: 'StreamingPersonCounterparty', referenceId: 7 })}\n`);
    });
    const err = await failure(
      (async () => {
        for await (const _ of client(f.url).counterparties.streamUnchecked({ format: 'jsonl' })) void _;
      })(),
    );
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.message).toBe(
      'streamed counterparty 1 from the service is not of the expected shape: referenceId: Invalid input: expected string, received number',
    );
  });

  it('closes the connection when the consumer stops early', async () => {
    let closed = false;
    const f = await fake((req, res) => {
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      let i = 0;
      const timer = setInterval(() => res.write(`${rec(++i)}\n`), 5);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
      req.on('close', () => clearInterval(timer));
    });
    const c = client(f.url);
    for await (const cp of c.counterparties.stream({ format: 'jsonl' })) if (cp.sequenceNumber === 3) break;
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(true);
  });
});
