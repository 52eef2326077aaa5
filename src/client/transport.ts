/**
 * The one way the client talks HTTP: builds the URL and headers (api-version of the group in
 * Accept, the Bearer token), sends through an undici Agent with explicit connect / headers /
 * body timeouts, refreshes the token once on a 401, retries what may be retried (p-retry, with
 * backoff, jitter and Retry-After) and turns every failure into a ClientError. Response bodies
 * are always read or destroyed, so no socket is left hanging.
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import pRetry, { AbortError } from 'p-retry';
import { Agent, FormData, request as undiciRequest, type Dispatcher } from 'undici';
import { acceptHeader, MEDIA, type VersionedArea } from '../contract/media.js';
import { ClientError, parseProblem, responseError, transportError } from './errors.js';
import type { ResolvedClientOptions } from './options.js';
import { isRetryable, parseRetryAfter, retryDelayMs, sleep, type RetryPolicy } from './retry.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined;

export interface RequestSpec {
  method: Method;
  /** Path below the base URL, segments already encoded (use `seg`). */
  path: string;
  query?: Record<string, QueryValue>;
  /** Functional group whose api-version goes into Accept. */
  area: VersionedArea;
  /** Media type(s) accepted, without version (default application/json). */
  accept?: string | readonly string[];
  body?: string | Uint8Array | FormData;
  contentType?: string;
  /** `bearer` (default), `none`, or a literal Authorization value (token request). */
  auth?: 'bearer' | 'none' | { authorization: string };
  /** Default: idempotent for GET/PUT/DELETE, unsent-only for POST. */
  retry?: RetryPolicy;
  signal?: AbortSignal | undefined;
  /** Statuses that are not errors besides 2xx (e.g. 404 for "current migration"). */
  allowStatus?: readonly number[];
  /** Marks the token request, for error codes and messages. */
  tokenRequest?: boolean;
}

export interface TextResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent, content coding (gzip, deflate, br) already undone. */
  body: Readable;
}

/** What the transport needs from the token manager. */
export interface TokenSource {
  get(signal?: AbortSignal): Promise<string>;
  /** Drops `token` from the cache if it is still the cached one, so the next get fetches anew. */
  invalidate(token: string): void;
  scopes(): string[];
}

/** Largest error body read (problem bodies are small; anything bigger is cut). */
const MAX_ERROR_BODY = 64 * 1024;

/** Encodes one path segment. @example seg('a b') // 'a%20b' */
export const seg = (value: string | number): string => encodeURIComponent(String(value));

export class Transport {
  readonly agent: Agent;
  private tokens: TokenSource | undefined;
  private supportedVersions: string[] | undefined;

  constructor(readonly options: ResolvedClientOptions) {
    this.agent = new Agent({
      connectTimeout: options.timeouts.connectMs,
      headersTimeout: options.timeouts.headersMs,
      bodyTimeout: options.timeouts.bodyMs,
      keepAliveTimeout: 4_000,
    });
  }

  useTokens(tokens: TokenSource): void {
    this.tokens = tokens;
  }

  /** Sends a request and reads the whole response body as text. */
  async text(spec: RequestSpec): Promise<TextResponse> {
    return this.withRetries(spec, async (res) => {
      const text = (await readAll(res.body)).toString('utf8');
      return { status: res.statusCode, headers: res.headers, text };
    });
  }

  /**
   * Sends a request and parses the JSON body (undefined for an empty body, and for an error
   * status the caller allowed whose body is not JSON: a platform may answer errors in plain text,
   * and such a caller reads the status only).
   */
  async json<T = unknown>(spec: RequestSpec): Promise<{ status: number; headers: TextResponse['headers']; body: T }> {
    const res = await this.text(spec);
    if (!res.text.trim()) return { status: res.status, headers: res.headers, body: undefined as T };
    try {
      return { status: res.status, headers: res.headers, body: JSON.parse(res.text) as T };
    } catch (err) {
      if (res.status >= 400) return { status: res.status, headers: res.headers, body: undefined as T };
      throw new ClientError(
        'HTTP_ERROR',
        `${spec.method} ${spec.path} answered ${res.status} with a body that is not JSON: ${JSON.stringify(res.text.slice(0, 80))}`,
        {
          status: res.status,
          method: spec.method,
          path: spec.path,
          cause: err,
        },
      );
    }
  }

  /**
   * Opens a response whose body the caller reads (streams). Opening is retried like any request;
   * the caller must consume or destroy `body`.
   */
  async open(spec: RequestSpec): Promise<StreamResponse> {
    return this.withRetries(spec, async (res) => ({ status: res.statusCode, headers: res.headers, body: res.body }));
  }

