import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_GROUPS } from '../../src/contract/events.js';
import { call, getToken, OTHER, startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let token: string;
let other: string;
let label2: string;
const V = { accept: 'application/json;api-version=2024.1.0' };
const RECEIVER = 'http://127.0.0.1:9/hooks';

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  other = await getToken(svc.url, OTHER);
  label2 = await getToken(svc.url, { clientId: 'demo-client', secret: 'demo-secret', broker: 'demo-broker', label: 'demo-label-2' });
});
afterAll(async () => svc?.dispose());

describe('event types', () => {
  it.each(Object.entries(EVENT_GROUPS))('lists the event names of %s', async (group, names) => {
    const res = await call(svc.url, token, 'GET', `/${group}/events/event-types`, { headers: V });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([...names]);
  });

  it('answers 404 UNKNOWN_EVENT_TYPE for an event of another group', async () => {
    const res = await call(svc.url, token, 'POST', '/lodging/events/counterparty.merged/endpoints', {
      body: { uri: RECEIVER },
      headers: V,
    });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: 'UNKNOWN_EVENT_TYPE',
      detail:
        'event type counterparty.merged is not an event of /lodging; its events are lodging.message.handling_succeeded, lodging.message.handling_failed',
    });
  });

  it('serves an example envelope of every event', async () => {
    const res = await call(svc.url, token, 'GET', '/process-orchestration/events/process.status-changed/example', { headers: V });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: '5a1f0e2d-3c4b-4a59-8e7f-6d5c4b3a2918',
      eventName: 'process.status-changed',
      occurredOn: '2025-01-15T09:30:00.000Z',
      data: {
        processReferenceId: '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f',
        processDefinitionReferenceId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
        processDefinitionCode: 'CleanOrder',
        previousStatus: 'ApplicationReceived',
        previousStatusReferenceId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        status: 'InReview',
        statusReferenceId: '6e5d4c3b-2a19-4f8e-9d7c-6b5a49382716',
        messageReferenceId: 'c4d5e6f7-0819-4a2b-8c3d-4e5f60718293',
        reason: 'message c4d5e6f7-0819-4a2b-8c3d-4e5f60718293 handled',
        externalReferences: [{ origin: 'crm', referenceId: 'A-2025-7' }],
        changedOn: '2025-01-15T09:30:00.000Z',
      },
    });
  });
});

