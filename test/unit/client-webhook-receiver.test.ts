/** The webhook receiver helper: token check, duplicate drop, failures, limits, over node:http. */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookReceiver, type ReceivedEvent, type WebhookReceiverOptions } from '../../src/client/webhook-receiver.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(options: Partial<WebhookReceiverOptions> & { onEvent?: WebhookReceiverOptions['onEvent'] } = {}) {
  const events: ReceivedEvent[] = [];
  const receiver = createWebhookReceiver({
    token: 'secret-token',
    onEvent: (e) => void events.push(e),
    ...options,
  } as WebhookReceiverOptions);
  const server = createServer(receiver);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const post = (body: unknown, token: string | null = 'secret-token', headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { 'x-event-token': token } : {}), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { url, post, events, receiver };
}

const event = (id: string) => ({
  id,
  eventName: 'counterparty.merged',
  occurredOn: '2025-01-15T09:30:00.000Z',
  data: { survivorReferenceId: 'S' },
});

describe('webhook receiver', () => {
  it('hands a delivery with the right token to onEvent and answers 204', async () => {
    const r = await serve();
    expect((await r.post(event('e1'))).status).toBe(204);
    expect(r.events).toEqual([
      {
        id: 'e1',
        eventName: 'counterparty.merged',
        occurredOn: '2025-01-15T09:30:00.000Z',
        data: { survivorReferenceId: 'S' },
        body: event('e1'),
      },
    ]);
  });

  it('reads a delivery of a platform that chose differently: nulls as absent, timestamps of any ISO 8601 form in the extended form', async () => {
    const r = await serve();
    const delivery = {
      id: 'e2',
      eventName: 'process.status-changed',
      occurredOn: '20250115T093000,250+0100',
      data: {
        status: 'InReview',
        previousStatus: 'ApplicationReceived',
        reason: null,
        changedOn: '20250115T083000.250Z',
        nested: { a: null, b: 1 },
      },
    };
    expect((await r.post(delivery)).status).toBe(204);
    expect(r.events).toEqual([
      {
        id: 'e2',
        eventName: 'process.status-changed',
        occurredOn: '2025-01-15T09:30:00.250+01:00',
        data: { status: 'InReview', previousStatus: 'ApplicationReceived', changedOn: '2025-01-15T08:30:00.250Z', nested: { b: 1 } },
        body: delivery,
      },
    ]);
    // an event the receiver does not know: its data is passed on without nulls, strings untouched
    expect((await r.post({ id: 'e3', eventName: 'other.event', occurredOn: null, data: { at: '20250115T093000Z', x: null } })).status).toBe(
      204,
    );
    expect(r.events[1]).toMatchObject({ id: 'e3', occurredOn: undefined, data: { at: '20250115T093000Z' } });
  });

  it('refuses a timestamp it cannot read with 400 naming the member, and never calls onEvent', async () => {
    const r = await serve();
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { ...event('e4'), occurredOn: '2025-01-15 09:30' },
        'occurredOn: expected an ISO 8601 date-time with a zone (e.g. 2026-01-02T03:04:05Z or 20260102T030405Z), got "2025-01-15 09:30"',
      ],
      [
        { id: 'e5', eventName: 'lodging.message.handling_failed', occurredOn: '2025-01-15T09:30:00Z', data: { handledOn: '15/01/2025' } },
        'data.handledOn: expected an ISO 8601 date-time with a zone (e.g. 2026-01-02T03:04:05Z or 20260102T030405Z), got "15/01/2025"',
      ],
    ];
    for (const [body, detail] of cases) {
      const res = await r.post(body);
      expect([res.status, await res.json()]).toEqual([400, { title: 'bad-request', status: 400, detail }]);
    }
    expect(r.events).toEqual([]);
    expect(r.receiver.stats.badRequests).toBe(2);
  });

  it('rejects a wrong, a longer, a shorter and a missing token with 401 and never calls onEvent', async () => {
    const r = await serve();
    for (const token of ['secret-tokeN', 'secret-token-and-more', 's', null]) {
      const res = await r.post(event('e1'), token);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        title: 'unauthorized',
        status: 401,
        detail: token ? 'X-Event-Token does not match' : 'X-Event-Token is missing',
      });
    }
    expect(r.events).toEqual([]);
    expect(r.receiver.stats.unauthorized).toBe(4);
  });

  it('drops a duplicate event id (204, onEvent not called again)', async () => {
    const r = await serve();
    for (let i = 0; i < 3; i++) expect((await r.post(event('same'))).status).toBe(204);
    expect(r.events.length).toBe(1);
    expect(r.receiver.stats).toMatchObject({ handled: 1, duplicates: 2 });
  });

  it('takes the id from X-Event-Id when the body has none', async () => {
    const r = await serve();
    const { id: _id, ...noId } = event('x');
    await r.post(noId, 'secret-token', { 'x-event-id': 'h1' });
    await r.post(noId, 'secret-token', { 'x-event-id': 'h1' });
    expect(r.events.map((e) => e.id)).toEqual(['h1']);
  });

  it('remembers only the last seenIds ids (bounded), so an old id is handled again', async () => {
    const r = await serve({ seenIds: 2 });
    for (const id of ['a', 'b', 'c', 'a']) await r.post(event(id));
    expect(r.events.map((e) => e.id)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('answers 500 when onEvent fails and handles the retry of the same id', async () => {
    let calls = 0;
    const r = await serve({
      onEvent: () => {
        if (++calls === 1) throw new Error('database down');
      },
    });
    expect((await r.post(event('r1'))).status).toBe(500);
    expect((await r.post(event('r1'))).status).toBe(204);
    expect(calls).toBe(2);
  });

  it('accepts any of several tokens given by a lookup by event name', async () => {
    const r = await serve({ token: undefined, tokens: (name) => (name === 'counterparty.merged' ? ['old', 'new'] : undefined) });
    expect((await r.post(event('t1'), 'old')).status).toBe(204);
    expect((await r.post(event('t2'), 'new')).status).toBe(204);
    expect((await r.post({ ...event('t3'), eventName: 'process.status-changed' }, 'new')).status).toBe(401);
  });

  it('answers 400 to a body that is not a JSON object, 413 to one over the limit, 405 to a GET', async () => {
    const r = await serve({ maxBodyBytes: 100 });
    expect((await r.post('not json')).status).toBe(400);
    expect((await r.post('[1,2]')).status).toBe(400);
    expect((await r.post({ ...event('big'), data: { pad: 'x'.repeat(200) } })).status).toBe(413);
    expect((await fetch(r.url)).status).toBe(405);
    expect(r.events).toEqual([]);
  });

  it('works framework-neutral with a parsed body (fastify style)', async () => {
    const seen: string[] = [];
    const receiver = createWebhookReceiver({ token: 'tok', onEvent: (e) => void seen.push(e.id!) });
    expect(await receiver.handle({ headers: { 'x-event-token': 'tok' }, body: event('f1') })).toEqual({ status: 204, outcome: 'handled' });
    expect(await receiver.handle({ headers: { 'X-Event-Token': 'tok' }, body: event('f1') })).toEqual({
      status: 204,
      outcome: 'duplicate',
    });
    expect((await receiver.handle({ headers: { 'x-event-token': 'nope' }, body: event('f2') })).status).toBe(401);
    expect(seen).toEqual(['f1']);
  });
});
