import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { Parser as JsonSeqParser } from 'json-text-sequence';
import { rmSync } from 'node:fs';
import { call, getToken, startTestService, tempDir, type TestService } from '../support/service.js';
import { openDatabase } from '../../src/service/store/database.js';
import { createMigration, frames, id, MEDIA_JSONL, MEDIA_SEQ, organisation, person, stagingPath } from '../cases/migration/records.js';
import { STAGING_BATCH_BYTES, STAGING_BATCH_RECORDS } from '../../src/service/migration/route-staging.js';

let svc: TestService;
let token: string;

// Small limits so that the limit tests need only small bodies.
const MAX_BYTES = 64 * 1024;
const MAX_RECORD = 2048;

beforeAll(async () => {
  svc = await startTestService({ maxStagingBytes: MAX_BYTES, maxRecordBytes: MAX_RECORD });
  token = await getToken(svc.url);
});
afterAll(async () => svc?.dispose());

/** A fresh migration per test: the tenant may have one active at a time. */
async function freshMigration(components?: string[]): Promise<string> {
  const current = await call(svc.url, token, 'GET', '/migration-assistance/migrations/current');
  if (current.status === 200) await call(svc.url, token, 'PUT', `/migration-assistance/migrations/${current.body.referenceId}/cancel`);
  return createMigration(svc.url, token, components);
}

function put(migrationId: string, body: string, headers: Record<string, string>) {
  return call(svc.url, token, 'PUT', stagingPath(migrationId), { raw: body, headers });
}

/** A mixed body: valid, invalid (missing field, bad value), malformed and truncated records. */
function mixedJsonSeq(): string {
  return (
    frames('json-seq', [person(1), { referenceId: id(2), type: 'person', surname: 'NoInitials' }]) +
    '\x1e{"referenceId":"' +
    id(3) +
    '","type":"person",,}\n' +
    frames('json-seq', [organisation(4), person(5, { dateOfBirth: '31-12-1980' })]) +
    '\x1e{"referenceId":"' +
    id(6) +
    '","type":"pers'
  );
}

const MIXED_RESULTS = [
  { referenceId: id(1), isSuccessful: true, errors: [] },
  { referenceId: id(2), isSuccessful: false, errors: [{ field: 'initials', message: 'MISSING_REQUIRED_FIELD' }] },
  { referenceId: id(3), isSuccessful: false, errors: [{ field: '', message: 'MALFORMED_RECORD' }] },
  { referenceId: id(4), isSuccessful: true, errors: [] },
  { referenceId: id(5), isSuccessful: false, errors: [{ field: 'dateOfBirth', message: 'INVALID_FIELD_VALUE' }] },
  { referenceId: id(6), isSuccessful: false, errors: [{ field: '', message: 'TRUNCATED_RECORD' }] },
];

