import { describe, expect, it } from 'vitest';
import {
  peekJwtClaims,
  readDefinitions,
  readJobId,
  readPage,
  readStagingResults,
  readTokenBody,
  scopesOf,
} from '../../src/client/tolerant.js';
import { isRetryable, parseRetryAfter, retryDelayMs } from '../../src/client/retry.js';
import { ClientError, parseProblem, responseError } from '../../src/client/errors.js';
import { EXIT, exitCodeFor } from '../../src/cli/run.js';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDAsInNjb3BlIjoiL2NvdW50ZXJwYXJ0eS1tYW5hZ2VtZW50In0.c2ln';
const chunks = (text: string) =>
  (async function* () {
    yield Buffer.from(text);
  })();
const R1 = { referenceId: 'a', isSuccessful: true, errors: [] };
const R2 = { referenceId: 'b', isSuccessful: false, errors: [{ field: 'initials', message: 'MISSING_REQUIRED_FIELD' }] };

describe('token response reader', () => {
  it('reads the OAuth object, a bare JWT, a JSON string and the camelCase and token names', () => {
    expect(readTokenBody(JSON.stringify({ access_token: JWT, token_type: 'Bearer', expires_in: 300 }))).toEqual({
      token: JWT,
      expiresIn: 300,
    });
    expect(readTokenBody(`${JWT}\n`)).toEqual({ token: JWT });
    expect(readTokenBody(JSON.stringify(JWT))).toEqual({ token: JWT });
    expect(readTokenBody(JSON.stringify({ accessToken: JWT, expiresIn: 60 }))).toEqual({ token: JWT, expiresIn: 60 });
    expect(readTokenBody(JSON.stringify({ token: JWT }))).toEqual({ token: JWT });
  });
  it('refuses a body it does not understand without echoing it', () => {
    expect(() => readTokenBody('{"secretish":"x"}')).toThrow(
      'token response not understood: expected a JWT, a JSON string or an object with access_token (also inside data, result, response or payload), got a JSON object with keys secretish',
    );
  });
  it('reads exp and the scopes from the payload without verifying it', () => {
    const claims = peekJwtClaims(JWT);
    expect(claims).toEqual({ exp: 1700000000, scope: '/counterparty-management' });
    expect(scopesOf(claims)).toEqual(['/counterparty-management']);
    expect(scopesOf({ scp: ['/a', '/b'] })).toEqual(['/a', '/b']);
  });
});

describe('job id reader', () => {
  it('takes a JSON string, a bare id or an object with referenceId or jobId', () => {
    expect(readJobId('"6f1c0e2a-0000-4000-8000-000000000001"')).toBe('6f1c0e2a-0000-4000-8000-000000000001');
    expect(readJobId('6f1c0e2a-0000-4000-8000-000000000001')).toBe('6f1c0e2a-0000-4000-8000-000000000001');
    expect(readJobId('{"referenceId":"j1"}')).toBe('j1');
    expect(readJobId('{"jobId":"j2"}')).toBe('j2');
    expect(() => readJobId('[1]')).toThrow('job-start response not understood: expected a JSON string job id, got "[1]"');
  });
});

describe('staging results reader', () => {
  it('reads a JSON array, JSON Lines, json-seq and a {results} wrapper alike', async () => {
    const want = [R1, R2];
    expect(await readStagingResults(chunks(JSON.stringify(want)), 'application/json')).toEqual(want);
    expect(await readStagingResults(chunks(want.map((r) => JSON.stringify(r)).join('\n') + '\n'), 'application/jsonl')).toEqual(want);
    expect(await readStagingResults(chunks(want.map((r) => `\x1e${JSON.stringify(r)}\n`).join('')), 'application/json-seq')).toEqual(want);
    expect(await readStagingResults(chunks(JSON.stringify({ results: want })), 'application/json')).toEqual(want);
  });
  it('fills in missing errors of a successful result and reads a single-record JSON Lines body', async () => {
    expect(await readStagingResults(chunks('{"referenceId":"a","isSuccessful":true}\n'), undefined)).toEqual([R1]);
  });
  it('reads an answer cut into chunks anywhere as it reads it whole, and hands results over one by one', async () => {
    // Generated answers: staged and refused results, names with multi-byte characters, cut at
    // every few bytes (inside records and inside characters), and a few answers with a bad record.
    let seed = 11;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const cutInto = (bytes: Buffer) =>
      (async function* () {
        for (let at = 0; at < bytes.length; ) {
          const n = 1 + Math.floor(random() * 90);
          yield bytes.subarray(at, at + n);
          at += n;
        }
      })();
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (v) => ({ ok: v }),
        (e: Error) => ({ error: e.message }),
      );
    for (let trial = 0; trial < 60; trial++) {
      const results = Array.from({ length: 1 + Math.floor(random() * 40) }, (_, i) =>
        random() < 0.8
          ? { referenceId: `r${trial}-${i}-Łukasz€`, isSuccessful: true, errors: [] }
          : { referenceId: `r${trial}-${i}`, isSuccessful: false, errors: [{ field: 'surname', message: 'MISSING_REQUIRED_FIELD' }] },
      );
      const frames = results.map((r) => `\x1e${JSON.stringify(r)}\n`);
      const bad = random();
      // A record cut short (no LF before the next RS), or one that is not JSON.
      if (bad < 0.15) frames[Math.floor(random() * frames.length)] = '\x1e{"referenceId":"x","isSuccessful":true';
      else if (bad < 0.3) frames[Math.floor(random() * frames.length)] = '\x1e{not json}\n';
      const body = Buffer.from((random() < 0.2 ? ' \n' : '') + frames.join(''));
      const whole = await outcome(readStagingResults(chunks(body.toString()), 'application/json-seq'));
      expect(await outcome(readStagingResults(cutInto(body), 'application/json-seq'))).toEqual(whole);
      const seen: unknown[] = [];
      const visited = await outcome(readStagingResults(cutInto(body), 'application/json-seq', (r, i) => seen.push([i, r])));
      if ('ok' in whole) {
        expect(visited).toEqual({ ok: [] });
        expect(seen).toEqual((whole.ok as unknown[]).map((r, i) => [i, r]));
      } else expect(visited).toEqual(whole);
    }
  });
  it('names the record that does not fit the result shape', async () => {
    await expect(readStagingResults(chunks('[{"referenceId":"a"}]'), 'application/json')).rejects.toThrow(
      'staging result 1 from the service is not of the expected shape: isSuccessful: Invalid input: expected boolean, received undefined',
    );
  });
});

