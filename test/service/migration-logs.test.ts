import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser as JsonSeqParser } from 'json-text-sequence';
import { call, getToken, OTHER, startTestService, type TestService } from '../support/service.js';
import { createMigration, id, person, runJob, stage, stagingPath } from '../cases/migration/records.js';

let svc: TestService;
let token: string;
let m: string;
/** Every entry of the migration, read once without filters. */
let all: Array<Record<string, any>>;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  m = await createMigration(svc.url, token);
  await stage(svc.url, token, m, [person(1), person(2, { nationalities: ['XX'] }), { referenceId: id(3), type: 'person' }]);
  await runJob(svc.url, token, m, 'validate-staging');
  await call(svc.url, token, 'DELETE', `${stagingPath(m)}/${id(2)}`);
  all = await jsonl('');
});
afterAll(async () => svc?.dispose());

const logs = () => `/migration-assistance/migrations/${m}/logs/stream`;

async function jsonl(query: string): Promise<Array<Record<string, any>>> {
  const res = await fetch(`${svc.url}${logs()}${query}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/jsonl' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/jsonl');
  const text = await res.text();
  return text === ''
    ? []
    : text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
}

describe('migration log stream', () => {
  it('streams every entry as JSON Lines, numbered from 1, in the order things happened', async () => {
    expect(all.map((e) => [e.sequenceNumber, e.component, e.action, e.logLevel, e.entityReferenceIds])).toEqual([
      [1, 'Migration', 'CreatedMigration', 'INFO', []],
      [2, 'Counterparties', 'StagedEntities', 'INFO', [id(1), id(2)]],
      [3, 'Counterparties', 'RejectedEntities', 'WARN', [id(3)]],
      [4, 'Counterparties', 'ValidatedStaging', 'ERROR', [id(2)]],
      [5, 'Migration', 'ValidatedStaging', 'WARN', []],
      [6, 'Counterparties', 'DeletedStagedEntities', 'INFO', [id(2)]],
    ]);
    expect(all[1]!.message).toBe('staged 2 counterparties');
    expect(all[2]!.message).toBe(`record ${id(3)} not staged: initials MISSING_REQUIRED_FIELD, surname MISSING_REQUIRED_FIELD`);
    expect(all[3]!.message).toMatch(
      /^validation [0-9a-f-]{36}: nationalities\.0 UNKNOWN_CODE: nationality "XX" is not configured in the service$/,
    );
    for (const e of all) expect(Date.parse(e.timestamp)).not.toBeNaN();
  });

  it('streams the same entries as JSON text sequences', async () => {
    const res = await fetch(`${svc.url}${logs()}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json-seq;api-version=2025.1.0' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json-seq');
    const got: unknown[] = [];
    const parser = new JsonSeqParser();
    parser.on('data', (v: unknown) => got.push(v));
    await pipeline(Readable.fromWeb(res.body as any), parser);
    expect(got).toEqual(all);
  });

  it('filters by action, level, component and entity, with comma-separated or repeated values', async () => {
    const seqs = async (query: string) => (await jsonl(query)).map((e) => e.sequenceNumber);
    expect(await seqs('?Actions=StagedEntities,DeletedStagedEntities')).toEqual([2, 6]);
    expect(await seqs('?Actions=StagedEntities&Actions=DeletedStagedEntities')).toEqual([2, 6]);
    expect(await seqs('?LogLevels=warn,ERROR')).toEqual([3, 4, 5]);
    expect(await seqs('?Components=Migration')).toEqual([1, 5]);
    expect(await seqs(`?EntityReferenceIds=${id(2)}`)).toEqual([2, 4, 6]);
    expect(await seqs(`?EntityReferenceIds=${id(2)}&LogLevels=INFO&Components=Counterparties`)).toEqual([2, 6]);
    expect(await seqs('?Actions=ImportedEntities')).toEqual([]);
  });

  it('filters by time (After and Before exclude the bound) and resumes with continue-from', async () => {
    const seqs = async (query: string) => (await jsonl(query)).map((e) => e.sequenceNumber);
    expect(await seqs('?continue-from=4')).toEqual([4, 5, 6]);
    expect(await seqs('?continue-from=4&LogLevels=ERROR,INFO')).toEqual([4, 6]);
    expect(await seqs('?continue-from=7')).toEqual([]);
    const first = all[0]!.timestamp as string;
    const last = all[all.length - 1]!.timestamp as string;
    expect(await seqs(`?After=${encodeURIComponent('2000-01-01T00:00:00Z')}`)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqs(`?Before=${encodeURIComponent(first)}`)).toEqual([]);
    expect(await seqs(`?After=${encodeURIComponent(last)}`)).toEqual([]);
    expect(await seqs(`?Before=${encodeURIComponent('2100-01-01T00:00:00+02:00')}&continue-from=6`)).toEqual([6]);
  });

  it('streams more entries than one page, in order, with continue-from inside the second page', async () => {
    const other = await getToken(svc.url, OTHER);
    const big = await createMigration(svc.url, other);
    // 1,200 refused records: one WARN entry each, after the CreatedMigration entry.
    await stage(
      svc.url,
      other,
      big,
      Array.from({ length: 1200 }, (_, i) => ({ referenceId: id(i + 1), type: 'person' })),
    );
    const read = async (query: string) => {
      const res = await fetch(`${svc.url}/migration-assistance/migrations/${big}/logs/stream${query}`, {
        headers: { authorization: `Bearer ${other}`, accept: 'application/json-seq' },
      });
      const got: Array<{ sequenceNumber: number; entityReferenceIds: string[] }> = [];
      const parser = new JsonSeqParser();
      parser.on('data', (v: { sequenceNumber: number; entityReferenceIds: string[] }) => got.push(v));
      await pipeline(Readable.fromWeb(res.body as any), parser);
      return got;
    };
    const everything = await read('');
    expect(everything.map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 1201 }, (_, i) => i + 1));
    expect(everything[1200]!.entityReferenceIds).toEqual([id(1200)]);
    const tail = await read('?continue-from=700');
    expect(tail.map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 502 }, (_, i) => i + 700));
    await call(svc.url, other, 'PUT', `/migration-assistance/migrations/${big}/cancel`);
  });

  it('refuses a missing stream format, bad filter values and another tenant', async () => {
    const noAccept = await call(svc.url, token, 'GET', logs());
    expect(noAccept.status).toBe(400);
    expect(noAccept.body.code).toBe('NOT_ACCEPTABLE');
    const jsonl = { accept: 'application/jsonl' };
    const level = await call(svc.url, token, 'GET', `${logs()}?LogLevels=LOUD`, { headers: jsonl });
    expect(level.status).toBe(400);
    expect(level.body.detail).toBe('query parameter LogLevels: expected DEBUG, INFO, WARN, ERROR, got "LOUD"');
    const after = await call(svc.url, token, 'GET', `${logs()}?After=yesterday`, { headers: jsonl });
    expect(after.status).toBe(400);
    expect(after.body.detail).toBe('query parameter After: expected an ISO 8601 timestamp such as 2025-01-31T12:00:00Z, got "yesterday"');
    const from = await call(svc.url, token, 'GET', `${logs()}?continue-from=abc`, { headers: jsonl });
    expect(from.status).toBe(400);
    expect(from.body.code).toBe('INVALID_QUERY_PARAMETER');
    const other = await getToken(svc.url, OTHER);
    expect((await call(svc.url, other, 'GET', logs(), { headers: jsonl })).status).toBe(404);
  });
});
