/**
 * A receiver for the service's webhook deliveries: checks X-Event-Token in constant time
 * (SHA-256 digests of equal length through crypto.timingSafeEqual), drops deliveries whose
 * event id it has already handled (a bounded LRU set: the service retries with the same id),
 * and answers 204 (handled or duplicate), 400 (not a JSON event, or a timestamp it cannot
 * read), 401 (wrong or missing token), 413 (too big), 405 (not POST) or 500 (the handler
 * failed: the service will retry). The event is read as every platform answer is: members
 * whose value is `null` are absent, `occurredOn` and the timestamps of the known events' data
 * (EVENT_DATA_TIMESTAMPS) are read in any ISO 8601 form and handed on in the extended form;
 * members it does not know are handed on as they came. Events are handed on in the order they
 * arrive, each once: the platform guarantees no order, and the receiver adds none.
 *
 * @example node:http
 *   const receiver = createWebhookReceiver({ token: reg.token, onEvent: (e) => console.log(e.eventName, e.data) });
 *   http.createServer(receiver).listen(9000);
 * @example fastify (body already parsed)
 *   app.post('/hooks', async (req, reply) => reply.code((await receiver.handle({ headers: req.headers, body: req.body })).status).send());
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EVENT_DATA_TIMESTAMPS, EVENT_TOKEN_HEADER } from '../contract/events.js';
import { readIsoDateTime } from '../contract/iso8601.js';
import { withoutNulls } from './tolerant.js';

/** Header with the event id on deliveries of the embedded service (the body's `id` also has it). */
const EVENT_ID_HEADER = 'x-event-id';

type Headers = Record<string, string | string[] | undefined>;

export interface ReceivedEvent {
  /** Event id (body `id`, else the X-Event-Id header); undefined if the sender gave none. */
  id: string | undefined;
  eventName: string | undefined;
  /** In the extended ISO 8601 form, whatever form the sender used. */
  occurredOn: string | undefined;
  /** Without `null` members, its known timestamps in the extended form. */
  data: unknown;
  /** The whole JSON body as received (its shape beyond these fields is not shown by the spec). */
  body: Record<string, unknown>;
}

export interface WebhookReceiverOptions {
  /** The registration's token. */
  token?: string;
  /** Or: the tokens valid for an event name (several registrations, rotation). */
  tokens?: (eventName: string | undefined) => string | readonly string[] | undefined | Promise<string | readonly string[] | undefined>;
  onEvent: (event: ReceivedEvent) => void | Promise<void>;
  /** How many handled event ids are remembered to drop duplicates (default 10,000). */
  seenIds?: number;
  /** Largest body accepted, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}

export interface ReceiveOutcome {
  status: 204 | 400 | 401 | 405 | 413 | 500;
  outcome: 'handled' | 'duplicate' | 'bad-request' | 'unauthorized' | 'method-not-allowed' | 'too-large' | 'handler-failed';
  detail?: string;
}

export interface WebhookReceiver {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Framework-neutral core: headers plus the body (parsed object, string or bytes). */
  handle(input: { headers: Headers; body: unknown }): Promise<ReceiveOutcome>;
  readonly stats: { handled: number; duplicates: number; unauthorized: number; badRequests: number; failed: number };
}

