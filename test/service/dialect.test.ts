/**
 * The service's dialects (src/service/dialect/): with switches on, it answers with the
 * alternatives to its own choices, read here over raw HTTP and set against the same service's
 * default answers (the truth), so each switch is seen to change what it says and nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, basic, getToken, startTestService, type TestService } from '../support/service.js';
import { deliveryDialect, parseDialect } from '../../src/service/dialect/index.js';
import { EXTRA_DATA_MEMBERS, rewriteBody, rewriteRunningJob, upperSnake } from '../../src/service/dialect/rewrite.js';
import { createMigration, frames, id, MEDIA_SEQ, organisation, person, runJob, stage, stagingPath } from '../cases/migration/records.js';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { demoCounterparties } from '../../src/service/counterparties/seed.js';
import { createProcess, LODGING, messagePath, PARTIES, PO, upload, sample } from './lodging-support.js';

const STREAM = '/counterparty-management/counterparties/stream';
/** A webhook delivery as a receiver got it (the envelope's shape is what the test checks). */
// biome-ignore lint/suspicious/noExplicitAny: the body is the JSON under test
type Delivery = { headers: IncomingHttpHeaders; body: any };
let plain: TestService;
let other: TestService;
let plainToken: string;
let otherToken: string;

beforeAll(async () => {
  plain = await startTestService();
  other = await startTestService({ dialect: 'nulls,counters-from-0,token-envelope,timestamps=basic,staging-container=items,gzip' });
  plainToken = await getToken(plain.url);
  const res = await call(other.url, undefined, 'GET', `/authentication/token/${DEMO.broker}/${DEMO.label}`, {
    headers: { authorization: basic(DEMO.clientId, DEMO.secret) },
  });
  otherToken = res.body.data.accessToken;
});
afterAll(async () => {
  await plain?.dispose();
  await other?.dispose();
});

const jsonl = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const withoutNulls = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));

