/**
 * The webhook dispatcher: delivers the event outbox to the registered endpoints, at least once.
 *
 * One loop (registered with ctx.background, so shutdown waits for it):
 *  1. fan-out: each undispatched outbox event becomes one pending delivery per matching
 *     registration (same tenant; same white label when the event has one), in one transaction;
 *  2. every due pending delivery is attempted, at most `webhookConcurrency` at once: an HTTP
 *     POST of the event envelope, with X-Event-Token, X-Event-Id, a timeout, no redirects;
 *  3. a 2xx marks it delivered; a network error, timeout, 3xx, 408, 429 or 5xx schedules a
 *     retry with exponential backoff and full jitter (Retry-After honoured); another 4xx, a
 *     refused address or the last attempt marks it failed. Every attempt is journaled.
 * Deliveries live in SQLite, so a restart resumes the pending ones.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { Agent, request } from 'undici';
import { EVENT_TOKEN_HEADER, type EventEnvelope } from '../../contract/events.js';
import type { ServiceContext } from '../context.js';
import { deliveryDialect } from '../dialect/index.js';
import type { Db } from '../store/database.js';
import { onEventEmitted } from './outbox.js';
import type { AttemptOutcome, DeliveryRow, RegistrationRow } from './store-webhooks.js';
import { checkWebhookUri, guardedLookup, type UriPolicy } from './uri-guard.js';

export const EVENT_ID_HEADER = 'x-event-id';

export interface RetryPolicy {
  baseMs: number;
  capMs: number;
  maxAttempts: number;
}

/**
 * Delay before the next attempt after `attempts` failed ones: full jitter over an exponential
 * bound (base · 2^(attempts-1), capped), and never sooner than the receiver's Retry-After.
 * @example retryDelayMs(3, { baseMs: 500, capMs: 300_000, maxAttempts: 10 }) // uniform in [0, 2000)
 */
export function retryDelayMs(attempts: number, policy: RetryPolicy, retryAfterMs?: number, random = Math.random): number {
  const bound = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  const jittered = Math.floor(random() * bound);
  return retryAfterMs === undefined ? jittered : Math.min(policy.capMs, Math.max(jittered, retryAfterMs));
}

/** Retry-After as milliseconds (seconds or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

interface Outcome {
  outcome: AttemptOutcome;
  statusCode?: number;
  error?: string;
  retryAfterMs?: number;
}

/** How one HTTP status ends an attempt. */
export function judgeStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 300 && status < 400) return 'retry'; // redirects are not followed
  if (status === 408 || status === 429 || status >= 500) return 'retry';
  return 'failed';
}

export interface Dispatcher {
  /** Look for work now (new events, a registration changed). */
  wake(): void;
}

/** deliveries=shuffled: how many due deliveries are sent together in reverse, and how long one waits for the others. */
const SHUFFLE_BATCH = 3;
const SHUFFLE_HOLD_MS = 1500;