describe('staging upload', () => {
  it('answers a json-seq upload with one json-seq result per record, in order, staging only the valid ones', async () => {
    const m = await freshMigration();
    const res = await put(m, mixedJsonSeq(), { 'content-type': MEDIA_SEQ });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json-seq');
    const results: unknown[] = [];
    const invalid: unknown[] = [];
    const parser = new JsonSeqParser();
    parser.on('data', (v: unknown) => results.push(v));
    parser.on('invalid', (e: unknown) => invalid.push(e));
    await new Promise<void>((resolve, reject) => Readable.from([res.text]).pipe(parser).on('finish', resolve).on('error', reject));
    expect(invalid).toEqual([]);
    expect(results).toEqual(MIXED_RESULTS);

    const migration = await call(svc.url, token, 'GET', `/migration-assistance/migrations/${m}`);
    expect(migration.body).toMatchObject({ stagingStatus: 'InProgress', importStatus: 'Pending', numberOfStagedEntities: 2 });
    expect(migration.body.components[0]).toEqual({
      component: 'Counterparties',
      stagingStatus: 'InProgress',
      importStatus: 'Pending',
      numberOfStagedEntities: 2,
      numberOfImportedEntities: 0,
    });
    const staged = await call(svc.url, token, 'GET', stagingPath(m));
    expect(staged.body).toEqual({ items: [person(1), organisation(4)], total: 2, offset: 0, limit: 20 });
  });

  it('answers a JSON Lines upload with JSON Lines results, and with a JSON array when Accept asks for application/json', async () => {
    const m = await freshMigration();
    const body =
      frames('jsonl', [person(1), { referenceId: id(2), type: 'robot' }]) +
      '{"referenceId":"' +
      id(3) +
      '", oops}\n' +
      frames('jsonl', [person(4)]);
    const expected = [
      { referenceId: id(1), isSuccessful: true, errors: [] },
      { referenceId: id(2), isSuccessful: false, errors: [{ field: 'type', message: 'INVALID_FIELD_VALUE' }] },
      { referenceId: id(3), isSuccessful: false, errors: [{ field: '', message: 'MALFORMED_RECORD' }] },
      { referenceId: id(4), isSuccessful: true, errors: [] },
    ];
    const lines = await put(m, body, { 'content-type': MEDIA_JSONL });
    expect(lines.status).toBe(200);
    expect(lines.headers.get('content-type')).toBe('application/jsonl');
    expect(lines.text.endsWith('\n')).toBe(true);
    expect(
      lines.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(expected);

    const array = await put(m, body, { 'content-type': MEDIA_JSONL, accept: 'application/json;api-version=2025.1.0' });
    expect(array.status).toBe(200);
    expect(array.headers.get('content-type')).toMatch(/^application\/json/);
    expect(array.body).toEqual(expected);
  });

  it('answers an empty upload with no results', async () => {
    const m = await freshMigration();
    expect((await put(m, '', { 'content-type': MEDIA_SEQ, accept: 'application/json' })).body).toEqual([]);
    const seq = await put(m, '', { 'content-type': MEDIA_SEQ });
    expect(seq.status).toBe(200);
    expect(seq.text).toBe('');
  });

  it('replaces a staged record when its referenceId is submitted again, and keeps it when the new version is invalid', async () => {
    const m = await freshMigration();
    await put(m, frames('json-seq', [person(1), person(2)]), { 'content-type': MEDIA_SEQ });
    const again = await put(m, frames('json-seq', [person(1, { surname: 'Renamed' }), person(2, { initials: '' })]), {
      'content-type': MEDIA_SEQ,
      accept: 'application/json',
    });
    expect(again.body).toEqual([
      { referenceId: id(1), isSuccessful: true, errors: [] },
      { referenceId: id(2), isSuccessful: false, errors: [{ field: 'initials', message: 'INVALID_FIELD_VALUE' }] },
    ]);
    const staged = await call(svc.url, token, 'GET', stagingPath(m));
    expect(staged.body).toEqual({ items: [person(1, { surname: 'Renamed' }), person(2)], total: 2, offset: 0, limit: 20 });
    expect((await call(svc.url, token, 'GET', `/migration-assistance/migrations/${m}`)).body.numberOfStagedEntities).toBe(2);
  });

  it('drops fields staging does not know, so a record cannot set server-owned state', async () => {
    const m = await freshMigration();
    await put(m, frames('json-seq', [{ ...person(1), importState: 'imported', sequenceNumber: 7 }]), { 'content-type': MEDIA_SEQ });
    expect((await call(svc.url, token, 'GET', `${stagingPath(m)}/${id(1)}`)).body).toEqual(person(1));
  });

  it('reports a record over the per-record limit as RECORD_TOO_LARGE and stages the others', async () => {
    const m = await freshMigration();
    const big = person(2, { firstName: 'x'.repeat(MAX_RECORD) });
    const res = await put(m, frames('json-seq', [person(1), big, person(3)]), { 'content-type': MEDIA_SEQ, accept: 'application/json' });
    expect(res.body).toHaveLength(3);
    expect(res.body[0]).toEqual({ referenceId: id(1), isSuccessful: true, errors: [] });
    // The referenceId is known when the record arrived in one piece, not when it was skipped unread.
    expect(res.body[1]).toEqual({
      referenceId: expect.stringMatching(new RegExp(`^(${id(2)})?$`)),
      isSuccessful: false,
      errors: [{ field: '', message: 'RECORD_TOO_LARGE' }],
    });
    expect(res.body[2]).toEqual({ referenceId: id(3), isSuccessful: true, errors: [] });
    expect((await call(svc.url, token, 'GET', stagingPath(m))).body.items).toEqual([person(1), person(3)]);
  });

  it('names a too-large record by its referenceId also when it spans chunks and is skipped unread', async () => {
    const m = await freshMigration();
    const body = frames('json-seq', [person(1), person(2, { firstName: 'x'.repeat(MAX_RECORD * 3) }), person(3)]);
    // the big record's head (with its referenceId) in the first chunk, more than the limit of
    // it in the second (skipped unread from there), its end and the next record in the third
    const cut = body.indexOf(id(2)) + 200;
    const cut2 = cut + MAX_RECORD * 2;
    const chunks = [body.slice(0, cut), body.slice(cut, cut2), body.slice(cut2)].map((c) => new TextEncoder().encode(c));
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = chunks.shift();
        if (!next) return controller.close();
        controller.enqueue(next);
        await new Promise((r) => setTimeout(r, 50));
      },
    });
    const res = await call(svc.url, token, 'PUT', stagingPath(m), {
      raw: stream,
      headers: { 'content-type': MEDIA_SEQ, accept: 'application/json' },
    });
    expect(res.body).toEqual([
      { referenceId: id(1), isSuccessful: true, errors: [] },
      { referenceId: id(2), isSuccessful: false, errors: [{ field: '', message: 'RECORD_TOO_LARGE' }] },
      { referenceId: id(3), isSuccessful: true, errors: [] },
    ]);
  });

  it('refuses a body over the byte limit with 413 and stages nothing of it', async () => {
    const m = await freshMigration();
    const many = Array.from({ length: 200 }, (_, i) => person(i + 1));
    const body = frames('json-seq', many);
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_BYTES);
    const declared = await put(m, body, { 'content-type': MEDIA_SEQ });
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      detail: `staging upload too large: Content-Length ${Buffer.byteLength(body)} exceeds the limit of ${MAX_BYTES} bytes per request; send the records in several requests`,
    });

    // Without Content-Length (chunked), the service counts the bytes itself.
    const chunked = await chunkedPut(stagingPath(m), body, MEDIA_SEQ);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text)).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      detail: `staging upload too large: the body exceeds the limit of ${MAX_BYTES} bytes per request; send the records in several requests`,
    });
    expect((await call(svc.url, token, 'GET', stagingPath(m))).body.total).toBe(0);
  });

  it('refuses other content types with 415', async () => {
    const m = await freshMigration();
    const none = await call(svc.url, token, 'PUT', stagingPath(m));
    expect(none.status).toBe(415);
    expect(none.body.detail).toBe('content type (none) is not accepted here; send application/json-seq or application/jsonl');
    for (const type of ['application/json', 'text/plain', 'application/x-ndjson']) {
      const res = await put(m, frames('jsonl', [person(1)]), { 'content-type': type });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', detail: `content type ${type} is not accepted here` });
    }
  });

  it('refuses staging with 409 when the migration lacks Counterparties or is no longer active', async () => {
    const withoutCounterparties = await freshMigration(['Collaterals']);
    const res = await put(withoutCounterparties, frames('json-seq', [person(1)]), { 'content-type': MEDIA_SEQ });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'MIGRATION_STATE_CONFLICT',
      detail: `cannot stage: migration ${withoutCounterparties} does not include the component Counterparties; register a migration with components ["Counterparties", …] to stage counterparties`,
    });
    await call(svc.url, token, 'PUT', `/migration-assistance/migrations/${withoutCounterparties}/cancel`);
    const canceled = await put(withoutCounterparties, frames('json-seq', [person(1)]), { 'content-type': MEDIA_SEQ });
    expect(canceled.status).toBe(409);
    expect(canceled.body.code).toBe('MIGRATION_NOT_ACTIVE');
  });
});

