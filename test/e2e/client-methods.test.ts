/**
 * Every method of the client against the embedded service over a real port: authentication,
 * process orchestration, lodging, counterparties, events and webhooks, migrations, staging,
 * staged data, jobs and the log stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type ClientError, type StagecoachClient } from '../../src/client/index.js';
import { createWebhookReceiver, type ReceivedEvent } from '../../src/client/webhook-receiver.js';
import { encodeFrame } from '../../src/codec/index.js';
import { startTestService, DEMO, SCOPED, type TestService } from '../support/service.js';

const SAMPLES = join(import.meta.dirname, '../../samples/lodging');
const PARTIES = {
  stakeholder: { id: '68750110', type: 'Kvk' },
  recipient: { id: 'demo-broker', type: 'broker' },
  sender: { id: 'demo-broker', type: 'broker' },
};

let svc: TestService;
let client: StagecoachClient;
const clientFor = (who: { clientId: string; secret: string; broker: string; label: string }, extra = {}) =>
  createClient({
    baseUrl: svc.url,
    clientId: who.clientId,
    clientSecret: who.secret,
    brokerKey: who.broker,
    labelReferenceId: who.label,
    ...extra,
  });

beforeAll(async () => {
  svc = await startTestService({ webhookRetryBaseMs: 50, webhookPollMs: 50 });
  client = clientFor(DEMO);
});
afterAll(async () => {
  await client.close();
  await svc.dispose();
});

/** The ClientError a call fails with (fails the test if it succeeds). */
const failure = (p: Promise<unknown>): Promise<ClientError> =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as ClientError,
  );

const person = (n: number, extra: Record<string, unknown> = {}) => ({
  referenceId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  type: 'person',
  initials: 'T.',
  surname: `Tester${n}`,
  ...extra,
});

