/**
 * Broken and hostile request bodies to the service, over raw HTTP (no client): json-seq and
 * JSON Lines staging uploads that break RFC 7464 / JSON Lines in every way we know, bodies over
 * the limits, huge multipart uploads to lodging, absurd paging values on every paged or
 * resumable endpoint, and bodies that try to set what only the server may set. Each bad input is
 * refused (or its bad record reported) with the right status or code, the good records beside
 * it are staged, and the server's state is what it would be without the bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { call, getToken, startTestService, type TestService } from '../support/service.js';
import { createMigration, id, MEDIA_JSONL, MEDIA_SEQ, person, stagingPath } from '../cases/migration/records.js';
import { createMessage, createProcess, LODGING, messagePath, PARTIES, PO, sample } from '../service/lodging-support.js';

const MAX_STAGING = 64 * 1024;
let svc: TestService;
let token: string;

beforeAll(async () => {
  svc = await startTestService({ maxStagingBytes: MAX_STAGING, maxRecordBytes: 16 * 1024 });
  token = await getToken(svc.url);
});
afterAll(async () => svc?.dispose());

const RS = '\x1e';
const rec = (n: number, extra: Record<string, unknown> = {}) => JSON.stringify(person(n, extra));
const ok = (n: number) => ({ referenceId: id(n), isSuccessful: true, errors: [] });
const bad = (code: string, referenceId = '') => ({ referenceId, isSuccessful: false, errors: [{ field: '', message: code }] });

/** Uploads a raw body and returns the results as JSON (Accept: application/json). */
async function stageRaw(migrationId: string, contentType: string, body: Buffer | string): Promise<{ status: number; results: any }> {
  const res = await call(svc.url, token, 'PUT', stagingPath(migrationId), {
    raw: typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
    headers: { 'content-type': contentType, accept: 'application/json' },
  });
  return { status: res.status, results: res.body };
}

/** A fresh migration for `fn`, canceled afterwards whatever happens (one active migration per tenant). */
async function withMigration(fn: (migrationId: string) => Promise<void>): Promise<void> {
  const migrationId = await createMigration(svc.url, token);
  try {
    await fn(migrationId);
  } finally {
    await call(svc.url, token, 'PUT', `/migration-assistance/migrations/${migrationId}/cancel`);
  }
}

async function stagedIds(migrationId: string): Promise<string[]> {
  const res = await call(svc.url, token, 'GET', `${stagingPath(migrationId)}?limit=100`);
  expect(res.status).toBe(200);
  return res.body.items.map((i: { referenceId: string }) => i.referenceId).sort();
}

