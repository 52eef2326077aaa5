/**
 * When and how long the client waits before trying a request again: which failures are worth
 * a retry for which kind of request, exponential backoff with full jitter, and Retry-After
 * (seconds or an HTTP date), always capped.
 */
import { ClientError, wasNeverSent } from './errors.js';

/**
 * - `idempotent`: GET, PUT, DELETE whose repetition cannot double a side effect: retried on
 *   network errors, timeouts, 429 and 5xx.
 * - `unsent-only`: POST and the PUTs that start a job: retried only when the request surely did
 *   not reach the service (connection refused, connect timeout) or was refused unprocessed (429).
 * - `never`: not retried at all.
 */
export type RetryPolicy = 'idempotent' | 'unsent-only' | 'never';

export function isRetryable(err: unknown, policy: RetryPolicy): boolean {
  if (policy === 'never' || !(err instanceof ClientError)) return false;
  if (err.code === 'ABORTED') return false;
  if (err.status === undefined) return policy === 'idempotent' || wasNeverSent(err);
  if (err.status === 429) return true;
  if (err.status >= 500 && err.status !== 501 && err.status !== 505) return policy === 'idempotent';
  return false;
}

/**
 * Retry-After in ms: delta-seconds or an HTTP date; undefined when absent or unreadable.
 * @example parseRetryAfter('3') // 3000
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const trimmed = v.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * The wait before retry number `retry` (0-based): Retry-After when the service sent one, else a
 * random time up to base·2^retry (full jitter, so a crowd of clients spreads out); both capped.
 */
export function retryDelayMs(
  retry: number,
  opts: { baseDelayMs: number; maxDelayMs: number },
  retryAfterMs?: number,
  random = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, opts.maxDelayMs);
  const bound = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** Math.min(retry, 30));
  return Math.round(random() * bound);
}

/** Waits `ms`, rejecting with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