describe('client.auth', () => {
  it('gets a token with the claims of the demo identity and shares it between calls', async () => {
    const t = await client.auth.token();
    expect(t.claims).toMatchObject({ sub: 'demo-client', broker: 'demo-broker', label: 'demo-label' });
    expect(t.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect((await client.auth.token()).accessToken).toBe(t.accessToken);
  });
  it('validates the token with the service', async () => {
    expect(await client.auth.validate()).toMatchObject({
      valid: true,
      clientId: 'demo-client',
      brokerKey: 'demo-broker',
      labelReferenceId: 'demo-label',
    });
  });
  it('reads the JWKS and the supported versions', async () => {
    const jwks = await client.auth.jwks();
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256' });
    expect(jwks.supportedVersions).toEqual(['2022.1.0', '2024.1.0', '2025.1.0', '2026.1.0']);
  });
  it('says to check the credentials when they are wrong', async () => {
    const bad = clientFor({ ...DEMO, secret: 'wrong' });
    await expect(bad.auth.token()).rejects.toMatchObject({
      code: 'INVALID_CLIENT_CREDENTIALS',
      status: 401,
      message:
        'the service refused the client credentials (401 on GET /authentication/token/demo-broker/demo-label): client id and secret are not valid; send them as HTTP Basic credentials; check STAGECOACH_CLIENT_ID / STAGECOACH_CLIENT_SECRET (or --client-id / --client-secret)',
    });
    await bad.close();
  });
  it('says to check broker key and label when the pair is unknown', async () => {
    const bad = clientFor({ ...DEMO, label: 'nope' });
    await expect(bad.auth.token()).rejects.toMatchObject({ code: 'UNKNOWN_TENANT_OR_LABEL', status: 404 });
    await bad.close();
  });
  it('names the scopes of a limited client and the domain to enable', async () => {
    const scoped = clientFor(SCOPED);
    await expect(scoped.migrations.current()).rejects.toMatchObject({
      code: 'SCOPE_NOT_GRANTED',
      message:
        "this client's token is limited to /counterparty-management; ask the operator to enable /migration-assistance for client scoped-client (403 on GET /migration-assistance/migrations/current): this token is limited to /counterparty-management; /migration-assistance must be enabled for the client by the service operator",
    });
    await scoped.close();
  });
  it('lists the versions the service supports when a configured version is refused', async () => {
    const old = clientFor(DEMO, { versions: { lodging: '2019.1.0' } });
    const err = await failure(old.lodging.getMessage(randomUUID(), randomUUID()));
    expect(err.code).toBe('UNSUPPORTED_API_VERSION');
    expect(err.message).toMatch(
      /^the service refused api-version 2019\.1\.0 for \/lodging \(400 on GET \/lodging\/processes\/[0-9a-f-]+\/messages\/[0-9a-f-]+\): .*; the service supports 2022\.1\.0, 2024\.1\.0, 2025\.1\.0, 2026\.1\.0 \(see X-Supported-Versions of GET \/authentication\/jwks\), and set the client's versions option for this group$/,
    );
    await old.close();
  });
});

describe('client.processes and client.lodging', () => {
  it('finds the definition, starts a process, creates a message, uploads the samples and sends it', async () => {
    const [def, ...more] = await client.processes.definitions({ types: ['LoanOrigination'], codes: ['CleanOrder'] });
    expect(more).toEqual([]);
    expect(def).toMatchObject({ code: 'CleanOrder', type: 'LoanOrigination', isActive: true });
    const { referenceId: pid } = await client.processes.create({
      processDefinitionReferenceId: def!.referenceId,
      externalReferences: [{ origin: 'crm', referenceId: 'C-1' }],
    });
    expect(await client.processes.get(pid)).toMatchObject({ referenceId: pid });

    const mid = randomUUID();
    const draft = await client.lodging.createMessage(pid, mid, { messageType: 'CleanOrder', ...PARTIES });
    expect(draft).toMatchObject({ referenceId: mid, status: 'Draft', messageType: 'CleanOrder' });
    for (const name of ['CleanOrderFinancingRequest.xml', 'CleanOrderCounterparties.xml', 'EmployerStatement.pdf']) {
      await client.lodging.uploadAttachment(
        pid,
        mid,
        name,
        readFileSync(join(SAMPLES, name)),
        name.endsWith('.pdf') ? 'application/pdf' : 'application/xml',
      );
    }
    const sent = await client.lodging.send(pid, mid);
    expect(sent.status).toBe('Sent');
    expect(sent.attachments!.map((a) => a.fileName).sort()).toEqual([
      'CleanOrderCounterparties.xml',
      'CleanOrderFinancingRequest.xml',
      'EmployerStatement.pdf',
    ]);
    expect(await client.lodging.getMessage(pid, mid)).toMatchObject({ referenceId: mid, status: 'Sent' });
  });
  it('passes the service detail through when send is refused', async () => {
    const [def] = await client.processes.definitions({ codes: ['CleanOrder'] });
    const { referenceId: pid } = await client.processes.create({ processDefinitionReferenceId: def!.referenceId });
    const mid = randomUUID();
    await client.lodging.createMessage(pid, mid, { messageType: 'CleanOrder', ...PARTIES });
    await expect(client.lodging.send(pid, mid)).rejects.toMatchObject({
      code: 'REQUIRED_ATTACHMENTS_MISSING',
      status: 409,
      message: `message ${mid} cannot be sent: required attachments CleanOrderFinancingRequest.xml and CleanOrderCounterparties.xml are missing; upload them first (409 on PUT /lodging/processes/${pid}/messages/${mid}/send)`,
    });
  });
});

describe('client.counterparties', () => {
  it('lists one page and every page', async () => {
    const page = await client.counterparties.list({ offset: 1, limit: 2 });
    expect([page.offset, page.limit, page.items.length]).toEqual([1, 2, 2]);
    const all = [];
    for await (const cp of client.counterparties.listAll({ pageSize: 2 })) all.push(cp.referenceId);
    expect(all.length).toBe(page.total);
    expect(all.slice(1, 3)).toEqual(page.items.map((i) => i.referenceId));
  });
  it('streams in both formats the same items as the list, and from continue-from', async () => {
    const listed = [];
    for await (const cp of client.counterparties.listAll()) listed.push(cp.sequenceNumber);
    for (const format of ['jsonl', 'json-seq'] as const) {
      const streamed = [];
      for await (const cp of client.counterparties.stream({ format })) streamed.push(cp.sequenceNumber);
      expect(streamed).toEqual(listed);
    }
    const tail = [];
    for await (const cp of client.counterparties.stream({ continueFrom: listed[2]! })) tail.push(cp.sequenceNumber);
    expect(tail).toEqual(listed.slice(2));
  });
});

describe('client.events and the webhook receiver', () => {
  let server: Server;
  let hookUrl: string;
  const received: ReceivedEvent[] = [];
  let token = 'not yet known';
  beforeAll(async () => {
    server = createServer(createWebhookReceiver({ tokens: () => token, onEvent: (e) => void received.push(e) }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('lists event types, subscribes, reads the token, receives a triggered event, shows deliveries, updates and unsubscribes', async () => {
    expect(await client.events.eventTypes('lodging')).toEqual(['lodging.message.handling_succeeded', 'lodging.message.handling_failed']);
    const reg = await client.events.subscribe('counterparty.merged', hookUrl);
    token = reg.token;
    expect(reg).toMatchObject({ eventName: 'counterparty.merged', uri: hookUrl });
    expect(await client.events.token('counterparty.merged', reg.id)).toBe(reg.token);
    expect((await client.events.list('counterparty.merged')).map((r) => r.id)).toContain(reg.id);
    expect(await client.events.example('counterparty.merged')).toMatchObject({
      eventName: 'counterparty.merged',
      data: expect.any(Object),
    });

    const emitted = await client.events.trigger('counterparty.merged', { survivorReferenceId: 'S', mergedReferenceIds: ['M'] });
    expect(emitted).toBeTypeOf('object');
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(received).toEqual([
      expect.objectContaining({ eventName: 'counterparty.merged', data: { survivorReferenceId: 'S', mergedReferenceIds: ['M'] } }),
    ]);
    let deliveries = await client.events.deliveries('counterparty.merged', reg.id);
    for (let i = 0; i < 50 && deliveries.items[0]?.status !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      deliveries = await client.events.deliveries('counterparty.merged', reg.id);
    }
    expect(deliveries.items.map((d) => [d.eventId, d.status])).toEqual([[received[0]!.id, 'delivered']]);

    await client.events.update('counterparty.merged', reg.id, `${hookUrl}/v2`);
    expect((await client.events.list('counterparty.merged')).find((r) => r.id === reg.id)?.uri).toBe(`${hookUrl}/v2`);
    await client.events.unsubscribe('counterparty.merged', reg.id);
    expect((await client.events.list('counterparty.merged')).map((r) => r.id)).not.toContain(reg.id);
    await expect(client.events.unsubscribe('counterparty.merged', reg.id)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });
});

describe('client.migrations and client.jobs', () => {
  it('runs a migration: create, current, stage (both formats), staged data, validate, import, counts, logs', async () => {
    expect(await client.migrations.current()).toBeUndefined();
    const m = await client.migrations.create(['Counterparties']);
    expect(m).toMatchObject({ stagingStatus: 'Pending', importStatus: 'Pending', numberOfStagedEntities: 0 });
    expect((await client.migrations.current())?.referenceId).toBe(m.referenceId);
    expect((await client.migrations.get(m.referenceId)).referenceId).toBe(m.referenceId);

    const seq = [person(1), person(2), { referenceId: person(3).referenceId, type: 'person', surname: 'NoInitials' }]
      .map((r) => encodeFrame('json-seq', r))
      .join('');
    const results = await client.migrations.stageCounterparties(m.referenceId, seq, { format: 'json-seq' });
    expect(results).toEqual([
      { referenceId: person(1).referenceId, isSuccessful: true, errors: [] },
      { referenceId: person(2).referenceId, isSuccessful: true, errors: [] },
      { referenceId: person(3).referenceId, isSuccessful: false, errors: [{ field: 'initials', message: 'MISSING_REQUIRED_FIELD' }] },
    ]);
    const jsonl = [person(3), person(4)].map((r) => encodeFrame('jsonl', r)).join('');
    expect(
      (await client.migrations.stageCounterparties(m.referenceId, Buffer.from(jsonl), { format: 'jsonl' })).map((r) => r.isSuccessful),
    ).toEqual([true, true]);

    const page = await client.migrations.listStaged(m.referenceId, { limit: 2 });
    expect([page.total, page.items.length]).toEqual([4, 2]);
    expect(await client.migrations.getStaged(m.referenceId, person(4).referenceId)).toMatchObject({ surname: 'Tester4' });
    await client.migrations.deleteStaged(m.referenceId, person(4).referenceId);
    expect(await client.migrations.getStaged(m.referenceId, person(4).referenceId)).toBeUndefined();
    await expect(client.migrations.deleteStaged(m.referenceId, person(4).referenceId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
    });

    const polls: number[] = [];
    const validation = await client.jobs.waitFor(await client.jobs.validateStaging(m.referenceId), {
      deadlineMs: 30_000,
      onPoll: (_s, n) => polls.push(n),
    });
    expect(validation).toMatchObject({ jobType: 'ValidateStaging', isValid: true, errors: [] });
    const imported = await client.jobs.waitFor(await client.jobs.import(m.referenceId), { deadlineMs: 30_000 });
    expect(imported).toMatchObject({ jobType: 'Import', numberOfImportedEntities: 3 });
    const countsJob = await client.jobs.counts(m.referenceId);
    const counts = await client.jobs.waitFor(countsJob, { deadlineMs: 30_000 });
    expect(counts.jobType).toBe('Counts');
    expect(await client.jobs.get(countsJob)).toEqual({ state: 'done', result: counts });

    const logs = [];
    for await (const entry of client.migrations.logs(m.referenceId, { Components: ['Counterparties'] })) logs.push(entry);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.every((e) => e.component === 'Counterparties')).toBe(true);
    const seqs = logs.map((e) => e.sequenceNumber!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const errorsOnly = [];
    for await (const entry of client.migrations.logs(m.referenceId, { LogLevels: ['WARN'] })) errorsOnly.push(entry.logLevel);
    expect(new Set(errorsOnly)).toEqual(new Set(['WARN']));
  });

  it('refuses a second active migration with the conflict of the service, and cancels', async () => {
    const active = (await client.migrations.current()) ?? (await client.migrations.create(['Counterparties']));
    if (active.activity === 'Active') {
      await expect(client.migrations.create(['Counterparties'])).rejects.toMatchObject({ code: 'MIGRATION_ALREADY_ACTIVE', status: 409 });
    }
    const canceled = await client.migrations.cancel(active.referenceId);
    expect(canceled?.activity).toBe('Canceled');
    expect(await client.migrations.current()).toBeUndefined();
    await expect(client.jobs.validateStaging(active.referenceId)).rejects.toMatchObject({ status: 409 });
  });

  it('fails waitFor with JOB_DEADLINE_EXCEEDED when the job outlives the deadline', async () => {
    const slow = await startTestService({ jobRecordsPerSecond: 1 });
    const c = createClient({
      baseUrl: slow.url,
      clientId: DEMO.clientId,
      clientSecret: DEMO.secret,
      brokerKey: DEMO.broker,
      labelReferenceId: DEMO.label,
    });
    try {
      const m = await c.migrations.create(['Counterparties']);
      await c.migrations.stageCounterparties(m.referenceId, [1, 2, 3, 4, 5].map((n) => encodeFrame('jsonl', person(n))).join(''), {
        format: 'jsonl',
      });
      const job = await c.jobs.validateStaging(m.referenceId);
      const err = await failure(c.jobs.waitFor(job, { deadlineMs: 300 }));
      expect(err.code).toBe('JOB_DEADLINE_EXCEEDED');
      expect(err.message).toMatch(
        new RegExp(`^job ${job} was still running after 300 ms \\(components completed: none\\); poll it again later with jobs.waitFor$`),
      );
    } finally {
      await c.close();
      await slow.dispose();
    }
  });
});