describe('staging bodies that break json-seq (RFC 7464) and JSON Lines', () => {
  // body (latin1 string: each char one byte), expected results in order
  const cases: Array<[name: string, type: string, body: string, expected: unknown[]]> = [
    // text before the first RS is one malformed piece; its referenceId is recovered from the text
    ['records without any RS', MEDIA_SEQ, `${rec(1)}\n${rec(2)}\n`, [bad('MALFORMED_RECORD', id(1))]],
    [
      'an RS inside a string (splits the record in two)',
      MEDIA_SEQ,
      `${RS}${rec(1)}\n${RS}{"referenceId":"${id(2)}","type":"person","surname":"a${RS}b","initials":"B."}\n${RS}${rec(3)}\n`,
      [ok(1), bad('TRUNCATED_RECORD', id(2)), bad('MALFORMED_RECORD'), ok(3)],
    ],
    [
      'the last record without its LF (complete JSON: parsed, as RFC 7464 allows)',
      MEDIA_SEQ,
      `${RS}${rec(1)}\n${RS}${rec(2)}`,
      [ok(1), ok(2)],
    ],
    ['the last record cut short', MEDIA_SEQ, `${RS}${rec(1)}\n${RS}${rec(2).slice(0, 40)}`, [ok(1), bad('TRUNCATED_RECORD')]],
    ['a record cut short by the next RS', MEDIA_SEQ, `${RS}${rec(1).slice(0, 50)}${RS}${rec(2)}\n`, [bad('TRUNCATED_RECORD'), ok(2)]],
    ['only RS bytes', MEDIA_SEQ, RS.repeat(1000), []],
    ['a body of only LFs (json-seq)', MEDIA_SEQ, '\n'.repeat(1000), []],
    ['a body of only LFs (JSON Lines)', MEDIA_JSONL, '\n'.repeat(1000), []],
    ['RS and garbage', MEDIA_SEQ, `${RS}not json\n${RS}${rec(1)}\n${RS}{]\n`, [bad('MALFORMED_RECORD'), ok(1), bad('MALFORMED_RECORD')]],
    [
      'invalid UTF-8 in a record (windows-1252 ü, an overlong /)',
      MEDIA_SEQ,
      `${RS}${rec(1, { surname: 'M\xfcller' })}\n${RS}${rec(2, { surname: 'x\xc0\xafy' })}\n${RS}${rec(3)}\n`,
      [bad('MALFORMED_RECORD', id(1)), bad('MALFORMED_RECORD', id(2)), ok(3)],
    ],
    [
      'invalid UTF-8 in a JSON Lines record',
      MEDIA_JSONL,
      `${rec(1, { surname: 'M\xfcller' })}\n${rec(2)}\n`,
      [bad('MALFORMED_RECORD', id(1)), ok(2)],
    ],
    ['a 0-byte body', MEDIA_SEQ, '', []],
    [
      'JSON Lines with CRLF, garbage and a blank line',
      MEDIA_JSONL,
      `${rec(1)}\r\ngarbage\r\n\r\n${rec(2)}\r\n[1,2]\r\n`,
      [ok(1), bad('MALFORMED_RECORD'), ok(2), bad('MALFORMED_RECORD')],
    ],
    ['JSON Lines whose last line is cut', MEDIA_JSONL, `${rec(1)}\n${rec(2).slice(0, 30)}`, [ok(1), bad('TRUNCATED_RECORD')]],
    [
      'a record over the per-record limit between two good ones',
      MEDIA_SEQ,
      `${RS}${rec(1)}\n${RS}${rec(2, { surname: 'x'.repeat(20_000) })}\n${RS}${rec(3)}\n`,
      [ok(1), bad('RECORD_TOO_LARGE', id(2)), ok(3)],
    ],
    // the NULs belong to the first record, which then does not end with its LF
    ['NUL bytes between records', MEDIA_SEQ, `${RS}${rec(1)}\n\0\0\0${RS}${rec(2)}\n`, [bad('TRUNCATED_RECORD', id(1)), ok(2)]],
    [
      'JSON values that are not objects',
      MEDIA_SEQ,
      `${RS}42\n${RS}"text"\n${RS}null\n${RS}${rec(1)}\n`,
      [bad('MALFORMED_RECORD'), bad('MALFORMED_RECORD'), bad('MALFORMED_RECORD'), ok(1)],
    ],
  ];

  it.each(cases)('%s: every record gets one result, the good ones are staged', (_name, type, body, expected) =>
    withMigration(async (migrationId) => {
      const { status, results } = await stageRaw(migrationId, type, body);
      expect(status).toBe(200);
      expect(results).toEqual(expected);
      const good = (results as Array<{ referenceId: string; isSuccessful: boolean }>)
        .filter((r) => r.isSuccessful)
        .map((r) => r.referenceId)
        .sort();
      expect(await stagedIds(migrationId)).toEqual(good);
      const migration = (await call(svc.url, token, 'GET', `/migration-assistance/migrations/${migrationId}`)).body;
      expect(migration.numberOfStagedEntities).toBe(good.length);
    }),
  );
});

describe('bodies over the limits', () => {
  it('refuses a staging body over maxStagingBytes sent without Content-Length (chunked) with 413, staging nothing', () =>
    withMigration(async (migrationId) => {
      const record = `${RS}${rec(1)}\n`;
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > MAX_STAGING * 4) return controller.close();
          sent += record.length * 50;
          controller.enqueue(Buffer.from(record.repeat(50)));
        },
      });
      const res = await call(svc.url, token, 'PUT', stagingPath(migrationId), { raw: stream, headers: { 'content-type': MEDIA_SEQ } });
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        detail: `staging upload too large: the body exceeds the limit of ${MAX_STAGING} bytes per request; send the records in several requests`,
      });
      expect(await stagedIds(migrationId)).toEqual([]);
    }));

  it('refuses a JSON body over 10 MiB with 413 and creates nothing', async () => {
    const before = (await call(svc.url, token, 'GET', '/migration-assistance/migrations/current')).status;
    const body = Buffer.from(`{"components":["Counterparties"],"padding":"${'x'.repeat(10 * 1024 * 1024 + 10)}"}`);
    const res = await call(svc.url, token, 'POST', '/migration-assistance/migrations', {
      raw: body,
      headers: { 'content-type': 'application/json' },
    });
    expect([res.status, res.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect((await call(svc.url, token, 'GET', '/migration-assistance/migrations/current')).status).toBe(before);
  });
});

