/**
 * The readers the client uses on a platform that chose differently (issue 31): ISO 8601 forms,
 * nulls for absent members, token envelopes, staging-result containers, content codings. Each
 * input is built here with the value it must read to, so the truth is known.
 */
import { createServer, type Server } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { counterpartySchema } from '../../src/client/api-counterparties.js';
import { createClient } from '../../src/client/index.js';
import { parseWith, readStagingResults, readTokenBody, withoutNulls } from '../../src/client/tolerant.js';
import { readIsoDateTime } from '../../src/contract/iso8601.js';
import { logEntrySchema } from '../../src/contract/migration.js';

const chunked = (text: string, size = 7) =>
  (async function* () {
    for (let i = 0; i < text.length; i += size) yield Buffer.from(text.slice(i, i + size));
  })();

describe('ISO 8601 date-times', () => {
  it.each([
    ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z'],
    ['2026-01-02T03:04:05.123Z', '2026-01-02T03:04:05.123Z'],
    ['20260102T030405Z', '2026-01-02T03:04:05Z'],
    ['20260102T030405,5+0100', '2026-01-02T03:04:05.5+01:00'],
    ['2026-01-02T03:04:05,123Z', '2026-01-02T03:04:05.123Z'],
    ['2026-01-02T03:04:05+0100', '2026-01-02T03:04:05+01:00'],
    ['2026-01-02T03:04:05-05', '2026-01-02T03:04:05-05:00'],
    ['2026-01-02t03:04:05z', '2026-01-02T03:04:05Z'],
    ['2026-01-02T03:04Z', '2026-01-02T03:04:00Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00Z'],
    // ordinal and week dates (issue 42: `logs` stopped on `2026-333T04:10:54.950Z`)
    ['2026-333T04:10:54.950Z', '2026-11-29T04:10:54.950Z'],
    ['2026333T041054.950Z', '2026-11-29T04:10:54.950Z'],
    ['2026-W48-7T04:10:54.950Z', '2026-11-29T04:10:54.950Z'],
    ['2026W487T041054,950+0100', '2026-11-29T04:10:54.950+01:00'],
    ['2026-W01-1T00:00:00Z', '2025-12-29T00:00:00Z'],
    ['2020-W53-5T00:00:00Z', '2021-01-01T00:00:00Z'],
  ])('reads %s as %s, the same instant', (text, extended) => {
    expect(readIsoDateTime(text)).toBe(extended);
    expect(Date.parse(extended)).toBe(Date.parse(extended.replace(/,/, '.')));
  });

  it.each([
    '2026-01-02T03:04:05', // no zone: which instant is unknown
    '2025-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-02T24:00:00Z',
    '2027-W53-1T00:00:00Z', // 2027 has 52 weeks
    '2025-366T00:00:00Z', // not a leap year
    '2026-01-02',
    'yesterday',
  ])('refuses %s', (text) => {
    expect(readIsoDateTime(text)).toBeUndefined();
  });

  it('reads a log entry with a basic-form timestamp and names a bad one', () => {
    const entry = { component: 'Migration', entityReferenceIds: [], action: 'CreatedMigration', message: 'm', logLevel: 'INFO' };
    expect(parseWith(logEntrySchema, { ...entry, timestamp: '20260102T030405Z' }, 'log entry 1').timestamp).toBe('2026-01-02T03:04:05Z');
    expect(() => parseWith(logEntrySchema, { ...entry, timestamp: '02/01/2026 03:04' }, 'log entry 1')).toThrow(
      'log entry 1 from the service is not of the expected shape: timestamp: expected an ISO 8601 date-time with a zone (e.g. 2026-01-02T03:04:05Z or 20260102T030405Z), got "02/01/2026 03:04"',
    );
  });
});

describe('null for an absent member', () => {
  it('is read as absent at any depth, nulls inside arrays kept', () => {
    expect(withoutNulls({ a: null, b: { c: null, d: 1 }, e: [null, { f: null }] })).toEqual({ b: { d: 1 }, e: [null, {}] });
  });
  it('lets a streamed person with null optional fields through, without the nulls', () => {
    const person = {
      type: 'StreamingPersonCounterparty',
      referenceId: 'p1',
      surnamePrefix: null,
      surname: 'Jansen',
      nationalities: null,
      income: null,
    };
    expect(parseWith(counterpartySchema, person, 'streamed counterparty 1')).toEqual({
      type: 'StreamingPersonCounterparty',
      referenceId: 'p1',
      surname: 'Jansen',
    });
  });
});

