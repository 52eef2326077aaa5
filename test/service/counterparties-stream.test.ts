import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser as JsonSeqParser } from 'json-text-sequence';
import { openDatabase } from '../../src/service/store/database.js';
import { upsertLiveCounterparties } from '../../src/service/counterparties/store.js';
import { streamActivity } from '../../src/service/counterparties/route-stream.js';
import type { StagedCounterparty } from '../../src/contract/migration.js';
import { call, getToken, startTestService, type TestService } from '../support/service.js';

const STREAM = '/counterparty-management/counterparties/stream';
const JSONL = 'application/jsonl;api-version=2025.1.0';
const JSON_SEQ = 'application/json-seq;api-version=2025.1.0';
const EXTRA = 20_000;
const TOTAL = EXTRA + 5; // + the seeded demo counterparties
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

let svc: TestService;
let token: string;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  // Rows of about 700 bytes, so the whole stream (14 MB) is more than socket buffers hold.
  const note = 'x'.repeat(500);
  const db = openDatabase(svc.dataDir);
  const records = Array.from(
    { length: EXTRA },
    (_, i) =>
      ({ referenceId: id(i + 1), type: 'person', initials: 'S', surname: `Streamed${i + 1}`, ratings: [{ note }] }) as StagedCounterparty,
  );
  db.transaction(() => upsertLiveCounterparties(db, 'demo-broker', records, 'import'))();
  db.close();
});
afterAll(async () => svc?.dispose());

async function streamJsonl(query = ''): Promise<Array<Record<string, any>>> {
  const res = await fetch(`${svc.url}${STREAM}${query}`, { headers: { authorization: `Bearer ${token}`, accept: JSONL } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/jsonl');
  const text = await res.text();
  if (text === '') return [];
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line));
}