describe('staging upload over the byte limit after results were sent', () => {
  it('keeps the committed records and ends the results with PAYLOAD_TOO_LARGE', async () => {
    const records = Array.from({ length: 8000 }, (_, i) => person(i + 1));
    // The limit falls after about 6,000 records: past the first batches.
    const limit = Buffer.byteLength(frames('jsonl', records.slice(0, 6000)));
    const big = await startTestService({ maxStagingBytes: limit });
    try {
      const bigToken = await getToken(big.url);
      const m = await createMigration(big.url, bigToken);
      const body = frames('jsonl', records);
      const res = await chunkedPut(stagingPath(m), body, MEDIA_JSONL, big.url, bigToken);
      expect(res.status).toBe(200);
      const results = res.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      const last = results.pop();
      expect(last).toEqual({ referenceId: '', isSuccessful: false, errors: [{ field: '', message: 'PAYLOAD_TOO_LARGE' }] });
      // The batches committed before the limit was reached were answered (5,000 records and more).
      expect(results.length).toBeGreaterThanOrEqual(5000);
      expect(results.length).toBeLessThan(8000);
      expect(results).toEqual(results.map((_, i) => ({ referenceId: id(i + 1), isSuccessful: true, errors: [] })));
      expect((await call(big.url, bigToken, 'GET', `/migration-assistance/migrations/${m}`)).body.numberOfStagedEntities).toBe(
        results.length,
      );
    } finally {
      await big.dispose();
    }
  });
});