describe('huge multipart uploads to lodging', () => {
  let pid: string;
  let mid: string;
  beforeAll(async () => {
    pid = await createProcess(svc.url, token);
    mid = await createMessage(svc.url, token, pid);
  });

  const rawMultipart = async (name: string, body: Buffer | ReadableStream<Uint8Array>, boundary = 'b0undary') => {
    const res = await fetch(`${svc.url}${messagePath(pid, mid)}/attachments/${name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, ...LODGING, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const part = (headers: string, value: string) => `--b0undary\r\n${headers}\r\n\r\n${value}\r\n`;
  const filePart = (content: string) =>
    part('Content-Disposition: form-data; name="content"; filename="x.pdf"\r\nContent-Type: application/pdf', content);
  const pdf = sample('EmployerStatement.pdf').toString('latin1');

  const cases: Array<[name: string, body: () => Buffer, status: number, code: string]> = [
    [
      '1,000 text fields',
      () =>
        Buffer.from(
          Array.from({ length: 1000 }, (_v, i) => part(`Content-Disposition: form-data; name="f${i}"`, 'v')).join('') + '--b0undary--\r\n',
          'latin1',
        ),
      413,
      'TOO_MANY_PARTS',
    ],
    [
      '1,000 file parts',
      () => Buffer.from(Array.from({ length: 1000 }, () => filePart(pdf)).join('') + '--b0undary--\r\n', 'latin1'),
      413,
      'TOO_MANY_PARTS',
    ],
    [
      'a 1 MiB mimeType field',
      () =>
        Buffer.from(
          part('Content-Disposition: form-data; name="mimeType"', 'application/pdf' + ' '.repeat(1024 * 1024)) +
            filePart(pdf) +
            '--b0undary--\r\n',
          'latin1',
        ),
      400,
      'INVALID_REQUEST',
    ],
    [
      'a part with 1,000 header lines',
      () =>
        Buffer.from(
          `--b0undary\r\n${Array.from({ length: 1000 }, (_v, i) => `X-H${i}: v`).join('\r\n')}\r\nContent-Disposition: form-data; name="mimeType"\r\n\r\napplication/pdf\r\n` +
            filePart(pdf) +
            '--b0undary--\r\n',
          'latin1',
        ),
      400,
      'INVALID_REQUEST',
    ],
    [
      'a body that never closes its last boundary',
      () =>
        Buffer.from(
          part('Content-Disposition: form-data; name="mimeType"', 'application/pdf') +
            '--b0undary\r\nContent-Disposition: form-data; name="content"; filename="x.pdf"\r\n\r\n%PDF-1.4',
          'latin1',
        ),
      400,
      'INVALID_REQUEST',
    ],
  ];

  it.each(cases)('refuses %s and stores nothing', async (_name, body, status, code) => {
    const name = `Hostile-${randomUUID().slice(0, 8)}.pdf`;
    const res = await rawMultipart(name, body());
    expect([res.status, res.body?.code]).toEqual([status, code]);
    const message = (await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING })).body;
    expect(message.attachments.map((a: { fileName: string }) => a.fileName)).not.toContain(name);
  });

  it('ignores an extra field with a 100 KiB name (cut by the field-name limit) and stores the file', async () => {
    const name = `Hostile-${randomUUID().slice(0, 8)}.pdf`;
    const body = Buffer.from(
      part(`Content-Disposition: form-data; name="${'n'.repeat(100 * 1024)}"`, 'v') +
        part('Content-Disposition: form-data; name="mimeType"', 'application/pdf') +
        filePart(pdf) +
        '--b0undary--\r\n',
      'latin1',
    );
    expect((await rawMultipart(name, body)).status).toBe(204);
    const message = (await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING })).body;
    expect(message.attachments.find((a: { fileName: string }) => a.fileName === name)).toMatchObject({
      mimeType: 'application/pdf',
      size: pdf.length,
    });
  });

  it('refuses a file over 10 MiB streamed without Content-Length with 413 ATTACHMENT_TOO_LARGE', async () => {
    const head = Buffer.from(
      part('Content-Disposition: form-data; name="mimeType"', 'application/pdf') +
        '--b0undary\r\nContent-Disposition: form-data; name="content"; filename="x.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n',
      'latin1',
    );
    const block = Buffer.alloc(1024 * 1024, 0x20);
    let blocks = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (blocks === 0) controller.enqueue(head);
        if (blocks++ >= 12) {
          controller.enqueue(Buffer.from('\r\n--b0undary--\r\n'));
          return controller.close();
        }
        controller.enqueue(block);
      },
    });
    const res = await rawMultipart('TooBig.pdf', stream);
    expect([res.status, res.body?.code]).toEqual([413, 'ATTACHMENT_TOO_LARGE']);
  });
});

describe('absurd paging and resume values', () => {
  let migrationId: string;
  let registration: string;
  beforeAll(async () => {
    migrationId = await createMigration(svc.url, token);
    const res = await call(svc.url, token, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', {
      body: { uri: 'http://127.0.0.1:9/hook' },
    });
    registration = res.body.id;
  });
  afterAll(async () => {
    await call(svc.url, token, 'PUT', `/migration-assistance/migrations/${migrationId}/cancel`);
  });

  const VALUES = [
    '1e309',
    '0x10',
    '99999999999999999999',
    '9007199254740993',
    '',
    'NaN',
    'Infinity',
    '-1',
    '1.5',
    ' 1',
    '1%00',
    '١٢',
    '+1',
    '1e2',
  ];
  const endpoints = () => [
    { path: '/counterparty-management/counterparties', params: ['offset', 'limit'], accept: 'application/json' },
    { path: `${stagingPath(migrationId)}`, params: ['offset', 'limit'], accept: 'application/json' },
    {
      path: `/counterparty-management/events/counterparty.merged/endpoints/${registration}/deliveries`,
      params: ['offset', 'limit'],
      accept: 'application/json',
    },
    { path: '/counterparty-management/counterparties/stream', params: ['continue-from'], accept: 'application/jsonl' },
    { path: `/migration-assistance/migrations/${migrationId}/logs/stream`, params: ['continue-from'], accept: 'application/jsonl' },
  ];

  it('refuses every absurd value of every paging parameter with 400 INVALID_QUERY_PARAMETER naming it', async () => {
    let tried = 0;
    for (const e of endpoints()) {
      for (const p of e.params) {
        for (const v of VALUES) {
          const res = await call(svc.url, token, 'GET', `${e.path}?${p}=${encodeURIComponent(v)}`, { headers: { accept: e.accept } });
          expect([e.path, p, v, res.status, res.body?.code, res.body?.errors?.[0]?.field]).toEqual([
            e.path,
            p,
            v,
            400,
            'INVALID_QUERY_PARAMETER',
            p,
          ]);
          tried++;
        }
        // the parameter twice: an array
        const res = await call(svc.url, token, 'GET', `${e.path}?${p}=1&${p}=2`, { headers: { accept: e.accept } });
        expect([e.path, p, 'repeated', res.status, res.body?.code]).toEqual([e.path, p, 'repeated', 400, 'INVALID_QUERY_PARAMETER']);
        tried++;
      }
    }
    expect(tried).toBe(8 * (VALUES.length + 1));
  });

  it('reads -0 as 0 (the start) for offsets and continue-from', async () => {
    const list = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?offset=-0&limit=1');
    expect([list.status, list.body.offset, list.body.limit]).toEqual([200, 0, 1]);
    const stream = await call(svc.url, token, 'GET', '/counterparty-management/counterparties/stream?continue-from=-0', {
      headers: { accept: 'application/jsonl' },
    });
    expect(stream.status).toBe(200);
    expect(JSON.parse(stream.text.split('\n')[0]!).sequenceNumber).toBe(1);
    const limit = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=-0');
    expect([limit.status, limit.body.code]).toEqual([400, 'INVALID_QUERY_PARAMETER']);
  });
});

describe('bodies that try to set server-owned state', () => {
  it('stages records whatever extra fields they carry, and none of those fields reaches the staged record or the migration', () =>
    withMigration(async (migrationId) => {
      const owned = {
        stagingStatus: 'Completed',
        importStatus: 'Completed',
        numberOfImportedEntities: 99,
        numberOfStagedEntities: 99,
        sequenceNumber: 1,
        lifecycleStatus: 'counterparty',
        activity: 'Completed',
        isSuccessful: true,
        errors: [],
        __proto__: { polluted: true },
        constructor: { prototype: { polluted: true } },
      };
      const body = `${RS}${JSON.stringify({ ...person(1), ...owned }).replace('"polluted"', '"polluted"')}\n${RS}${rec(2, { id: 'x', status: 'Imported' })}\n`;
      const { status, results } = await stageRaw(migrationId, MEDIA_SEQ, body);
      expect([status, results]).toEqual([200, [ok(1), ok(2)]]);
      const staged = (await call(svc.url, token, 'GET', `${stagingPath(migrationId)}/${id(1)}`)).body;
      for (const k of [
        'stagingStatus',
        'importStatus',
        'numberOfImportedEntities',
        'sequenceNumber',
        'lifecycleStatus',
        'activity',
        'isSuccessful',
        'polluted',
      ])
        expect([k, k in staged]).toEqual([k, false]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const migration = (await call(svc.url, token, 'GET', `/migration-assistance/migrations/${migrationId}`)).body;
      expect(migration).toMatchObject({
        stagingStatus: 'InProgress',
        importStatus: 'Pending',
        numberOfStagedEntities: 2,
        numberOfImportedEntities: 0,
        activity: 'Active',
      });
    }));

  it('creates a migration Pending with counters 0 whatever statuses, counters and id the body claims', async () => {
    const claimed = '11111111-1111-4111-8111-111111111111';
    const res = await call(svc.url, token, 'POST', '/migration-assistance/migrations', {
      body: {
        components: ['Counterparties'],
        referenceId: claimed,
        stagingStatus: 'Completed',
        importStatus: 'Completed',
        numberOfStagedEntities: 5,
        numberOfImportedEntities: 5,
        activity: 'Completed',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      stagingStatus: 'Pending',
      importStatus: 'Pending',
      numberOfStagedEntities: 0,
      numberOfImportedEntities: 0,
    });
    expect(res.body.referenceId).not.toBe(claimed);
    expect((await call(svc.url, token, 'GET', `/migration-assistance/migrations/${claimed}`)).status).toBe(404);
    await call(svc.url, token, 'PUT', `/migration-assistance/migrations/${res.body.referenceId}/cancel`);
  });

  it('creates a message as Draft without attachments whatever status, dates and attachments the body claims', async () => {
    const pid = await createProcess(svc.url, token);
    const mid = randomUUID();
    const res = await call(svc.url, token, 'PUT', messagePath(pid, mid), {
      headers: LODGING,
      body: {
        messageType: 'CleanOrder',
        ...PARTIES,
        status: 'Sent',
        referenceId: randomUUID(),
        sentOn: '2000-01-01T00:00:00Z',
        createdOn: '2000-01-01T00:00:00Z',
        attachments: [{ fileName: 'CleanOrderFinancingRequest.xml', mimeType: 'application/xml', size: 1 }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ referenceId: mid, status: 'Draft' });
    expect(res.body.createdOn).not.toBe('2000-01-01T00:00:00Z');
    const detail = (await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING })).body;
    expect([detail.status, detail.attachments]).toEqual(['Draft', []]);
    const send = await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/send`, {
      headers: { ...LODGING, 'content-type': 'application/json' },
      body: { status: 'Sent', attachments: [] },
    });
    expect([send.status, send.body.code]).toEqual([409, 'REQUIRED_ATTACHMENTS_MISSING']);
  });

  it('creates a process with its own id and first status whatever the body claims', async () => {
    const defs = (await call(svc.url, token, 'GET', '/process-orchestration/process-definitions?codes=CleanOrder', { headers: PO })).body;
    const claimed = randomUUID();
    const res = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: {
        processDefinitionReferenceId: defs[0].referenceId,
        externalReferences: [],
        referenceId: claimed,
        status: { code: 'Approved' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.referenceId).not.toBe(claimed);
    const process = (await call(svc.url, token, 'GET', `/process-orchestration/processes/${res.body.referenceId}`, { headers: PO })).body;
    expect(process.status.code).toBe('Created');
  });

  it('registers a webhook with its own id, token and event name whatever the body claims', async () => {
    const claimed = { id: 'mine', token: 'known-secret', eventName: 'process.status-changed', createdOn: '2000-01-01T00:00:00Z' };
    const res = await call(svc.url, token, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', {
      body: { uri: 'http://127.0.0.1:9/hook', ...claimed },
    });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe('mine');
    expect(res.body.token).not.toBe('known-secret');
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.eventName).toBe('counterparty.merged');
    expect(res.body.createdOn).not.toBe('2000-01-01T00:00:00Z');
    const changed = await call(svc.url, token, 'PUT', `/counterparty-management/events/counterparty.merged/endpoints/${res.body.id}`, {
      body: { uri: 'http://127.0.0.1:9/other', token: 'known-secret', id: 'mine' },
    });
    expect(changed.status).toBe(204);
    const tokenNow = (await call(svc.url, token, 'GET', `/counterparty-management/events/counterparty.merged/token/${res.body.id}`)).body
      .token;
    expect(tokenNow).toBe(res.body.token);
  });
});