describe('process definitions reader', () => {
  const def = {
    referenceId: '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f',
    type: 'LoanOrigination',
    code: 'CleanOrder',
    name: { 'en-GB': 'Clean order' },
    isActive: true,
    statuses: [],
    updatedOn: '2025-01-01T00:00:00Z',
  };
  it('returns an array for one object, an array or an items envelope', () => {
    expect(readDefinitions(def)).toEqual([def]);
    expect(readDefinitions([def, def])).toEqual([def, def]);
    expect(readDefinitions({ items: [def] })).toEqual([def]);
    expect(readDefinitions([])).toEqual([]);
  });
});

describe('retry rules', () => {
  const err = (status?: number) =>
    new ClientError(status === undefined ? 'NETWORK_ERROR' : 'HTTP_ERROR', 'x', { status, method: 'GET', path: '/' });
  it('retries idempotent requests on network errors, 429 and 5xx, and nothing else', () => {
    expect([undefined, 429, 500, 502, 503, 504, 400, 404, 409].map((s) => isRetryable(err(s), 'idempotent'))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
  it('retries unsent-only requests (POST) on 429 only, never on a 5xx or an unclear network error', () => {
    expect([undefined, 429, 500, 503].map((s) => isRetryable(err(s), 'unsent-only'))).toEqual([false, true, false, false]);
  });
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
  it('caps Retry-After and the backoff, and jitters below the exponential bound', () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelayMs(0, opts, 60_000)).toBe(1000);
    expect(retryDelayMs(3, opts, undefined, () => 0.5)).toBe(400);
    expect(retryDelayMs(10, opts, undefined, () => 1)).toBe(1000);
  });
});

describe('error messages', () => {
  it('says which settings to check when the credentials are refused', () => {
    const e = responseError({
      method: 'GET',
      path: '/authentication/token/demo-broker/demo-label',
      status: 401,
      group: 'authentication',
      problem: { title: 'Unauthorized', status: 401, detail: 'client id and secret are not valid' },
      tokenRequest: true,
    });
    expect(e.code).toBe('INVALID_CLIENT_CREDENTIALS');
    expect(e.message).toBe(
      'the service refused the client credentials (401 on GET /authentication/token/demo-broker/demo-label): client id and secret are not valid; check STAGECOACH_CLIENT_ID / STAGECOACH_CLIENT_SECRET (or --client-id / --client-secret)',
    );
  });
  it('names the scopes of the token and the domain to enable on a 403', () => {
    const e = responseError({
      method: 'GET',
      path: '/lodging/processes/p/messages/m',
      status: 403,
      group: 'lodging',
      problem: { title: 'Forbidden', status: 403 },
      tokenScopes: ['/counterparty-management'],
      clientId: 'scoped-client',
    });
    expect(e.code).toBe('SCOPE_NOT_GRANTED');
    expect(e.message).toBe(
      "this client's token is limited to /counterparty-management; ask the operator to enable /lodging for client scoped-client (403 on GET /lodging/processes/p/messages/m): Forbidden",
    );
  });
  it('lists the supported versions on a refused api-version', () => {
    const e = responseError({
      method: 'GET',
      path: '/lodging/x',
      status: 400,
      group: 'lodging',
      version: '2099.1.0',
      problem: { title: 'Bad request', status: 400, code: 'UNSUPPORTED_API_VERSION', detail: 'api-version 2099.1.0 is not served' },
      supportedVersions: ['2022.1.0', '2025.1.0'],
    });
    expect(e.message).toBe(
      "the service refused api-version 2099.1.0 for /lodging (400 on GET /lodging/x): api-version 2099.1.0 is not served; the service supports 2022.1.0, 2025.1.0 (see X-Supported-Versions of GET /authentication/jwks), and set the client's versions option for this group",
    );
  });
  it('passes a conflict through with the detail of the service', () => {
    const e = responseError({
      method: 'POST',
      path: '/migration-assistance/migrations',
      status: 409,
      group: 'migration-assistance',
      problem: { title: 'Conflict', status: 409, code: 'MIGRATION_ALREADY_ACTIVE', detail: 'migration m1 is still active' },
    });
    expect([e.code, e.message, e.status]).toEqual([
      'MIGRATION_ALREADY_ACTIVE',
      'migration m1 is still active (409 on POST /migration-assistance/migrations)',
      409,
    ]);
  });
  it('reads a refusal with another 4xx and a message only (plain text) as a refused request, exit 1, not as an outage', () => {
    // A platform that refuses a second migration with 422 and a text body (docs/contract-gaps.md).
    const detail = 'migration m1 is still active';
    const e = responseError({
      method: 'POST',
      path: '/migration-assistance/migrations',
      status: 422,
      group: 'migration-assistance',
      problem: parseProblem(detail, 422),
    });
    expect([e.code, e.message, e.status, exitCodeFor(e)]).toEqual([
      'REQUEST_REFUSED',
      'migration m1 is still active (422 on POST /migration-assistance/migrations)',
      422,
      EXIT.failed,
    ]);
    const statuses = [400, 404, 405, 409, 410, 413, 415, 418, 422, 429, 500, 503];
    expect(
      statuses.map((status) => exitCodeFor(responseError({ method: 'PUT', path: '/x', status, group: 'x', problem: undefined }))),
    ).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4]);
  });
  it("reads the message of another platform's error shape, or of plain text", () => {
    expect(parseProblem('{"error": {"code": "E42", "message": "migration m1 is still active"}}', 409)).toEqual({
      title: 'migration m1 is still active',
      detail: 'migration m1 is still active',
      status: 409,
      code: 'E42',
    });
    expect(parseProblem('{"message": "no such migration"}', 404)).toMatchObject({ detail: 'no such migration', status: 404 });
    expect(parseProblem('{"error": "invalid request"}', 400)).toMatchObject({ detail: 'invalid request', status: 400 });
    expect(parseProblem('migration m1 is still active', 409)).toEqual({
      title: 'migration m1 is still active',
      detail: 'migration m1 is still active',
      status: 409,
    });
    // the whole message of a long text body, not its first 200 characters
    const long = `migration m1 of this tenant is still Active; ${'complete it or cancel it; '.repeat(10)}then register a new one`;
    expect(parseProblem(long, 422)?.detail).toBe(long);
    expect(responseError({ method: 'POST', path: '/m', status: 422, group: 'm', problem: parseProblem(long, 422) }).message).toBe(
      `${long} (422 on POST /m)`,
    );
    // a long text in one line, cut, saying how much more there was
    const text = `${'x'.repeat(2500)}`;
    expect(parseProblem(text, 502)?.detail).toBe(`${text.slice(0, 2000)}… (500 more characters)`);
    // an HTML page as its status and title, never its markup (issue 42: a proxy's 413 was printed raw)
    const nginx =
      '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
    expect(parseProblem(nginx, 413)?.detail).toBe('413 Request Entity Too Large');
    const gateway = `<!DOCTYPE html><html><head><style>${'p{}'.repeat(900)}</style></head><body><h1>Bad&nbsp;Gateway &amp; more</h1>\n<p>trace</p></body></html>`;
    expect(parseProblem(gateway, 502)?.detail).toBe('502 Bad Gateway & more (an HTML page)');
    expect(responseError({ method: 'PUT', path: '/s', status: 413, group: 's', problem: parseProblem(nginx, 413) }).message).not.toMatch(
      /[<>\n]/,
    );
  });
});

describe('page reader', () => {
  it("reads {data, total} as the spec's envelope with the offset and limit asked for, and passes other shapes on", () => {
    const spec = { items: [1], total: 3, offset: 2, limit: 1 };
    expect(readPage(spec, { offset: 9 })).toBe(spec);
    expect(readPage({ data: [1, 2], total: 7 }, { offset: 4, limit: 2 })).toEqual({ items: [1, 2], total: 7, offset: 4, limit: 2 });
    expect(readPage({ data: [1, 2], total: 7 }, {})).toEqual({ items: [1, 2], total: 7, offset: 0, limit: 2 });
    expect(readPage({ results: [] }, {})).toEqual({ results: [] });
  });
});