export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  if (!options.token && !options.tokens) throw new TypeError('createWebhookReceiver: give token or tokens');
  const capacity = options.seenIds ?? 10_000;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const seen = new Map<string, true>(); // insertion order = age: an LRU with delete+set on hit
  const stats = { handled: 0, duplicates: 0, unauthorized: 0, badRequests: 0, failed: 0 };

  const remember = (id: string) => {
    seen.delete(id);
    seen.set(id, true);
    if (seen.size > capacity) seen.delete(seen.keys().next().value!);
  };

  async function handle(input: { headers: Headers; body: unknown }): Promise<ReceiveOutcome> {
    const body = toObject(input.body);
    if (!body) {
      stats.badRequests++;
      return { status: 400, outcome: 'bad-request', detail: 'body is not a JSON object' };
    }
    const eventName = typeof body.eventName === 'string' ? body.eventName : undefined;
    const given = header(input.headers, EVENT_TOKEN_HEADER);
    const expected = options.token ?? (await options.tokens!(eventName));
    if (!given || !tokenMatches(given, expected)) {
      stats.unauthorized++;
      return { status: 401, outcome: 'unauthorized', detail: given ? 'X-Event-Token does not match' : 'X-Event-Token is missing' };
    }
    const read = readEvent(body, eventName);
    if (typeof read === 'string') {
      stats.badRequests++;
      return { status: 400, outcome: 'bad-request', detail: read };
    }
    const id = typeof body.id === 'string' ? body.id : header(input.headers, EVENT_ID_HEADER);
    if (id !== undefined && seen.has(id)) {
      remember(id);
      stats.duplicates++;
      return { status: 204, outcome: 'duplicate' };
    }
    // Remembered before the handler runs so a concurrent duplicate is dropped; forgotten again
    // if the handler fails, so the service's retry is handled.
    if (id !== undefined) remember(id);
    try {
      await options.onEvent({ id, eventName, ...read, body });
    } catch (err) {
      if (id !== undefined) seen.delete(id);
      stats.failed++;
      return { status: 500, outcome: 'handler-failed', detail: (err as Error).message };
    }
    stats.handled++;
    return { status: 204, outcome: 'handled' };
  }

  const receiver = (async (req: IncomingMessage, res: ServerResponse) => {
    let outcome: ReceiveOutcome;
    if (req.method !== 'POST') {
      req.resume();
      outcome = { status: 405, outcome: 'method-not-allowed' };
    } else {
      const body = await readBody(req, maxBodyBytes);
      outcome = body === TOO_LARGE ? { status: 413, outcome: 'too-large' } : await handle({ headers: req.headers, body });
    }
    if (outcome.status === 204) {
      res.writeHead(204).end();
    } else {
      res
        .writeHead(outcome.status, { 'content-type': 'application/problem+json' })
        .end(JSON.stringify({ title: outcome.outcome, status: outcome.status, detail: outcome.detail ?? outcome.outcome }));
    }
  }) as WebhookReceiver;
  Object.defineProperty(receiver, 'handle', { value: handle });
  Object.defineProperty(receiver, 'stats', { value: stats });
  return receiver;
}

/**
 * occurredOn and data as the receiver hands them on, or why they cannot be read: a timestamp
 * that is no ISO 8601 date-time with a zone is refused, never passed on as it came.
 */
function readEvent(
  body: Record<string, unknown>,
  eventName: string | undefined,
): { occurredOn: string | undefined; data: unknown } | string {
  const refused = (where: string, value: string) =>
    `${where}: expected an ISO 8601 date-time with a zone (e.g. 2026-01-02T03:04:05Z or 20260102T030405Z), got ${JSON.stringify(value.slice(0, 60))}`;
  let occurredOn: string | undefined;
  if (typeof body.occurredOn === 'string') {
    occurredOn = readIsoDateTime(body.occurredOn);
    if (occurredOn === undefined) return refused('occurredOn', body.occurredOn);
  }
  const data = withoutNulls(body.data);
  const fields = eventName === undefined ? undefined : EVENT_DATA_TIMESTAMPS[eventName];
  if (!fields || !data || typeof data !== 'object' || Array.isArray(data)) return { occurredOn, data };
  const out = { ...(data as Record<string, unknown>) };
  for (const field of fields) {
    const value = out[field];
    if (typeof value !== 'string') continue;
    const read = readIsoDateTime(value);
    if (read === undefined) return refused(`data.${field}`, value);
    out[field] = read;
  }
  return { occurredOn, data: out };
}

/** Constant-time comparison against every expected token (no early exit on a match). */
function tokenMatches(given: string, expected: string | readonly string[] | undefined): boolean {
  const candidates = expected === undefined ? [] : typeof expected === 'string' ? [expected] : expected;
  const digest = createHash('sha256').update(given).digest();
  let ok = false;
  for (const candidate of candidates) {
    if (timingSafeEqual(digest, createHash('sha256').update(candidate).digest())) ok = true;
  }
  return ok;
}

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

function toObject(body: unknown): Record<string, unknown> | undefined {
  let value = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    } catch {
      return undefined;
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

const TOO_LARGE = Symbol('too-large');
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | typeof TOO_LARGE> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Past the limit the rest is read and dropped (destroying the request would lose the answer).
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= max) chunks.push(chunk as Buffer);
    else chunks.length = 0;
  }
  return size > max ? TOO_LARGE : Buffer.concat(chunks);
}