/** A webhook receiver on loopback that acknowledges every delivery (204) and keeps it. */
async function startReceiver() {
  const received: Delivery[] = [];
  const receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  return { received, receiver, uri: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` };
}

/** Persons 1 and 2 staged in a new migration: the staging answer, and a reader of the migration's log stream. */
async function stagePersonsOneAndTwo(url: string, token: string) {
  const m = await createMigration(url, token);
  const res = await call(url, token, 'PUT', stagingPath(m), {
    raw: frames('json-seq', [person(1), person(2)]),
    headers: { 'content-type': MEDIA_SEQ, accept: MEDIA_SEQ },
  });
  const logs = async (query = '') =>
    jsonl(
      (
        await call(url, token, 'GET', `/migration-assistance/migrations/${m}/logs/stream${query}`, {
          headers: { accept: 'application/jsonl' },
        })
      ).text,
    );
  return { m, res, logs };
}

describe('serve --dialect', () => {
  it('refuses a switch it does not know, with the closest one', () => {
    expect(() => parseDialect('nulls,nulz')).toThrow(
      'dialect switch "nulz": not a switch (did you mean nulls?); the switches are nulls, counters-from-0, token-envelope, gzip, deflate, br, token-body, staging-container, timestamps, counts, counter-name, job-id, jwks, errors, definitions, job-running, pages, rejections, missing-files, definition-refused, message-created, resend, deliveries, registrations, upload, envelope, duplicates, event-groups, import-status, activity, country, uuids, text, dates, amounts, empty-arrays, upload-limit, redirects, empty-coding, actions, process-status, registration-ids, all, all-second, all-third, all-fourth, all-fifth, all-sixth, all-seventh, all-eighth, all-ninth, all-tenth',
    );
    expect(() => parseDialect('counts=some')).toThrow('dialect switch "counts=some": expected counts=totals-only|more;');
    expect(parseDialect('all')).toEqual({
      nulls: true,
      countersFrom0: true,
      tokenEnvelope: true,
      stagingContainer: 'items',
      timestamps: 'basic',
      counts: 'totals-only',
      coding: 'gzip',
      counterName: 'seq',
      jobIdObject: true,
      jwksSet: true,
      errors: 'envelope',
      definitionsSingle: true,
      jobRunning: 'status',
      rejections: 422,
      missingFiles: 422,
      definitionRefused: 400,
      messageCreated200: true,
      resend409: true,
      deliveriesTwice: true,
      processStatusUpperSnake: true,
      eventGroups: 'process-orchestration',
    });
  });

  it('answers the token in an envelope, gzip-coded, with nulls for what it leaves out', async () => {
    const res = await call(other.url, undefined, 'GET', `/authentication/token/${DEMO.broker}/${DEMO.label}`, {
      headers: { authorization: basic(DEMO.clientId, DEMO.secret) },
    });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.body).toEqual({
      data: { accessToken: expect.stringMatching(/^ey/), tokenType: 'Bearer', expiresIn: 300, refreshToken: null, scope: null },
    });
  });

  it('token-body=string / plain / result / jwt / response / payload: the token as a bare JSON string, as text/plain, or in one of four objects', async () => {
    const jwt = expect.stringMatching(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    // each form, its content type, its body, and where the token is in it
    for (const [form, type, expected, at] of [
      ['string', 'application/json', jwt, []],
      // plain: the JWT alone as text/plain, though the request puts application/json first
      ['plain', 'text/plain', jwt, []],
      ['result', 'application/json', { result: { token: jwt, expiresIn: '300' } }, ['result', 'token']],
      ['jwt', 'application/json', { jwt, expiresIn: 300 }, ['jwt']],
      [
        'response',
        'application/json',
        { response: { access_token: jwt, token_type: 'Bearer', expires_in: 300 } },
        ['response', 'access_token'],
      ],
      ['payload', 'application/json', { payload: { accessToken: jwt, expiresIn: 300 } }, ['payload', 'accessToken']],
    ] as const) {
      const svc = await startTestService({ dialect: `token-body=${form}` });
      try {
        const res = await call(svc.url, undefined, 'GET', `/authentication/token/${DEMO.broker}/${DEMO.label}`, {
          headers: { authorization: basic(DEMO.clientId, DEMO.secret), accept: 'application/json, text/plain;q=0.5' },
        });
        expect([form, res.status, res.headers.get('content-type')?.split(';')[0]]).toEqual([form, 200, type]);
        const body = type === 'text/plain' ? res.text : res.body;
        expect(body).toEqual(expected);
        // the token works
        const token = (at as readonly string[]).reduce((o, k) => (o as Record<string, unknown>)[k], body as unknown) as string;
        expect((await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1')).status).toBe(200);
      } finally {
        await svc.dispose();
      }
    }
  });

  it('streams the same counterparties counted from 0, absent fields as null, continue-from in its own numbers', async () => {
    const accept = { accept: 'application/jsonl' };
    const truth = jsonl((await call(plain.url, plainToken, 'GET', STREAM, { headers: accept })).text);
    const got = jsonl((await call(other.url, otherToken, 'GET', STREAM, { headers: accept })).text);
    expect(got.map((c) => c.sequenceNumber)).toEqual(truth.map((c) => (c.sequenceNumber as number) - 1));
    expect(got.map((c) => withoutNulls({ ...c, sequenceNumber: 0 }))).toEqual(truth.map((c) => ({ ...c, sequenceNumber: 0 })));
    const person = got.find(
      (c) => c.type === 'StreamingPersonCounterparty' && !truth.some((t) => t.referenceId === c.referenceId && 'surnamePrefix' in t),
    );
    expect(person?.surnamePrefix).toBeNull();
    const from2 = jsonl((await call(other.url, otherToken, 'GET', `${STREAM}?continue-from=2`, { headers: accept })).text);
    expect(from2.map((c) => c.referenceId)).toEqual(got.slice(2).map((c) => c.referenceId));
  });

  it('answers staging results as one {"items": […]} container, one item a line, and log timestamps in the basic form', async () => {
    const { res, logs: readLogs } = await stagePersonsOneAndTwo(other.url, otherToken);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.text).toBe(
      `{"items": [\n{"referenceId":"${id(1)}","isSuccessful":true,"errors":[]},\n{"referenceId":"${id(2)}","isSuccessful":true,"errors":[]}\n]}\n`,
    );
    const logs = await readLogs();
    expect(logs.map((e) => e.sequenceNumber)).toEqual(logs.map((_e, i) => i));
    for (const e of logs) expect(e.timestamp).toMatch(/^\d{8}T\d{6}(\.\d+)?Z$/);
  });

  it('staging-container=pretty, timestamps=offset-hour: results in {"results": […]} over several lines per item, timestamps at +01', async () => {
    const fifth = await startTestService({ dialect: 'staging-container=pretty,timestamps=offset-hour' });
    try {
      const token = await getToken(fifth.url);
      const { m, res, logs: readLogs } = await stagePersonsOneAndTwo(fifth.url, token);
      expect(res.headers.get('content-type')).toBe('application/json');
      const item = (n: number) => `  {\n    "referenceId": "${id(n)}",\n    "isSuccessful": true,\n    "errors": []\n  }`;
      expect(res.text).toBe(`{"results": [\n${item(1)},\n${item(2)}\n]}\n`);
      const logs = await readLogs();
      expect(logs.length).toBeGreaterThan(0);
      for (const e of logs) expect(e.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+01$/);
      // the same instant one hour east of UTC (Date.parse does not read `+01`: the hour is checked by hand)
      const at = String(logs[0]!.timestamp);
      const utc = Date.parse(`${at.slice(0, -3)}Z`) - 3_600_000;
      expect(Math.abs(utc - Date.now())).toBeLessThan(60_000);
      await call(fifth.url, token, 'PUT', `/migration-assistance/migrations/${m}/cancel`);
    } finally {
      await fifth.dispose();
    }
  });

  it('rewrites a counts result to the TotalEntity table alone, or to zero rows for other components and one more table', () => {
    const result = {
      referenceId: 'j',
      jobType: 'Counts',
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [['Counterparty', '7']],
          importedRows: [['Counterparty', '6']],
        },
        { type: 'Counterparty', headers: ['Type', 'Count'], stagedRows: [['person', '7']], importedRows: [['person', '6']] },
      ],
    };
    expect(rewriteBody('job', result, parseDialect('counts=totals-only'))).toEqual({ ...result, counts: [result.counts[0]] });
    const zeros = ['Collateral', 'FinancingSolution', 'FinancingExecution', 'Administration'].map((e) => [e, '0']);
    expect(rewriteBody('job', result, parseDialect('counts=more'))).toEqual({
      ...result,
      counts: [
        { ...result.counts[0], stagedRows: [['Counterparty', '7'], ...zeros], importedRows: [['Counterparty', '6'], ...zeros] },
        result.counts[1],
        { type: 'ImportOutcome', headers: ['Outcome', 'Count'], stagedRows: [['Staged', '7']], importedRows: [['Imported', '6']] },
      ],
    });
  });

  it('staging-container=data, timestamps=offset-colon, errors=message: results in {"data": […]}, timestamps at +01:00, errors as {"message"}', async () => {
    const fourth = await startTestService({ dialect: 'staging-container=data,timestamps=offset-colon,errors=message' });
    try {
      const token = await getToken(fourth.url);
      const { m, res, logs: readLogs } = await stagePersonsOneAndTwo(fourth.url, token);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.text).toBe(
        `{"data": [\n{"referenceId":"${id(1)}","isSuccessful":true,"errors":[]},\n{"referenceId":"${id(2)}","isSuccessful":true,"errors":[]}\n]}\n`,
      );
      const logs = await readLogs();
      expect(logs.length).toBeGreaterThan(0);
      for (const e of logs) expect(e.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+01:00$/);
      // the same instant, written one hour east of UTC: the local hour is UTC's + 1
      const at = String(logs[0]!.timestamp);
      expect(Math.abs(Date.parse(at) - Date.now())).toBeLessThan(60_000);
      expect(Number(at.slice(11, 13))).toBe((new Date(Date.parse(at)).getUTCHours() + 1) % 24);
      const refused = await call(fourth.url, token, 'POST', '/migration-assistance/migrations', {
        body: { components: ['Counterparties'] },
      });
      expect([refused.status, refused.headers.get('content-type'), Object.keys(refused.body)]).toEqual([
        409,
        'application/json',
        ['message'],
      ]);
      expect(refused.body.message).toMatch(new RegExp(`^migration ${m} of this tenant is still Active; `));
      await call(fourth.url, token, 'PUT', `/migration-assistance/migrations/${m}/cancel`);
    } finally {
      await fourth.dispose();
    }
  });

  it('answers errors outside authentication as {"error": {"code", "message"}}, plain text or {"error": "…"}, with the problem\'s status and detail', async () => {
    const envelope = await startTestService({ dialect: 'errors=envelope' });
    const plainText = await startTestService({ dialect: 'errors=plain' });
    try {
      const path = '/process-orchestration/processes';
      const body = { processDefinitionReferenceId: '00000000-0000-4000-8000-000000000000' };
      const truth = await call(plain.url, plainToken, 'POST', path, { body });
      expect([truth.status, truth.headers.get('content-type'), truth.body.code]).toEqual([
        422,
        'application/problem+json; charset=utf-8',
        'UNKNOWN_PROCESS_DEFINITION',
      ]);
      const a = await call(envelope.url, await getToken(envelope.url), 'POST', path, { body });
      expect([a.status, a.headers.get('content-type')]).toEqual([422, 'application/json']);
      expect(a.body).toEqual({ error: { code: 'UNKNOWN_PROCESS_DEFINITION', message: truth.body.detail } });
      const b = await call(plainText.url, await getToken(plainText.url), 'POST', path, { body });
      expect([b.status, b.headers.get('content-type'), b.text]).toEqual([422, 'text/plain; charset=utf-8', truth.body.detail]);
      const errorText = await startTestService({ dialect: 'errors=error-text' });
      try {
        const c = await call(errorText.url, await getToken(errorText.url), 'POST', path, { body });
        expect([c.status, c.headers.get('content-type'), c.body]).toEqual([422, 'application/json', { error: truth.body.detail }]);
      } finally {
        await errorText.dispose();
      }
      // authentication keeps the problem shape the spec shows
      const denied = await call(envelope.url, undefined, 'GET', `/authentication/token/${DEMO.broker}/${DEMO.label}`, {
        headers: { authorization: basic(DEMO.clientId, 'wrong') },
      });
      expect([denied.status, denied.headers.get('content-type')]).toEqual([401, 'application/problem+json; charset=utf-8']);
    } finally {
      await envelope.dispose();
      await plainText.dispose();
    }
  });

  it('answers the definitions list as the bare object when one matches, an array otherwise', async () => {
    const single = await startTestService({ dialect: 'definitions=single' });
    try {
      const token = await getToken(single.url);
      const path = '/process-orchestration/process-definitions';
      const one = await call(single.url, token, 'GET', `${path}?codes=CleanOrder`);
      const truth = await call(plain.url, plainToken, 'GET', `${path}?codes=CleanOrder`);
      expect(truth.body).toHaveLength(1);
      expect(one.body).toEqual(truth.body[0]);
      const many = await call(single.url, token, 'GET', path);
      expect(Array.isArray(many.body) && many.body.length > 1).toBe(true);
    } finally {
      await single.dispose();
    }
  });

  it('country=derived: streams and lists a counterparty without a country of its own with one filled in (its main address’s, else NL) and nl-NL, one with its own as it is', async () => {
    const derived = await startTestService({ dialect: 'country=derived' });
    try {
      const token = await getToken(derived.url);
      const accept = { accept: 'application/jsonl' };
      const truth = jsonl((await call(plain.url, plainToken, 'GET', STREAM, { headers: accept })).text);
      const got = jsonl((await call(derived.url, token, 'GET', STREAM, { headers: accept })).text);
      const page = (await call(derived.url, token, 'GET', '/counterparty-management/counterparties?limit=100')).body.items as Array<
        Record<string, unknown>
      >;
      // The truth of each record's own values: the demo records as stored (demoCounterparties).
      const own = new Map(demoCounterparties(DEMO.broker).map((c) => [c.referenceId, c]));
      expect(got.map((c) => c.referenceId)).toEqual(truth.map((c) => c.referenceId));
      for (const [i, c] of got.entries()) {
        const stored = own.get(String(c.referenceId))!;
        const addresses = (stored.addresses ?? []) as Array<{ type: string; countryCode: string }>;
        const main = (addresses.find((a) => a.type === 'main') ?? addresses[0])?.countryCode;
        expect(c).toEqual({
          ...truth[i],
          countryCode: stored.countryCode ?? main ?? 'NL',
          preferredCommunicationLanguage: stored.preferredCommunicationLanguage ?? 'nl-NL',
        });
        expect(page[i]).toEqual(c);
      }
      // The service's own choice shows only what was stored; the dialect fills in the rest.
      expect(truth.map((c) => c.countryCode ?? '-').sort()).toEqual(['-', '-', '-', '-', 'DE']);
      expect(got.map((c) => c.countryCode).sort()).toEqual(['DE', 'NL', 'NL', 'NL', 'NL']);
    } finally {
      await derived.dispose();
    }
  });

  it('registration-ids=opaque: a webhook registration gets an id that is no UUID, and is found, changed and deleted by it', async () => {
    const opaque = await startTestService({ dialect: 'registration-ids=opaque' });
    try {
      const token = await getToken(opaque.url);
      const base = '/counterparty-management/events/counterparty.merged/endpoints';
      const created = await call(opaque.url, token, 'POST', base, { body: { uri: 'http://127.0.0.1:9/hook' } });
      expect(created.status).toBe(201);
      const id = String(created.body.id);
      expect(id).toMatch(/^wh_[A-Za-z0-9_-]{22}$/);
      expect(created.headers.get('location')).toBe(`${base}/${id}`);
      const listed = await call(opaque.url, token, 'GET', base);
      expect(listed.body.map((r: { id: string }) => r.id)).toEqual([id]);
      const moved = await call(opaque.url, token, 'PUT', `${base}/${encodeURIComponent(id)}`, {
        body: { uri: 'http://127.0.0.1:9/other' },
      });
      expect(moved.status).toBeLessThan(300);
      expect((await call(opaque.url, token, 'GET', base)).body[0].uri).toBe('http://127.0.0.1:9/other');
      expect((await call(opaque.url, token, 'DELETE', `${base}/${encodeURIComponent(id)}`)).status).toBe(204);
      expect((await call(opaque.url, token, 'GET', base)).body).toEqual([]);
      // the service's own choice stays a UUID
      const own = await call(plain.url, plainToken, 'POST', base, { body: { uri: 'http://127.0.0.1:9/hook' } });
      expect(String(own.body.id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      await call(plain.url, plainToken, 'DELETE', `${base}/${own.body.id}`);
    } finally {
      await opaque.dispose();
    }
  });

  it('event-groups=process-orchestration / lodging: serves the lodging and process events under one group path, the other serving none', async () => {
    for (const [group, none] of [
      ['process-orchestration', 'lodging'],
      ['lodging', 'process-orchestration'],
    ] as const) {
      const moved = await startTestService({ dialect: `event-groups=${group}` });
      try {
        const token = await getToken(moved.url);
        const events = ['lodging.message.handling_succeeded', 'lodging.message.handling_failed', 'process.status-changed'];
        expect((await call(moved.url, token, 'GET', `/${group}/events/event-types`)).body).toEqual(events);
        expect((await call(moved.url, token, 'GET', `/${none}/events/event-types`)).body).toEqual([]);
        // the service's own choice
        expect((await call(plain.url, plainToken, 'GET', '/lodging/events/event-types')).body).toEqual(events.slice(0, 2));
        expect((await call(moved.url, token, 'GET', '/counterparty-management/events/event-types')).body).toEqual(
          (await call(plain.url, plainToken, 'GET', '/counterparty-management/events/event-types')).body,
        );
        for (const event of events) {
          const refused = await call(moved.url, token, 'POST', `/${none}/events/${event}/endpoints`, {
            body: { uri: 'http://127.0.0.1:9/h' },
          });
          expect([refused.status, refused.body.code, refused.body.detail]).toEqual([
            404,
            'UNKNOWN_EVENT_TYPE',
            `event type ${event} is not an event of /${none}; it has no events`,
          ]);
        }
        // registrations under the group that serves them; a created process's event reaches its receiver
        const got: Delivery[] = [];
        const receiver = createServer((req, res) => {
          let body = '';
          req.on('data', (c: Buffer) => (body += c));
          req.on('end', () => {
            got.push({ headers: req.headers, body: JSON.parse(body) });
            res.writeHead(204).end();
          });
        });
        await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
        try {
          const uri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
          for (const event of ['process.status-changed', 'lodging.message.handling_succeeded']) {
            const reg = await call(moved.url, token, 'POST', `/${group}/events/${event}/endpoints`, { body: { uri } });
            expect([reg.status, reg.headers.get('location')]).toEqual([201, `/${group}/events/${event}/endpoints/${reg.body.id}`]);
            expect(
              (await call(moved.url, token, 'GET', `/${group}/events/${event}/endpoints`)).body.map((r: { id: string }) => r.id),
            ).toEqual([reg.body.id]);
          }
          const pid = await createProcess(moved.url, token);
          for (let waited = 0; got.length < 1 && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
          expect(got.map((d) => [d.body.eventName, d.body.data.processReferenceId, d.body.data.status])).toEqual([
            ['process.status-changed', pid, 'Created'],
          ]);
        } finally {
          receiver.close();
        }
      } finally {
        await moved.dispose();
      }
    }
  });

  it('duplicates=refuse-all: refuses every record of a shared identity at validation, the one staged first too, and imports none of them', async () => {
    const strict = await startTestService({ dialect: 'duplicates=refuse-all' });
    try {
      const token = await getToken(strict.url);
      const twin = { initials: 'J.', surname: 'Tweeling', dateOfBirth: '1990-05-05' };
      const validated = async (url: string, bearer: string) => {
        const m = await createMigration(url, bearer);
        await stage(url, bearer, m, [
          person(1),
          person(2, twin),
          organisation(3, { cocNumber: '12345678' }),
          person(4, twin),
          person(5, twin),
        ]);
        return { m, result: await runJob(url, bearer, m, 'validate-staging') };
      };
      const duplicate = (n: number, of: number) => ({
        component: 'Counterparties',
        referenceId: id(n),
        field: 'surname,initials,dateOfBirth',
        message: 'DUPLICATE_IDENTITY',
        duplicateOf: id(of),
        identity: 'Tweeling J. 1990-05-05',
      });
      // the service's own choice keeps the record staged first (2) and refuses the later ones
      const own = await validated(plain.url, plainToken);
      expect(own.result.errors).toEqual([duplicate(4, 2), duplicate(5, 2)]);
      expect((await call(plain.url, plainToken, 'PUT', `/migration-assistance/migrations/${own.m}/cancel`)).status).toBe(200);
      // the platform that keeps none refuses 2 as well, naming another record of the group
      const { m, result } = await validated(strict.url, token);
      expect(result).toEqual({
        referenceId: expect.any(String),
        jobType: 'ValidateStaging',
        isValid: false,
        errors: [duplicate(2, 4), duplicate(4, 2), duplicate(5, 2)],
      });
      const log = jsonl(
        (
          await call(strict.url, token, 'GET', `/migration-assistance/migrations/${m}/logs/stream?LogLevels=ERROR`, {
            headers: { accept: 'application/jsonl' },
          })
        ).text,
      );
      expect(log.map((e) => e.message)).toEqual([
        `validation ${result.referenceId}: surname,initials,dateOfBirth DUPLICATE_IDENTITY: same surname, initials and dateOfBirth (Tweeling J. 1990-05-05) as ${id(4)}, refused as well: no record of a shared identity is kept`,
        `validation ${result.referenceId}: surname,initials,dateOfBirth DUPLICATE_IDENTITY: same surname, initials and dateOfBirth (Tweeling J. 1990-05-05) as ${id(2)}, refused as well: no record of a shared identity is kept`,
        `validation ${result.referenceId}: surname,initials,dateOfBirth DUPLICATE_IDENTITY: same surname, initials and dateOfBirth (Tweeling J. 1990-05-05) as ${id(2)}, refused as well: no record of a shared identity is kept`,
      ]);
      // the whole group removed, the rest passes and is imported: none of the group is live
      for (const n of [2, 4, 5]) expect((await call(strict.url, token, 'DELETE', `${stagingPath(m)}/${id(n)}`)).status).toBe(204);
      expect((await runJob(strict.url, token, m, 'validate-staging')).errors).toEqual([]);
      const imported = await runJob(strict.url, token, m, 'import');
      expect([imported.status, imported.numberOfStagedEntities, imported.numberOfImportedEntities]).toEqual(['Completed', 2, 2]);
    } finally {
      await strict.dispose();
    }
  });

  it('actions=upper-snake / kebab: writes log actions as IMPORTED_ENTITIES or imported-entities and reads the Actions filter in that spelling only', async () => {
    for (const [spelling, spelt] of [
      ['upper-snake', { CreatedMigration: 'CREATED_MIGRATION', StagedEntities: 'STAGED_ENTITIES' }],
      ['kebab', { CreatedMigration: 'created-migration', StagedEntities: 'staged-entities' }],
    ] as const) {
      const other = await startTestService({ dialect: `actions=${spelling}` });
      try {
        const token = await getToken(other.url);
        const staged = async (url: string, bearer: string) => {
          const { m, logs } = await stagePersonsOneAndTwo(url, bearer);
          return { m, read: async (query: string) => (await logs(query)).map(({ timestamp: _t, ...e }) => e) };
        };
        const truth = await staged(plain.url, plainToken);
        const got = (await staged(other.url, token)).read;
        const all = await got('');
        expect(all.map((e) => e.action)).toEqual([spelt.CreatedMigration, spelt.StagedEntities]);
        expect(all).toEqual((await truth.read('')).map((e) => ({ ...e, action: spelt[e.action as keyof typeof spelt] })));
        expect(await got(`?Actions=${spelt.StagedEntities}`)).toEqual([all[1]]);
        expect(await got(`?Actions=${spelt.CreatedMigration}&Actions=${spelt.StagedEntities}`)).toEqual(all);
        expect(await got('?Actions=StagedEntities')).toEqual([]);
        expect(await truth.read('?Actions=StagedEntities')).toHaveLength(1);
        expect((await call(plain.url, plainToken, 'PUT', `/migration-assistance/migrations/${truth.m}/cancel`)).status).toBe(200);
      } finally {
        await other.dispose();
      }
    }
  });

  it('rewrites a validation result to name no kept record, an import’s Completed to Succeeded, and a registration list to carry no token', () => {
    const duplicate = {
      component: 'Counterparties',
      referenceId: 'b',
      field: 'cocNumber',
      message: 'DUPLICATE_IDENTITY',
      duplicateOf: 'a',
      identity: '123',
    };
    const other = { component: 'Counterparties', referenceId: 'c', field: 'sex', message: 'UNKNOWN_CODE' };
    const result = { referenceId: 'j', jobType: 'ValidateStaging', isValid: false, errors: [duplicate, other] };
    expect(rewriteBody('job', result, parseDialect('duplicates=unlinked'))).toEqual({
      ...result,
      errors: [{ component: 'Counterparties', referenceId: 'b', field: 'cocNumber', message: 'DUPLICATE_IDENTITY' }, other],
    });
    const imported = {
      referenceId: 'j',
      jobType: 'Import',
      status: 'Completed',
      numberOfStagedEntities: 2,
      numberOfImportedEntities: 2,
      errors: [],
    };
    expect(rewriteBody('job', imported, parseDialect('import-status=Succeeded'))).toEqual({ ...imported, status: 'Succeeded' });
    expect(rewriteBody('job', { ...imported, status: 'Canceled' }, parseDialect('import-status=Succeeded'))).toEqual({
      ...imported,
      status: 'Canceled',
    });
    const canceled = { referenceId: 'm', activity: 'Canceled', components: [] };
    expect(rewriteBody('migration', canceled, parseDialect('activity=Cancelled'))).toEqual({ ...canceled, activity: 'Cancelled' });
    expect(rewriteBody('migration', { ...canceled, activity: 'Active' }, parseDialect('activity=Cancelled'))).toEqual({
      ...canceled,
      activity: 'Active',
    });
    const reg = { id: 'r', eventName: 'counterparty.merged', createdOn: '2026-01-02T03:04:05.000Z', token: 't', uri: 'http://x/' };
    const { token: _token, ...withoutToken } = reg;
    expect(rewriteBody('registrations', [reg], parseDialect('registrations=no-token'))).toEqual([withoutToken]);
    expect(rewriteBody('registrations', [reg], parseDialect('nulls'))).toEqual([reg]);
  });

  it('process-status=upper-snake: spells process status codes APPLICATION_RECEIVED in definitions, the process record and status-changed events', async () => {
    const snake = await startTestService({ dialect: 'process-status=upper-snake' });
    try {
      const token = await getToken(snake.url);
      const [truthId, gotId] = [await createProcess(plain.url, plainToken), await createProcess(snake.url, token)];
      const truth = await call(plain.url, plainToken, 'GET', `/process-orchestration/processes/${truthId}`, { headers: PO });
      const got = await call(snake.url, token, 'GET', `/process-orchestration/processes/${gotId}`, { headers: PO });
      expect([truth.body.status.code, got.body.status.code]).toEqual(['Created', 'CREATED']);
      const codes = async (url: string, bearer: string) =>
        (
          await call(url, bearer, 'GET', '/process-orchestration/process-definitions?codes=CleanOrder', { headers: PO })
        ).body[0].statuses.map((s: { code: string }) => s.code);
      expect(await codes(snake.url, token)).toEqual((await codes(plain.url, plainToken)).map(upperSnake));
      expect(await codes(snake.url, token)).toContain('APPLICATION_RECEIVED');
    } finally {
      await snake.dispose();
    }
    const d = parseDialect('process-status=upper-snake');
    const definition = {
      referenceId: 'p',
      code: 'Mortgage',
      statuses: [
        { referenceId: 's1', code: 'Created', name: 'Created', isActive: true },
        { referenceId: 's2', code: 'ApplicationReceived', name: 'Application received', isActive: true },
      ],
    };
    expect(rewriteBody('definitions', [definition], d)).toEqual([
      {
        ...definition,
        statuses: [
          { referenceId: 's1', code: 'CREATED', name: 'Created', isActive: true },
          { referenceId: 's2', code: 'APPLICATION_RECEIVED', name: 'Application received', isActive: true },
        ],
      },
    ]);
    const process = { referenceId: 'x', status: { referenceId: 's3', code: 'InReview', name: 'In review' } };
    expect(rewriteBody('process', process, d)).toEqual({ ...process, status: { referenceId: 's3', code: 'IN_REVIEW', name: 'In review' } });
    expect(rewriteBody('process', process, parseDialect('nulls'))).toEqual(process);
    const changed = (previousStatus: string | null, status: string) => ({
      id: 'e',
      eventName: 'process.status-changed',
      occurredOn: '2026-01-02T03:04:05.000Z',
      data: { processReferenceId: 'x', previousStatus, status, changedOn: '2026-01-02T03:04:05.000Z' },
    });
    expect(JSON.parse(deliveryDialect('process-status=upper-snake').body(changed('ApplicationReceived', 'InReview') as never))).toEqual(
      changed('APPLICATION_RECEIVED', 'IN_REVIEW'),
    );
    expect(JSON.parse(deliveryDialect('process-status=upper-snake').body(changed(null, 'Created') as never))).toEqual(
      changed(null, 'CREATED'),
    );
  });

  it('rewrites a running job\'s body to {"status": "Running", "progress"} or to none', () => {
    const running = { referenceId: 'j', componentsCompleted: ['Collateral'] };
    expect(rewriteRunningJob(running, 'status')).toEqual({ status: 'Running', progress: { completed: ['Collateral'] } });
    expect(rewriteRunningJob(running, 'empty')).toBeUndefined();
  });

  it('answers the statuses of its switches: rejections, a created message, uploads, a send without files or sent again, a refused definition', async () => {
    const statuses = await startTestService({
      dialect: 'rejections=422,missing-files=400,definition-refused=404,message-created=200,resend=409,upload=201',
    });
    try {
      const answers = async (url: string, token: string) => {
        const migrations = '/migration-assistance/migrations';
        const first = await call(url, token, 'POST', migrations, { body: { components: ['Counterparties'] } });
        const second = await call(url, token, 'POST', migrations, { body: { components: ['Counterparties'] } });
        await call(url, token, 'PUT', `${migrations}/${first.body.referenceId}/cancel`);
        const unknown = await call(url, token, 'POST', '/process-orchestration/processes', {
          headers: PO,
          body: { processDefinitionReferenceId: '00000000-0000-4000-8000-000000000000' },
        });
        const pid = await createProcess(url, token);
        const mid = randomUUID();
        const body = { messageType: 'CleanOrder', ...PARTIES };
        const created = await call(url, token, 'PUT', messagePath(pid, mid), { headers: LODGING, body });
        const repeated = await call(url, token, 'PUT', messagePath(pid, mid), { headers: LODGING, body });
        const missing = await call(url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
        const uploads: number[] = [];
        for (const name of ['CleanOrderFinancingRequest.xml', 'CleanOrderCounterparties.xml'])
          uploads.push((await upload(url, token, pid, mid, name, sample(name), 'application/xml')).status);
        const sent = await call(url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
        const again = await call(url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
        const problem = (r: Awaited<ReturnType<typeof call>>) => [r.status, r.body.status, r.body.code, r.body.title];
        return {
          second: problem(second),
          unknown: problem(unknown),
          created: [created.status, created.body.status],
          repeated: [repeated.status, repeated.body.status],
          missing: [...problem(missing), r(missing.body.detail, pid, mid)],
          uploads,
          sent: [sent.status, sent.body.status],
          again: again.status === 200 ? [again.status, again.body.status] : [...problem(again), r(again.body.detail, pid, mid)],
        };
      };
      const r = (text: string, ...ids: string[]) => ids.reduce((t, i) => t.replaceAll(i, '<id>'), text);
      const truth = await answers(plain.url, plainToken);
      const got = await answers(statuses.url, await getToken(statuses.url));
      expect(truth).toEqual({
        second: [409, 409, 'MIGRATION_ALREADY_ACTIVE', 'Conflict'],
        unknown: [422, 422, 'UNKNOWN_PROCESS_DEFINITION', 'Unprocessable content'],
        created: [201, 'Draft'],
        repeated: [200, 'Draft'],
        missing: [
          409,
          409,
          'REQUIRED_ATTACHMENTS_MISSING',
          'Conflict',
          'message <id> cannot be sent: required attachments CleanOrderFinancingRequest.xml and CleanOrderCounterparties.xml are missing; upload them first',
        ],
        uploads: [204, 204],
        sent: [200, 'Sent'],
        again: [200, 'Sent'],
      });
      expect(got).toEqual({
        second: [422, 422, 'MIGRATION_ALREADY_ACTIVE', 'Unprocessable Entity'],
        unknown: [404, 404, 'UNKNOWN_PROCESS_DEFINITION', 'Not Found'],
        created: [200, 'Draft'],
        repeated: [200, 'Draft'],
        missing: [400, 400, ...truth.missing.slice(2, 3), 'Bad Request', truth.missing[4]],
        uploads: [201, 201],
        sent: [200, 'Sent'],
        again: [
          409,
          409,
          'MESSAGE_NOT_DRAFT',
          'Conflict',
          expect.stringMatching(/^message <id> was already sent on \d{4}-\d{2}-\d{2}T[\d:.]+Z; it is not a Draft any more$/),
        ],
      });
    } finally {
      await statuses.dispose();
    }
  });

  it('delivers webhooks with nulls for absent data members, timestamps in its form, and each delivery twice under the same id, with more envelope members', async () => {
    const fast = { webhookPollMs: 50, webhookRetryBaseMs: 20 };
    const truthService = await startTestService(fast);
    const otherService = await startTestService({ ...fast, dialect: 'nulls,timestamps=basic,deliveries=twice,envelope=extra' });
    const { received, receiver, uri } = await startReceiver();
    try {
      const deliveries = async (svc: TestService) => {
        received.length = 0;
        const token = await getToken(svc.url);
        const base = '/process-orchestration/events/process.status-changed';
        const reg = await call(svc.url, token, 'POST', `${base}/endpoints`, {
          headers: { accept: 'application/json;api-version=2024.1.0' },
          body: { uri },
        });
        expect(reg.status).toBe(201);
        const pid = await createProcess(svc.url, token);
        for (let waited = 0; received.length < (svc === otherService ? 2 : 1) && waited < 10_000; waited += 25)
          await new Promise((r) => setTimeout(r, 25));
        await new Promise((r) => setTimeout(r, 200)); // nothing more arrives
        return { pid, received: received.map((d) => ({ ...d })) };
      };
      const truth = await deliveries(truthService);
      const got = await deliveries(otherService);
      expect(truth.received).toHaveLength(1);
      const t = truth.received[0]!.body;
      expect(t.data).toMatchObject({ processReferenceId: truth.pid, previousStatus: null, status: 'Created' });
      expect('reason' in t.data).toBe(false);
      expect(t.occurredOn).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      // the same event twice: same id in body and header
      expect(got.received).toHaveLength(2);
      const [g1, g2] = got.received as [Delivery, Delivery];
      expect(g2.body).toEqual(g1.body);
      expect([g1.headers['x-event-id'], g2.headers['x-event-id']]).toEqual([g1.body.id, g1.body.id]);
      expect(g1.headers['x-event-token']).toEqual(g2.headers['x-event-token']);
      const g = g1.body;
      const basicForm = /^\d{8}T\d{6}\.\d{3}Z$/;
      expect([g.occurredOn, g.data.changedOn]).toEqual([expect.stringMatching(basicForm), expect.stringMatching(basicForm)]);
      // nothing else changed: the data as the service's own, with reason null and the other ids
      const ids = (d: Record<string, unknown>, pid: string) =>
        JSON.parse(
          JSON.stringify(d)
            .replaceAll(pid, '<process>')
            .replace(/"changedOn":"[^"]*"/, '"changedOn":"<time>"'),
        );
      expect(ids(g.data, got.pid)).toEqual({ ...ids(t.data, truth.pid), reason: null });
      // envelope=extra: more members ahead of ours, ours unchanged
      expect(Object.keys(g)).toEqual(['specversion', 'type', 'source', ...Object.keys(t)]);
      expect([g.specversion, g.type]).toEqual(['1.0', 'process.status-changed']);
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
      await truthService.dispose();
      await otherService.dispose();
    }
  });

  it('deliveries=shuffled, envelope=extra-data: holds three deliveries and sends them newest first, their data with members no receiver knows', async () => {
    const svc = await startTestService({ webhookPollMs: 50, webhookRetryBaseMs: 20, dialect: 'deliveries=shuffled,envelope=extra-data' });
    const { received, receiver, uri } = await startReceiver();
    try {
      const token = await getToken(svc.url);
      const reg = await call(svc.url, token, 'POST', '/process-orchestration/events/process.status-changed/endpoints', {
        headers: { accept: 'application/json;api-version=2024.1.0' },
        body: { uri },
      });
      expect(reg.status).toBe(201);
      const created: string[] = [];
      for (let i = 0; i < 3; i++) created.push(await createProcess(svc.url, token));
      for (let waited = 0; received.length < 3 && waited < 10_000; waited += 25) await new Promise((r) => setTimeout(r, 25));
      await new Promise((r) => setTimeout(r, 200)); // nothing more arrives
      // each once, the last created first
      expect(received.map((d) => d.body.data.processReferenceId)).toEqual([...created].reverse());
      expect(new Set(received.map((d) => d.body.id)).size).toBe(3);
      for (const d of received) {
        expect(Object.keys(d.body)).toEqual(['id', 'eventName', 'occurredOn', 'data']);
        expect(d.body.data).toMatchObject({ status: 'Created', previousStatus: null, ...EXTRA_DATA_MEMBERS });
      }
      // one delivery alone is not held for ever: sent once the oldest has waited its time
      received.length = 0;
      const alone = await createProcess(svc.url, token);
      for (let waited = 0; received.length < 1 && waited < 10_000; waited += 25) await new Promise((r) => setTimeout(r, 25));
      expect(received.map((d) => d.body.data.processReferenceId)).toEqual([alone]);
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
      await svc.dispose();
    }
  });
});