describe('staging transactions of a large upload', () => {
  it('commits an upload in batches of at most STAGING_BATCH_BYTES of body, each logged once, the records in order', async () => {
    // Persons of different sizes (about 330 to 1,300 bytes), so batches end at different counts.
    const records = Array.from({ length: 3000 }, (_, i) => person(i + 1, { surname: `Persoon${'x'.repeat((i * 37) % 1000)}` }));
    const sizes = records.map((r) => Buffer.byteLength(JSON.stringify(r)));
    const body = frames('jsonl', records);
    expect(Buffer.byteLength(body)).toBeGreaterThan(10 * STAGING_BATCH_BYTES);
    // The batches as the route should cut them: each ends at the record that brings it to the byte bound.
    const expected: string[][] = [[]];
    let bytes = 0;
    records.forEach((r, i) => {
      expected[expected.length - 1]!.push(r.referenceId as string);
      bytes += sizes[i]!;
      if (bytes >= STAGING_BATCH_BYTES || expected[expected.length - 1]!.length === STAGING_BATCH_RECORDS) {
        expected.push([]);
        bytes = 0;
      }
    });
    if (expected[expected.length - 1]!.length === 0) expected.pop();
    expect(expected.length).toBeGreaterThan(10);

    const big = await startTestService({ maxStagingBytes: 2 * Buffer.byteLength(body) });
    try {
      const bigToken = await getToken(big.url);
      const m = await createMigration(big.url, bigToken);
      const res = await chunkedPut(stagingPath(m), body, MEDIA_JSONL, big.url, bigToken);
      expect(res.status).toBe(200);
      expect(
        res.text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(records.map((r) => ({ referenceId: r.referenceId, isSuccessful: true, errors: [] })));
      const log = await call(big.url, bigToken, 'GET', `/migration-assistance/migrations/${m}/logs/stream`, {
        headers: { accept: 'application/jsonl' },
      });
      const staged = log.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { action: string; entityReferenceIds: string[]; message: string })
        .filter((e) => e.action === 'StagedEntities');
      expect(staged.map((e) => e.entityReferenceIds)).toEqual(expected);
      expect(staged.map((e) => e.message)).toEqual(expected.map((b) => `staged ${b.length} counterparties`));
      expect((await call(big.url, bigToken, 'GET', `/migration-assistance/migrations/${m}`)).body.numberOfStagedEntities).toBe(3000);
    } finally {
      await big.dispose();
    }
  });
});