describe('token response shapes', () => {
  const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDB9.c2ln';
  it('reads the token inside an envelope, expires_in as digits too', () => {
    expect(readTokenBody(JSON.stringify({ data: { accessToken: JWT, expiresIn: 300 } }))).toEqual({ token: JWT, expiresIn: 300 });
    expect(readTokenBody(JSON.stringify({ result: { access_token: JWT, expires_in: '120' } }))).toEqual({ token: JWT, expiresIn: 120 });
    expect(readTokenBody(JSON.stringify({ data: { accessToken: JWT, refreshToken: null } }))).toEqual({ token: JWT });
  });
  it('names the keys of an envelope it does not understand, never their values', () => {
    expect(() => readTokenBody(JSON.stringify({ data: { bearer: 'secret-value' } }))).toThrow(
      'token response not understood: expected a JWT, a JSON string or an object with access_token (also inside data, result, response or payload), got a JSON object with keys data (data: keys bearer)',
    );
  });
});

describe('staging results in a JSON container', () => {
  const ok = (id: string) => ({ referenceId: id, isSuccessful: true, errors: [] });
  const refused = { referenceId: 'c', isSuccessful: false, errors: [{ field: 'initials', message: 'MISSING_REQUIRED_FIELD' }] };
  const want = [ok('a'), ok('b'), refused];
  it.each([
    ['a pretty array', JSON.stringify(want, null, 2)],
    ['results, one item a line', `{"results": [\n${want.map((r) => JSON.stringify(r)).join(',\n')}\n]}\n`],
    ['items, pretty', JSON.stringify({ items: want, total: 3 }, null, 2)],
    ['data', JSON.stringify({ meta: { n: 3 }, data: want })],
  ])('reads %s served as application/json, in small chunks', async (_name, body) => {
    expect(await readStagingResults(chunked(body), 'application/json; charset=utf-8')).toEqual(want);
  });
  it('reads errors: null on a refusal-free result and a single result object', async () => {
    expect(
      await readStagingResults(chunked('{\n "referenceId": "a",\n "isSuccessful": true,\n "errors": null\n}'), 'application/json'),
    ).toEqual([ok('a')]);
  });
  it('refuses an object without a result list, naming its keys', async () => {
    await expect(readStagingResults(chunked('{"status": "ok", "count": 3}'), 'application/json')).rejects.toThrow(
      'staging response not understood: a JSON object with keys status, count; expected an array of results, or an object whose results, items or data member is that array',
    );
  });
});

describe('content codings the request did not ask for', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => server?.close(r));
    server = undefined;
  });
  const JWKS = [{ kty: 'RSA', e: 'AQAB', kid: 'k1', n: 'abc' }];
  const serve = async (coding: string, body: Buffer) => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
      res.end(body);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    return createClient({ baseUrl: `http://127.0.0.1:${port}`, clientId: 'c', clientSecret: 's', brokerKey: 'b', labelReferenceId: 'l' });
  };
  const text = Buffer.from(JSON.stringify(JWKS));
  it.each([
    ['gzip', gzipSync(text)],
    ['x-gzip', gzipSync(text)],
    ['deflate', deflateSync(text)],
    ['deflate', deflateRawSync(text)],
    ['br', brotliCompressSync(text)],
    ['gzip, br', brotliCompressSync(gzipSync(text))],
    ['identity', text],
  ])('decodes %s', async (coding, body) => {
    const client = await serve(coding, body);
    try {
      expect((await client.auth.jwks()).keys).toEqual(JWKS);
    } finally {
      await client.close();
    }
  });
  it('refuses a coding it cannot decode, by name', async () => {
    const client = await serve('zstd', text);
    try {
      await expect(client.auth.jwks()).rejects.toThrow(
        'GET /authentication/jwks answered 200 with Content-Encoding "zstd", which the client cannot decode (it accepts gzip, deflate, br)',
      );
    } finally {
      await client.close();
    }
  });
});