  /**
   * Sends a request and lets `reader` consume the body inside the attempt, so a connection
   * that breaks while the body is read is retried like one that broke before the headers (for
   * idempotent requests). `reader` must throw a ClientError with the status for a body it does
   * not understand (not retried).
   */
  async read<T>(spec: RequestSpec, reader: (res: StreamResponse) => Promise<T>): Promise<T> {
    return this.withRetries(spec, (res) => reader({ status: res.statusCode, headers: res.headers, body: res.body }));
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  url(path: string, query?: Record<string, QueryValue>): string {
    const base = this.options.baseUrl.replace(/\/+$/, '');
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined) continue;
      if (Array.isArray(v)) for (const item of v) qs.append(k, String(item));
      else qs.append(k, String(v));
    }
    const q = qs.toString();
    return `${base}${path}${q ? `?${q}` : ''}`;
  }

  private async withRetries<T>(spec: RequestSpec, read: (res: DecodedResponse) => Promise<T>): Promise<T> {
    const policy = spec.retry ?? (spec.method === 'POST' ? 'unsent-only' : 'idempotent');
    const { retry } = this.options;
    const started = Date.now();
    let attempts = 0;
    try {
      return await pRetry(
        async () => {
          attempts++;
          try {
            return await this.attempt(spec, read);
          } catch (err) {
            if (err instanceof AbortError) throw err;
            // p-retry would treat a TypeError as final; ours are all ClientErrors.
            throw transportError(err, spec.method, spec.path, this.options.baseUrl);
          }
        },
        {
          retries: retry.retries,
          minTimeout: 0,
          maxTimeout: 0,
          signal: spec.signal,
          // Our own wait (backoff or Retry-After) happens here; p-retry's own delay is 0.
          onFailedAttempt: async ({ error, retriesLeft, retriesConsumed }) => {
            if (!isRetryable(error, policy) || retriesLeft <= 0) throw error;
            const err = error as ClientError;
            const wait = retryDelayMs(retriesConsumed, retry, err.retryAfterMs);
            if (Date.now() - started + wait > retry.maxRetryTimeMs) throw error;
            this.options.logger?.debug(
              { method: spec.method, path: spec.path, status: err.status, code: err.code, attempt: attempts, waitMs: wait },
              'retrying request',
            );
            await sleep(wait, spec.signal);
          },
        },
      );
    } catch (err) {
      if (spec.signal?.aborted) throw abortError(spec, spec.signal.reason);
      const e = err instanceof AbortError ? err.originalError : err;
      if (e instanceof ClientError) throw e.withAttempts(attempts);
      throw transportError(e, spec.method, spec.path, this.options.baseUrl);
    }
  }

  /** One HTTP exchange, plus one immediate repeat with a fresh token after a 401. */
  private async attempt<T>(spec: RequestSpec, read: (res: DecodedResponse) => Promise<T>): Promise<T> {
    for (let refreshed = false; ; refreshed = true) {
      // Says which codings we decode (RFC 9110 §12.5.3: without it, any coding is acceptable).
      const headers: Record<string, string> = { accept: this.acceptFor(spec), 'accept-encoding': ACCEPTED_CODINGS };
      let token: string | undefined;
      if (spec.auth === undefined || spec.auth === 'bearer') {
        if (!this.tokens) throw new Error('transport has no token source');
        try {
          token = await this.tokens.get(spec.signal);
        } catch (err) {
          // The token fetch did its own retries: do not multiply them.
          throw new AbortError(err instanceof Error ? err : new Error(String(err)));
        }
        headers.authorization = `Bearer ${token}`;
      } else if (typeof spec.auth === 'object') {
        headers.authorization = spec.auth.authorization;
      }
      if (spec.contentType) headers['content-type'] = spec.contentType;
      const link = exchangeSignal(spec.signal);
      let sent: Dispatcher.ResponseData;
      try {
        sent = await this.send(spec, headers, link.signal);
      } catch (err) {
        link.release();
        throw err;
      }
      // A body handed to the caller (a stream) stays abortable until it closes; one read here
      // lets go of the caller's signal as soon as it is read.
      sent.body.once('close', link.release);
      const res: DecodedResponse = { statusCode: sent.statusCode, headers: sent.headers, body: decodedBody(sent, spec) };
      const ok = (res.statusCode >= 200 && res.statusCode < 300) || spec.allowStatus?.includes(res.statusCode);
      if (ok) {
        try {
          return await read(res);
        } catch (err) {
          res.body.destroy();
          throw err;
        } finally {
          if (res.body.readableEnded || res.body.destroyed) link.release();
        }
      }
      const text = await readCapped(res.body).finally(link.release);
      if (res.statusCode === 401 && token && !refreshed) {
        // An expired or revoked token: one fresh token, one repeat (safe for any method: the
        // service refused the request before doing anything).
        this.tokens!.invalidate(token);
        this.options.logger?.debug({ method: spec.method, path: spec.path }, 'token refused; fetching a new one');
        continue;
      }
      throw await this.errorFor(spec, res.statusCode, res.headers, text);
    }
  }

  /**
   * One request, its redirects followed: a GET's 301, 302, 303, 307 and 308; another method's
   * 307 and 308 only, with the same body sent again (RFC 9110 §15.4: 301/302 may turn a PUT into a
   * GET, 303 always does, so those are not followed but reported). Every body a RequestSpec holds
   * is replayable (text, bytes, FormData of Blobs); a streamed body could not be sent twice, which
   * is why the spec takes none. At most `redirects.max` hops, to the base URL's origin or one of
   * `redirects.allowedOrigins` (the token is sent to the base URL's origin only).
   */
  private async send(spec: RequestSpec, headers: Record<string, string>, signal: AbortSignal | null): Promise<Dispatcher.ResponseData> {
    const { max, allowedOrigins } = this.options.redirects;
    let url = this.url(spec.path, spec.query);
    const origin = new URL(url).origin;
    for (let hops = 0; ; hops++) {
      const res = await undiciRequest(url, { method: spec.method, headers, body: spec.body ?? null, dispatcher: this.agent, signal });
      const location = res.headers.location;
      const followed = spec.method === 'GET' ? FOLLOWED_ON_GET : FOLLOWED_WITH_BODY;
      if (!followed.has(res.statusCode) || typeof location !== 'string' || !location) return res;
      await res.body.dump();
      const next = new URL(location, url);
      const refuse = (why: string) =>
        new AbortError(
          new ClientError(
            'HTTP_ERROR',
            `${spec.method} ${spec.path} was redirected (${res.statusCode}) to ${next.origin}${next.pathname}: ${why}`,
            {
              method: spec.method,
              path: spec.path,
              status: res.statusCode,
            },
          ),
        );
      if (hops >= max) throw refuse(`more than ${max} redirects in a row, not followed (client option redirects.max)`);
      if (next.origin !== origin && !allowedOrigins.includes(next.origin))
        throw refuse(`another origin than ${origin}, not followed (allow it with the client option redirects.allowedOrigins)`);
      if (next.origin !== origin) delete headers.authorization;
      this.options.logger?.debug(
        { method: spec.method, path: spec.path, status: res.statusCode, to: next.pathname },
        'following a redirect',
      );
      url = next.href;
    }
  }

  private acceptFor(spec: RequestSpec): string {
    const version = this.options.versions[spec.area];
    const types = spec.accept === undefined ? [MEDIA.json] : typeof spec.accept === 'string' ? [spec.accept] : spec.accept;
    return types.map((t, i) => acceptHeader(t, version) + (i > 0 ? `;q=${Math.max(0.1, 1 - i * 0.1).toFixed(1)}` : '')).join(', ');
  }

  private async errorFor(
    spec: RequestSpec,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): Promise<ClientError> {
    const problem = parseProblem(text, status);
    const group = spec.path.split('/')[1] ?? '';
    const base = {
      method: spec.method,
      path: spec.path,
      status,
      problem,
      group,
      version: this.options.versions[spec.area],
      tokenScopes: this.tokens?.scopes(),
      clientId: this.options.clientId,
      retryAfterMs: parseRetryAfter(headers['retry-after']),
      tokenRequest: spec.tokenRequest === true,
    };
    let err = responseError(base);
    if (err.code === 'UNSUPPORTED_API_VERSION') err = responseError({ ...base, supportedVersions: await this.fetchSupportedVersions() });
    return err;
  }

  /** X-Supported-Versions of the JWKS endpoint, fetched once and only to explain a 400. */
  private async fetchSupportedVersions(): Promise<string[] | undefined> {
    if (this.supportedVersions) return this.supportedVersions;
    try {
      const res = await undiciRequest(this.url('/authentication/jwks'), {
        method: 'GET',
        dispatcher: this.agent,
        headers: { accept: MEDIA.json },
      });
      await res.body.dump();
      const header = res.headers['x-supported-versions'];
      const value = Array.isArray(header) ? header.join(',') : header;
      if (value)
        this.supportedVersions = value
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
    } catch {
      /* best effort: the message still points at the header */
    }
    return this.supportedVersions;
  }
}