const seqs = (objs: Array<Record<string, any>>) => objs.map((o) => o.sequenceNumber as number);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('counterparty stream', () => {
  it('streams every counterparty as JSON Lines with consecutive sequence numbers', async () => {
    const objs = await streamJsonl();
    expect(seqs(objs)).toEqual(range(1, TOTAL));
    expect(objs[5]).toMatchObject({
      sequenceNumber: 6,
      type: 'StreamingPersonCounterparty',
      referenceId: id(1),
      associatedParties: [],
      telephoneNumbers: [],
      relations: [],
      lifecycleStatus: 'counterparty',
      initials: 'S',
      surname: 'Streamed1',
    });
    // staged without a country or a language: shown without them, no default filled in (issue 39)
    expect(objs[5]).not.toHaveProperty('countryCode');
    expect(objs[5]).not.toHaveProperty('preferredCommunicationLanguage');
    expect(objs[3]).toMatchObject({
      type: 'StreamingOrganisationCounterparty',
      organisationName: 'Demo Bakery B.V.',
      cocNumber: '99000001',
      countryOfIncorporation: 'NL',
    });
  });

  it('streams the same objects as RFC 7464 JSON text sequences, read by a reference parser', async () => {
    const res = await fetch(`${svc.url}${STREAM}?continue-from=19000`, { headers: { authorization: `Bearer ${token}`, accept: JSON_SEQ } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json-seq');
    const got: Array<Record<string, any>> = [];
    const parser = new JsonSeqParser();
    parser.on('data', (v: Record<string, any>) => got.push(v));
    const invalid: unknown[] = [];
    parser.on('invalid', (e: unknown) => invalid.push(e));
    await pipeline(Readable.fromWeb(res.body as any), parser);
    expect(invalid).toEqual([]);
    expect(seqs(got)).toEqual(range(19000, TOTAL));
  });

  it('resumes from continue-from with no duplicate and no gap', async () => {
    const first = (await streamJsonl()).slice(0, 12_345);
    const last = seqs(first).at(-1)!;
    const rest = await streamJsonl(`?continue-from=${last + 1}`);
    expect([...seqs(first), ...seqs(rest)]).toEqual(range(1, TOTAL));
    expect(new Set([...first, ...rest].map((o) => o.referenceId)).size).toBe(TOTAL);
  });

  it('treats continue-from=0 as the start and answers an empty stream past the end', async () => {
    expect(seqs((await streamJsonl('?continue-from=0')).slice(0, 2))).toEqual([1, 2]);
    expect(await streamJsonl(`?continue-from=${TOTAL + 1}`)).toEqual([]);
  });

  it.each(['-1', 'abc', '1.5', ''])('refuses continue-from=%s with 400', async (value) => {
    const res = await call(svc.url, token, 'GET', `${STREAM}?continue-from=${value}`, { headers: { accept: JSONL } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'INVALID_QUERY_PARAMETER',
      detail: `query parameter continue-from: expected an integer ≥ 0, got "${value}"`,
    });
  });

  it('needs the stream format named in Accept: 400 when missing or a wildcard, 406 for another type', async () => {
    const without = await fetch(`${svc.url}${STREAM}`, { headers: { authorization: `Bearer ${token}`, accept: '' } });
    expect(without.status).toBe(400);
    for (const accept of ['*/*', 'application/*']) {
      const res = await call(svc.url, token, 'GET', STREAM, { headers: { accept } });
      expect([accept, res.status, res.body.code]).toEqual([accept, 400, 'NOT_ACCEPTABLE']);
    }
    for (const accept of ['application/json', 'text/csv;api-version=2025.1.0']) {
      const res = await call(svc.url, token, 'GET', STREAM, { headers: { accept } });
      expect([accept, res.status, res.body.code]).toEqual([accept, 406, 'NOT_ACCEPTABLE']);
    }
  });

  it('stops reading the database when the client goes away, and keeps serving', async () => {
    const activity = streamActivity(join(svc.dataDir, 'service.db'));
    const before = { ...activity };
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${svc.url}${STREAM}`, { headers: { authorization: `Bearer ${token}`, accept: JSONL } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', () => {
          res.pause(); // stop reading: the service fills the socket and waits for 'drain'
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 300);
        });
      });
      req.on('error', (err) =>
        err.message.includes('aborted') || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err),
      );
      req.end();
    });
    for (let i = 0; i < 100 && activity.open > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(activity.open).toBe(0);
    expect(activity.stopped - before.stopped).toBe(1);
    expect(activity.completed - before.completed).toBe(0);
    expect(activity.rowsRead - before.rowsRead).toBeLessThan(TOTAL);
    const list = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(TOTAL);
  });
});

describe('counterparty stream under fault injection', () => {
  it('is cut mid-record and resumed with continue-from to the same objects, no duplicate, no gap', async () => {
    const faulty = await startTestService({ faults: 'GET /counterparty-management/counterparties/stream:cut=0.7', faultSeed: 7 });
    try {
      const t = await getToken(faulty.url);
      const db = openDatabase(faulty.dataDir);
      const records = Array.from(
        { length: 3000 },
        (_, i) => ({ referenceId: id(i + 1), type: 'person', initials: 'F', surname: `Faulty${i + 1}` }) as StagedCounterparty,
      );
      db.transaction(() => upsertLiveCounterparties(db, 'demo-broker', records, 'import'))();
      db.close();
      const got: number[] = [];
      let cuts = 0;
      for (let request = 0; request < 50; request++) {
        const from = (got.at(-1) ?? 0) + 1;
        const { text, complete } = await new Promise<{ text: string; complete: boolean }>((resolve) => {
          const req = httpRequest(
            `${faulty.url}${STREAM}?continue-from=${from}`,
            { headers: { authorization: `Bearer ${t}`, accept: JSONL } },
            (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (body += c));
              res.on('end', () => resolve({ text: body, complete: res.complete }));
              res.on('error', () => resolve({ text: body, complete: false }));
            },
          );
          req.on('error', () => resolve({ text: '', complete: false }));
          req.end();
        });
        const lines = text.split('\n');
        const partial = lines.pop()!; // after the last newline: empty when whole
        if (!complete) {
          cuts++;
          expect(partial).not.toBe(''); // cut inside a record, never between records
        }
        for (const line of lines) got.push(JSON.parse(line).sequenceNumber);
        if (complete) break;
      }
      expect(cuts).toBeGreaterThan(0);
      expect(got).toEqual(range(1, 3005));
    } finally {
      await faulty.dispose();
    }
  });
});
