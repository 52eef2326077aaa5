/**
 * Access tokens: fetched with HTTP Basic client credentials, cached, refreshed shortly before
 * they expire (from the JWT's `exp`, else `expires_in`), dropped when the service refuses one.
 * Concurrent callers share one in-flight fetch. Tokens and secrets never reach a log line or
 * an error message.
 */
import { seg, type TokenSource, type Transport } from './transport.js';
import { peekJwtClaims, readTokenBody, scopesOf } from './tolerant.js';
import { ClientError } from './errors.js';

/** When neither `exp` nor `expires_in` says, assume this lifetime (seconds). */
const ASSUMED_LIFETIME_S = 60;

export interface CachedToken {
  token: string;
  expiresAtMs: number;
  refreshAtMs: number;
  claims: Record<string, unknown> | undefined;
}

export class TokenManager implements TokenSource {
  private cached: CachedToken | undefined;
  private inflight: Promise<CachedToken> | undefined;
  /** How many tokens were fetched (tests and diagnostics). */
  fetches = 0;

  constructor(
    private readonly transport: Transport,
    private readonly now: () => number = Date.now,
  ) {}

  async get(signal?: AbortSignal): Promise<string> {
    return (await this.current(signal)).token;
  }

  /** The cached token with its claims, fetching a fresh one when needed. */
  async current(signal?: AbortSignal): Promise<CachedToken> {
    const c = this.cached;
    if (c && this.now() < c.refreshAtMs) return c;
    return withSignal(this.refresh(), signal);
  }

  /** Starts (or joins) a token fetch; the shared fetch is not tied to any one caller's signal. */
  refresh(): Promise<CachedToken> {
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  scopes(): string[] {
    return scopesOf(this.cached?.claims);
  }

  private async fetch(): Promise<CachedToken> {
    const o = this.transport.options;
    const basic = Buffer.from(`${o.clientId}:${o.clientSecret}`).toString('base64');
    const res = await this.transport.text({
      method: 'GET',
      path: `/authentication/token/${seg(o.brokerKey)}/${seg(o.labelReferenceId)}`,
      area: 'authentication',
      accept: ['application/json', 'application/jwt', 'text/plain'],
      auth: { authorization: `Basic ${basic}` },
      tokenRequest: true,
    });
    let read: ReturnType<typeof readTokenBody>;
    try {
      read = readTokenBody(res.text);
    } catch (err) {
      throw new ClientError('HTTP_ERROR', (err as Error).message, { status: res.status, method: 'GET', path: '/authentication/token/…' });
    }
    const claims = peekJwtClaims(read.token);
    const now = this.now();
    const exp = typeof claims?.exp === 'number' ? claims.exp * 1000 : undefined;
    const expiresAtMs = exp ?? now + (read.expiresIn ?? ASSUMED_LIFETIME_S) * 1000;
    const lifetime = Math.max(0, expiresAtMs - now);
    // Refresh a little before expiry: a fifth of the lifetime, at most 30 s.
    const refreshAtMs = expiresAtMs - Math.min(30_000, lifetime / 5);
    this.fetches++;
    this.cached = { token: read.token, expiresAtMs, refreshAtMs, claims };
    o.logger?.debug({ expiresAt: new Date(expiresAtMs).toISOString(), scopes: scopesOf(claims) }, 'access token obtained');
    return this.cached;
  }
}

function withSignal<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