async function readCapped(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = Buffer.from(chunk as Uint8Array);
      size += buf.length;
      if (size > MAX_ERROR_BODY) break;
      chunks.push(buf);
    }
  } catch {
    /* a broken error body still leaves us the status */
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Redirects a GET follows, and those a request with a body follows (the method and body kept). */
const FOLLOWED_ON_GET = new Set([301, 302, 303, 307, 308]);
const FOLLOWED_WITH_BODY = new Set([307, 308]);

/** Content codings the client decodes, as sent in Accept-Encoding. */
const ACCEPTED_CODINGS = 'gzip, deflate, br';

interface DecodedResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/**
 * The response body with its content coding undone (undici's \`request\` hands over the bytes
 * as sent). Codings are undone last-applied first (RFC 9110 §8.4); `identity` is none. deflate
 * is read as the zlib format of RFC 9110, or as a bare deflate stream, which some servers send.
 * A coding we cannot undo is refused with its name, never read as text.
 */
function decodedBody(res: Dispatcher.ResponseData, spec: RequestSpec): Readable {
  // A 204 or 304 has no body (RFC 9110 §15.3.5, §15.4.5): a coding named on it has nothing to undo.
  if (res.statusCode === 204 || res.statusCode === 304) return res.body;
  const header = res.headers['content-encoding'];
  const codings = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity')
    .reverse();
  let body: Readable = res.body;
  for (const coding of codings) {
    const decoder =
      coding === 'gzip' || coding === 'x-gzip'
        ? createGunzip()
        : coding === 'br'
          ? createBrotliDecompress()
          : coding === 'deflate'
            ? deflateDecoder()
            : undefined;
    if (!decoder) {
      res.body.on('error', () => undefined); // destroying an unread body reports an abort nobody waits for
      res.body.destroy();
      throw new AbortError(
        new ClientError(
          'HTTP_ERROR',
          `${spec.method} ${spec.path} answered ${res.statusCode} with Content-Encoding ${JSON.stringify(String(header).slice(0, 60))}, which the client cannot decode (it accepts ${ACCEPTED_CODINGS})`,
          { method: spec.method, path: spec.path, status: res.statusCode },
        ),
      );
    }
    body = pipeline(body, decoder, () => undefined);
  }
  return body;
}

/** zlib-wrapped deflate (RFC 1950, what RFC 9110 means) or a bare deflate stream, told apart by the first two bytes. */
function deflateDecoder(): Transform {
  let inner: Transform | undefined;
  let head = Buffer.alloc(0);
  const outer = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let bytes = chunk;
      if (!inner) {
        head = Buffer.concat([head, chunk]);
        if (head.length < 2) return done();
        const zlibWrapped = (head[0]! & 0x0f) === 8 && ((head[0]! << 8) | head[1]!) % 31 === 0;
        inner = zlibWrapped ? createInflate() : createInflateRaw();
        inner.on('data', (c: Buffer) => outer.push(c));
        inner.on('error', (err) => outer.destroy(err));
        bytes = head;
      }
      inner.write(bytes, () => done());
    },
    flush(done) {
      if (!inner) return done();
      inner.once('end', () => done());
      inner.end();
    },
  });
  return outer;
}

/** Reads a whole body. */
async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

function abortError(spec: RequestSpec, reason: unknown): ClientError {
  return new ClientError('ABORTED', `${spec.method} ${spec.path} was aborted`, { method: spec.method, path: spec.path, cause: reason });
}

export { FormData };

/**
 * A signal of one HTTP exchange, aborted with the caller's. undici lets go of a request's abort
 * listener only when the response body emits 'close', a tick after the body was read: requests
 * made one after another on one long-lived signal (validation lookups 8 at a time, thousands of
 * staging deletes in a `--drop-invalid` round) piled their listeners on it past Node's limit of
 * 10 (MaxListenersExceededWarning). The caller's signal carries one listener per exchange in
 * flight, released as soon as the exchange is done.
 */
function exchangeSignal(signal: AbortSignal | undefined): { signal: AbortSignal | null; release(): void } {
  if (!signal) return { signal: null, release: () => undefined };
  const own = new AbortController();
  if (signal.aborted) own.abort(signal.reason);
  const forward = () => own.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  return { signal: own.signal, release: () => signal.removeEventListener('abort', forward) };
}