describe('staged data', () => {
  it('pages, reads and deletes staged records by referenceId', async () => {
    const m = await freshMigration();
    await put(m, frames('json-seq', [person(1), person(2), organisation(3)]), { 'content-type': MEDIA_SEQ });
    const page = await call(svc.url, token, 'GET', `${stagingPath(m)}?offset=1&limit=1`);
    expect(page.body).toEqual({ items: [person(2)], total: 3, offset: 1, limit: 1 });
    expect((await call(svc.url, token, 'GET', `${stagingPath(m)}?limit=101`)).status).toBe(400);

    const one = await call(svc.url, token, 'GET', `${stagingPath(m)}/${id(3)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(organisation(3));

    const deleted = await call(svc.url, token, 'DELETE', `${stagingPath(m)}/${id(2)}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = await call(svc.url, token, 'DELETE', `${stagingPath(m)}/${id(2)}`);
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toBe(`no staged counterparty ${id(2)} in migration ${m}`);
    expect((await call(svc.url, token, 'GET', `${stagingPath(m)}/${id(2)}`)).status).toBe(404);
    expect((await call(svc.url, token, 'GET', stagingPath(m))).body.items).toEqual([person(1), organisation(3)]);
    expect((await call(svc.url, token, 'GET', `/migration-assistance/migrations/${m}`)).body.numberOfStagedEntities).toBe(2);
  });
});

describe('a database from before migration numbers', () => {
  it('keeps its staged records, in staging order, when a newer service opens it', async () => {
    const dataDir = tempDir('stagecoach-svc-upgrade-');
    let first: TestService | undefined = await startTestService({ dataDir });
    let second: TestService | undefined;
    try {
      const bearer = await getToken(first.url);
      const m = await createMigration(first.url, bearer);
      await call(first.url, bearer, 'PUT', stagingPath(m), {
        raw: frames('json-seq', [person(1), organisation(2), person(3)]),
        headers: { 'content-type': MEDIA_SEQ },
      });
      await first.close();
      first = undefined;
      // The staged table as earlier versions created it: keyed by the migration's UUID text.
      const db = openDatabase(dataDir);
      db.exec(`
        CREATE TABLE old_staged (id INTEGER PRIMARY KEY, migration_id TEXT NOT NULL, reference_id TEXT NOT NULL, type TEXT NOT NULL,
          identity_key TEXT, data TEXT NOT NULL, staged_on TEXT NOT NULL, import_state TEXT);
        INSERT INTO old_staged SELECT s.id, m.migration_id, s.reference_id, s.type, s.identity_key, s.data, s.staged_on, s.import_state
          FROM staged_counterparties s JOIN staging_migrations m ON m.no = s.migration_no;
        DROP TABLE staged_counterparties;
        DROP TABLE staging_migrations;
        ALTER TABLE old_staged RENAME TO staged_counterparties;
        CREATE UNIQUE INDEX staged_counterparties_ref ON staged_counterparties (migration_id, reference_id);
      `);
      const before = db.prepare('SELECT id, reference_id FROM staged_counterparties ORDER BY id').all();
      db.close();

      second = await startTestService({ dataDir });
      const again = await getToken(second.url);
      expect((await call(second.url, again, 'GET', stagingPath(m))).body.items).toEqual([person(1), organisation(2), person(3)]);
      // Sent again, a record is replaced in place; a new one goes last.
      await call(second.url, again, 'PUT', stagingPath(m), {
        raw: frames('json-seq', [person(1, { surname: 'Verbeek' }), person(4)]),
        headers: { 'content-type': MEDIA_SEQ },
      });
      expect((await call(second.url, again, 'GET', stagingPath(m))).body.items).toEqual([
        person(1, { surname: 'Verbeek' }),
        organisation(2),
        person(3),
        person(4),
      ]);
      expect((await call(second.url, again, 'GET', `/migration-assistance/migrations/${m}`)).body.numberOfStagedEntities).toBe(4);
      await second.close();
      second = undefined;
      const check = openDatabase(dataDir);
      const after = check.prepare('SELECT id, reference_id FROM staged_counterparties ORDER BY id').all();
      check.close();
      expect(after.slice(0, 3)).toEqual(before);
    } finally {
      await first?.close();
      await second?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** A PUT with a chunked body (no Content-Length); resolves with the response or the socket error. */
function chunkedPut(
  path: string,
  body: string,
  contentType: string,
  url = svc.url,
  bearer = token,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      { method: 'PUT', headers: { authorization: `Bearer ${bearer}`, 'content-type': contentType, 'transfer-encoding': 'chunked' } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    const bytes = Buffer.from(body);
    // Several writes, so the limit is crossed in the middle of the stream.
    for (let at = 0; at < bytes.length; at += 8192) req.write(bytes.subarray(at, at + 8192));
    req.end();
  });
}