describe('webhook registrations', () => {
  it.each(Object.entries(EVENT_GROUPS).map(([group, names]) => [group, names[0]]))(
    'are created, listed, read, changed and deleted on %s',
    async (group, eventName) => {
      const base = `/${group}/events/${eventName}`;
      const created = await call(svc.url, token, 'POST', `${base}/endpoints`, { body: { uri: RECEIVER }, headers: V });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(['createdOn', 'eventName', 'id', 'token', 'uri']);
      expect(created.body).toMatchObject({ eventName, uri: RECEIVER });
      expect(created.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 bytes, base64url
      expect(Date.parse(created.body.createdOn)).not.toBeNaN();
      const id = created.body.id;
      expect(created.headers.get('location')).toBe(`${base}/endpoints/${id}`);

      const list = await call(svc.url, token, 'GET', `${base}/endpoints`, { headers: V });
      expect(list.body).toEqual([created.body]);
      const tok = await call(svc.url, token, 'GET', `${base}/token/${id}`, { headers: V });
      expect(tok.body).toEqual({ token: created.body.token });

      const put = await call(svc.url, token, 'PUT', `${base}/endpoints/${id}`, { body: { uri: 'http://127.0.0.1:10/other' }, headers: V });
      expect(put.status).toBe(204);
      expect((await call(svc.url, token, 'GET', `${base}/endpoints`, { headers: V })).body[0].uri).toBe('http://127.0.0.1:10/other');

      expect((await call(svc.url, token, 'DELETE', `${base}/endpoints/${id}`, { headers: V })).status).toBe(204);
      expect((await call(svc.url, token, 'GET', `${base}/endpoints`, { headers: V })).body).toEqual([]);
      expect((await call(svc.url, token, 'GET', `${base}/token/${id}`, { headers: V })).status).toBe(404);
    },
  );

  it('registers every event type by its own call', async () => {
    const a = await call(svc.url, token, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', {
      body: { uri: RECEIVER },
      headers: V,
    });
    const b = await call(svc.url, token, 'GET', '/counterparty-management/events/counterparty_master.consolidated/endpoints', {
      headers: V,
    });
    expect(b.body.map((r: { id: string }) => r.id)).not.toContain(a.body.id);
  });

  it('hides registrations from other tenants and other white labels (404)', async () => {
    const base = '/counterparty-management/events/counterparty_operational.consolidated';
    const created = await call(svc.url, token, 'POST', `${base}/endpoints`, { body: { uri: RECEIVER }, headers: V });
    const id = created.body.id;
    for (const stranger of [other, label2]) {
      expect((await call(svc.url, stranger, 'GET', `${base}/endpoints`, { headers: V })).body).toEqual([]);
      for (const [method, path, body] of [
        ['GET', `${base}/token/${id}`, undefined],
        ['PUT', `${base}/endpoints/${id}`, { uri: RECEIVER }],
        ['DELETE', `${base}/endpoints/${id}`, undefined],
        ['GET', `${base}/endpoints/${id}/deliveries`, undefined],
      ] as const) {
        const res = await call(svc.url, stranger, method, path, { body, headers: V });
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'NOT_FOUND']);
      }
    }
    expect((await call(svc.url, token, 'GET', `${base}/token/${id}`, { headers: V })).status).toBe(200);
  });

  it('refuses a body without uri with 400', async () => {
    const res = await call(svc.url, token, 'POST', '/lodging/events/lodging.message.handling_failed/endpoints', {
      body: { url: RECEIVER },
      headers: V,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'INVALID_REQUEST',
      detail: 'request body: expected a JSON object {"uri": "<http(s) uri of the receiver>"}',
    });
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is a cloud metadata address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a cloud metadata address'],
    ['http://2852039166/', '169.254.169.254 is a cloud metadata address'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254 is a cloud metadata address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata host'],
    ['http://169.254.10.1/', '169.254.10.1 is a link-local address'],
    ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['http://10.0.0.1/', '10.0.0.1 is on a private network (allowPrivateWebhooks is off)'],
    ['http://192.168.1.10:8080/', '192.168.1.10 is on a private network (allowPrivateWebhooks is off)'],
    ['http://[fc00::1]/', 'fc00::1 is on a private network (allowPrivateWebhooks is off)'],
    ['http://100.64.0.1/', '100.64.0.1 is on a private network (allowPrivateWebhooks is off)'],
    ['http://0.0.0.0:8080/', '0.0.0.0 is an unspecified address'],
    ['http://[::]/', ':: is an unspecified address'],
    ['http://224.0.0.1/', '224.0.0.1 is a multicast address'],
    [
      'http://[2001:0:4136:e378:8000:63bf:5601:5601]/',
      '2001:0:4136:e378:8000:63bf:5601:5601 is a Teredo (2001::/32) or local-use NAT64 (64:ff9b:1::/48) address, refused whatever IPv4 address it leads to',
    ],
    [
      'http://[64:ff9b:1::a9fe:a9fe]/',
      '64:ff9b:1::a9fe:a9fe is a Teredo (2001::/32) or local-use NAT64 (64:ff9b:1::/48) address, refused whatever IPv4 address it leads to',
    ],
    ['ftp://example.org/hook', 'scheme ftp is not http or https'],
    ['file:///etc/passwd', 'scheme file is not http or https'],
    ['not a uri', 'not an absolute uri'],
    ['http://user:pw@example.org/', 'credentials in the uri are not allowed (the X-Event-Token header authenticates deliveries)'],
  ])('refuses %s with 422 WEBHOOK_URI_REFUSED', async (uri, why) => {
    const res = await call(svc.url, token, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', {
      body: { uri },
      headers: V,
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'WEBHOOK_URI_REFUSED',
      detail: `webhook uri refused: ${why}; expected an http(s) uri of a publicly reachable host, got "${uri}"`,
      errors: [{ field: 'uri', message: 'WEBHOOK_URI_REFUSED' }],
    });
  });

  it('checks the uri again when it is changed', async () => {
    const base = '/counterparty-management/events/counterparty.merged';
    const created = await call(svc.url, token, 'POST', `${base}/endpoints`, { body: { uri: RECEIVER }, headers: V });
    const res = await call(svc.url, token, 'PUT', `${base}/endpoints/${created.body.id}`, {
      body: { uri: 'http://169.254.169.254/' },
      headers: V,
    });
    expect(res.status).toBe(422);
    expect((await call(svc.url, token, 'GET', `${base}/token/${created.body.id}`, { headers: V })).status).toBe(200);
  });

  it('refuses loopback receivers when allowLoopbackWebhooks is off', async () => {
    const strict = await startTestService({ allowLoopbackWebhooks: false });
    try {
      const t = await getToken(strict.url);
      for (const uri of ['http://127.0.0.1:8080/', 'http://localhost:8080/', 'http://[::1]/']) {
        const res = await call(strict.url, t, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', {
          body: { uri },
          headers: V,
        });
        expect([uri, res.status, res.body.code]).toEqual([uri, 422, 'WEBHOOK_URI_REFUSED']);
      }
    } finally {
      await strict.dispose();
    }
  });
});