export function startDispatcher(ctx: ServiceContext): Dispatcher {
  const { db, config, logger } = ctx;
  const policy: UriPolicy = { allowPrivate: config.allowPrivateWebhooks, allowLoopback: config.allowLoopbackWebhooks };
  const retry: RetryPolicy = { baseMs: config.webhookRetryBaseMs, capMs: config.webhookRetryCapMs, maxAttempts: config.webhookMaxAttempts };
  // Sockets resolve through the guard, so DNS rebinding after the check is refused at connect.
  const agent = new Agent({ connect: { lookup: guardedLookup(policy) as never }, keepAliveTimeout: 4000 });
  const s = statements(db);
  // A platform that chose differently (serve --dialect) shapes and repeats its deliveries otherwise.
  const dialect = deliveryDialect(config.dialect);
  // Attempts in flight when the service stopped never finished: they are due again.
  s.releaseAll.run();

  let wakeUp: (() => void) | undefined;
  let woken = false;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const off = onEventEmitted(db, () => setImmediate(wake));
  ctx.background.onStop(async () => {
    off();
    wake();
  });

  ctx.background.run(async (signal) => {
    const limit = pLimit(config.webhookConcurrency);
    const running = new Set<Promise<void>>();
    // Runs leased deliveries in one slot; the loop wakes when they are done.
    const start = (job: () => Promise<void>) => {
      const p = limit(job).finally(() => {
        running.delete(p);
        wake();
      });
      running.add(p);
    };
    try {
      while (!signal.aborted) {
        woken = false;
        fanOut(db, s);
        const free = config.webhookConcurrency - limit.activeCount - limit.pendingCount;
        let holdUntil: number | undefined;
        if (free > 0 && dialect.shuffled) holdUntil = sendShuffled(start, signal);
        else if (free > 0) {
          for (const d of s.due.all(Date.now(), free)) {
            s.lease.run(d.id);
            start(() => attempt(d, signal));
          }
        }
        if (signal.aborted) break;
        // Every turn awaits something: a synchronous turn would starve the attempts it waits for.
        // With every slot busy, a finishing attempt wakes the loop; else the next due time does.
        const slotsLeft = config.webhookConcurrency - limit.activeCount - limit.pendingCount;
        const next = slotsLeft > 0 && !woken ? (holdUntil ?? s.nextDue.get()?.at) : undefined;
        const wait = woken
          ? 0
          : next === null || next === undefined
            ? config.webhookPollMs
            : Math.max(0, Math.min(config.webhookPollMs, next - Date.now()));
        if (wait > 0) await sleep(wait, signal, (resolve) => (wakeUp = resolve));
        else await new Promise<void>((r) => setImmediate(r));
        wakeUp = undefined;
      }
    } catch (err) {
      logger.error({ err }, 'webhook dispatcher stopped on an error');
    } finally {
      await Promise.allSettled([...running]);
      await agent.close().catch(() => undefined);
    }
  });

  /**
   * deliveries=shuffled: holds the due deliveries back until SHUFFLE_BATCH are due or the oldest
   * has waited SHUFFLE_HOLD_MS, then sends them newest first, one after another, so a receiver
   * gets them in another order than they happened. Returns when to look again while holding.
   */
  function sendShuffled(start: (job: () => Promise<void>) => void, signal: AbortSignal): number | undefined {
    const now = Date.now();
    const due = s.due.all(now, SHUFFLE_BATCH);
    if (due.length === 0) return undefined;
    const releaseAt = due[0]!.next_attempt_at + SHUFFLE_HOLD_MS;
    if (due.length < SHUFFLE_BATCH && now < releaseAt) return releaseAt;
    for (const d of due) s.lease.run(d.id);
    start(async () => {
      for (const d of due.reverse()) await attempt(d, signal);
    });
    return undefined;
  }

  async function attempt(d: DeliveryRow, signal: AbortSignal): Promise<void> {
    const reg = s.registration.get(d.registration_id);
    const event = s.event.get(d.event_id);
    if (!reg || !event) return; // registration deleted meanwhile: its deliveries went with it
    const envelope: EventEnvelope = {
      id: event.id,
      eventName: event.event_name,
      occurredOn: event.occurred_on,
      data: JSON.parse(event.payload),
    };
    const startedOn = new Date().toISOString();
    const started = performance.now();
    let result: Outcome;
    try {
      result = await post(reg, envelope, signal);
    } catch (err) {
      if (signal.aborted) {
        s.release.run(d.id); // not an attempt: the service is stopping
        return;
      }
      result = { outcome: 'retry', error: describe(err) };
    }
    const latency = Math.round(performance.now() - started);
    const attempts = d.attempts + 1;
    let outcome = result.outcome;
    if (outcome === 'retry' && attempts >= retry.maxAttempts) outcome = 'failed';
    const nextAt = outcome === 'retry' ? Date.now() + retryDelayMs(attempts, retry, result.retryAfterMs) : d.next_attempt_at;
    const now = new Date().toISOString();
    db.transaction(() => {
      s.journal.run(d.id, attempts, startedOn, result.outcome, result.statusCode ?? null, result.error ?? null, latency);
      s.finish.run({
        id: d.id,
        status: outcome === 'retry' ? 'pending' : outcome,
        attempts,
        code: result.statusCode ?? null,
        error: result.error ?? null,
        latency,
        next: nextAt,
        now,
        delivered: outcome === 'delivered' ? now : null,
      });
    })();
    // The dialect's platform did not see the acknowledgement and sends the same event again.
    for (let copy = 1; copy < dialect.copies && outcome === 'delivered'; copy++) await post(reg, envelope, signal).catch(() => undefined);
    if (outcome === 'failed')
      logger.warn({ deliveryId: d.id, uri: reg.uri, attempts, error: result.error, status: result.statusCode }, 'webhook delivery failed');
  }

  async function post(reg: RegistrationRow, envelope: EventEnvelope, signal: AbortSignal): Promise<Outcome> {
    try {
      await checkWebhookUri(reg.uri, policy);
    } catch (err) {
      return { outcome: 'failed', error: (err as Error).message };
    }
    const timeout = AbortSignal.timeout(config.webhookTimeoutMs);
    try {
      const res = await request(reg.uri, {
        method: 'POST',
        dispatcher: agent,
        signal: AbortSignal.any([signal, timeout]),
        headersTimeout: config.webhookTimeoutMs,
        bodyTimeout: config.webhookTimeoutMs,
        headers: {
          'content-type': 'application/json',
          [EVENT_TOKEN_HEADER]: reg.token,
          [EVENT_ID_HEADER]: envelope.id,
          'user-agent': 'stagecoach-embedded-lending-service/webhooks',
        },
        body: dialect.body(envelope),
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const outcome = judgeStatus(res.statusCode);
      const out: Outcome = { outcome, statusCode: res.statusCode };
      if (outcome !== 'delivered') {
        out.error =
          res.statusCode >= 300 && res.statusCode < 400
            ? `redirect to ${String(res.headers.location ?? '(no location)')} not followed`
            : `receiver answered ${res.statusCode}`;
        out.retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      }
      return out;
    } catch (err) {
      if (signal.aborted) throw err;
      if ((err as NodeJS.ErrnoException).code === 'WEBHOOK_URI_REFUSED') return { outcome: 'failed', error: (err as Error).message };
      if (timeout.aborted) return { outcome: 'retry', error: `no answer within ${config.webhookTimeoutMs} ms` };
      return { outcome: 'retry', error: describe(err) };
    }
  }

  return { wake };
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code;
  const message = e.cause?.message ?? e.message;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function sleep(ms: number, signal: AbortSignal, onWake: (resolve: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    onWake(done);
  });
}

type Statements = ReturnType<typeof statements>;
function statements(db: Db) {
  return {
    releaseAll: db.prepare("UPDATE webhook_deliveries SET in_flight = 0 WHERE in_flight = 1 AND status = 'pending'"),
    undispatched: db.prepare<[number], { seq: number; id: string; broker_key: string; label_id: string | null; event_name: string }>(
      'SELECT seq, id, broker_key, label_id, event_name FROM event_outbox WHERE dispatched = 0 ORDER BY seq LIMIT ?',
    ),
    subscribers: db.prepare<[string, string, string | null, string | null], { id: string }>(
      'SELECT id FROM webhook_registrations WHERE broker_key = ? AND event_name = ? AND (? IS NULL OR label_id = ?)',
    ),
    addDelivery: db.prepare(
      "INSERT OR IGNORE INTO webhook_deliveries (id, event_id, registration_id, status, next_attempt_at, created_on, updated_on) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
    ),
    markDispatched: db.prepare('UPDATE event_outbox SET dispatched = 1 WHERE seq = ?'),
    due: db.prepare<[number, number], DeliveryRow>(
      "SELECT * FROM webhook_deliveries WHERE status = 'pending' AND in_flight = 0 AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
    ),
    nextDue: db.prepare<[], { at: number | null }>(
      "SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending' AND in_flight = 0",
    ),
    lease: db.prepare('UPDATE webhook_deliveries SET in_flight = 1 WHERE id = ?'),
    release: db.prepare('UPDATE webhook_deliveries SET in_flight = 0 WHERE id = ?'),
    registration: db.prepare<[string], RegistrationRow>('SELECT * FROM webhook_registrations WHERE id = ?'),
    event: db.prepare<[string], { id: string; event_name: string; occurred_on: string; payload: string }>(
      'SELECT id, event_name, occurred_on, payload FROM event_outbox WHERE id = ?',
    ),
    journal: db.prepare(
      'INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_on, outcome, status_code, error, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    finish: db.prepare(
      'UPDATE webhook_deliveries SET status = @status, attempts = @attempts, last_status_code = @code, last_error = @error, last_latency_ms = @latency, next_attempt_at = @next, in_flight = 0, updated_on = @now, delivered_on = COALESCE(@delivered, delivered_on) WHERE id = @id',
    ),
  };
}

/** Turns undispatched outbox events into pending deliveries, in batches of 500. */
function fanOut(db: Db, s: Statements): void {
  for (;;) {
    const events = s.undispatched.all(500);
    if (events.length === 0) return;
    db.transaction(() => {
      const now = Date.now();
      const iso = new Date(now).toISOString();
      for (const e of events) {
        for (const reg of s.subscribers.all(e.broker_key, e.event_name, e.label_id, e.label_id))
          s.addDelivery.run(randomUUID(), e.id, reg.id, now, iso, iso);
        s.markDispatched.run(e.seq);
      }
    })();
    if (events.length < 500) return;
  }
}
