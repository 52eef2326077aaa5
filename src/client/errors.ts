/**
 * The client's one error type, and the translation of a failed HTTP exchange into it: a stable
 * code from the registry, the problem fields the service sent, the request (method and path,
 * never a token), and a message that says what to do about it.
 */
import { ERROR_CODES, StagecoachError, type ErrorCode } from '../contract/errors.js';
import { problemSchema, type Problem } from '../contract/problem.js';

export interface ClientErrorInit {
  status?: number;
  problem?: Problem;
  method: string;
  path: string;
  attempts?: number;
  cause?: unknown;
  retryAfterMs?: number;
}

/**
 * Every failure of a client call. `status` and `problem` are set when the service answered.
 * @example
 *   try { await client.migrations.create(['Counterparties']); }
 *   catch (err) { if (err instanceof ClientError && err.code === 'MIGRATION_ALREADY_ACTIVE') … }
 */
export class ClientError extends StagecoachError {
  override readonly name = 'ClientError';
  readonly status: number | undefined;
  readonly problem: Problem | undefined;
  readonly method: string;
  readonly path: string;
  readonly attempts: number;
  /** Wait the service asked for (Retry-After), when it did. */
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, init: ClientErrorInit) {
    super(
      code,
      message,
      { status: init.status, method: init.method, path: init.path, attempts: init.attempts ?? 1 },
      { cause: init.cause },
    );
    this.status = init.status;
    this.problem = init.problem;
    this.method = init.method;
    this.path = init.path;
    this.attempts = init.attempts ?? 1;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** A copy with the attempt count of the whole retried call. */
  withAttempts(attempts: number): ClientError {
    if (attempts === this.attempts) return this;
    const suffix =
      attempts > 1 && !/after \d+ attempts/.test(this.message) && isTransient(this) ? ` (gave up after ${attempts} attempts)` : '';
    return new ClientError(this.code, this.message + suffix, {
      status: this.status,
      problem: this.problem,
      method: this.method,
      path: this.path,
      attempts,
      cause: this.cause,
      retryAfterMs: this.retryAfterMs,
    });
  }
}

function isTransient(err: ClientError): boolean {
  return err.status === undefined || err.status === 429 || err.status >= 500;
}

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

const MAX_TEXT_DETAIL = 2000;

/** Parses a problem body leniently: JSON with at least a status or title, else undefined. */
/** The title of an HTML page, else its first heading. */
const HTML_TITLE = /<title[^>]*>([\s\S]*?)<\/title>|<h1[^>]*>([\s\S]*?)<\/h1>/i;
const HTML_PAGE = /^\s*(?:<!doctype html|<html|<head|<body|<\?xml|<[a-z][\w-]*[\s>])/i;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * An error body that is not JSON, in one line: an HTML page (a proxy's 413, a gateway's 502) as
 * its status and title (`413 Request Entity Too Large`), never its markup; plain text with its
 * line breaks folded, cut at MAX_TEXT_DETAIL characters, saying how many more there were.
 * @example summariseTextBody('<html><head><title>413 Request Entity Too Large</title>…', 413) // '413 Request Entity Too Large'
 */
export function summariseTextBody(text: string, status: number): string {
  const fold = (t: string) =>
    t
      .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) =>
        e[0] === '#'
          ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)))
          : (ENTITIES[e.toLowerCase()] ?? all),
      )
      .replace(/\s+/g, ' ')
      .trim();
  if (HTML_PAGE.test(text)) {
    const m = HTML_TITLE.exec(text);
    const title = m ? fold((m[1] ?? m[2] ?? '').replace(/<[^>]*>/g, ' ')) : '';
    // The status leads, once: a page titled "413 Request Entity Too Large" is not prefixed again.
    const line = title.startsWith(String(status)) ? title : `${status}${title ? ` ${title}` : ''} (an HTML page)`;
    return line.length <= MAX_TEXT_DETAIL ? line : `${line.slice(0, MAX_TEXT_DETAIL)}…`;
  }
  const line = fold(text);
  return line.length <= MAX_TEXT_DETAIL ? line : `${line.slice(0, MAX_TEXT_DETAIL)}… (${line.length - MAX_TEXT_DETAIL} more characters)`;
}

export function parseProblem(text: string, status: number): Problem | undefined {
  if (!text.trim()) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: a page of HTML (a proxy's, a gateway's) becomes its title, plain text one line.
    const detail = summariseTextBody(text, status);
    return { title: detail.slice(0, 200), status, detail };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  // Another platform's shape: `{"error": {"code", "message"}}`, `{"error": "…"}` or `{"message": "…"}`.
  const o = json as Record<string, unknown>;
  const inner = o.error && typeof o.error === 'object' ? (o.error as Record<string, unknown>) : o;
  const message = [inner.message, o.error, o.message].find((m): m is string => typeof m === 'string' && m.trim() !== '');
  if (o.title === undefined && o.detail === undefined && message !== undefined) {
    return { title: message.slice(0, 200), status, detail: message, ...(typeof inner.code === 'string' ? { code: inner.code } : {}) };
  }
  const withDefaults = { title: '', status, ...(json as object) };
  const parsed = problemSchema.safeParse(withDefaults);
  return parsed.success ? parsed.data : undefined;
}

export interface ResponseFacts {
  method: string;
  path: string;
  status: number;
  problem: Problem | undefined;
  /** The group (first path segment), e.g. "lodging". */
  group: string;
  /** What the client asked for: the api-version sent, the scopes of the token it used. */
  version?: string;
  tokenScopes?: string[];
  clientId?: string;
  retryAfterMs?: number;
  /** X-Supported-Versions of the service, when known. */
  supportedVersions?: string[];
  /** Whether this was the token request itself. */
  tokenRequest?: boolean;
}

/** The code of a failed response: the service's own when it is in the registry, else by status. */
export function codeFor(facts: Pick<ResponseFacts, 'status' | 'problem' | 'tokenRequest'>): ErrorCode {
  const sent = facts.problem?.code;
  if (sent && KNOWN_CODES.has(sent)) return sent as ErrorCode;
  const s = facts.status;
  if (s === 401) return facts.tokenRequest ? 'INVALID_CLIENT_CREDENTIALS' : 'INVALID_TOKEN';
  if (s === 403) return 'SCOPE_NOT_GRANTED';
  if (s === 404) return facts.tokenRequest ? 'UNKNOWN_TENANT_OR_LABEL' : 'NOT_FOUND';
  if (s === 406) return 'NOT_ACCEPTABLE';
  if (s === 409) return 'MIGRATION_STATE_CONFLICT';
  if (s === 413) return 'PAYLOAD_TOO_LARGE';
  if (s === 415) return 'UNSUPPORTED_MEDIA_TYPE';
  if (s === 429) return 'RATE_LIMITED';
  if (s === 503) return 'SERVICE_UNAVAILABLE';
  if (s >= 500) return 'INTERNAL_ERROR';
  if (s === 400 && /api-version|version/i.test(facts.problem?.detail ?? facts.problem?.title ?? '')) return 'UNSUPPORTED_API_VERSION';
  if (s === 400) return 'INVALID_REQUEST';
  // Any other 4xx refuses this request (a platform may refuse a state conflict with 422 or 400,
  // docs/contract-gaps.md): retrying later will not help, unlike an outage (HTTP_ERROR).
  if (s >= 400 && s < 500) return 'REQUEST_REFUSED';
  return 'HTTP_ERROR';
}

/** The error of a response with a status >= 400, with a message that says what to do. */
export function responseError(facts: ResponseFacts): ClientError {
  const code = codeFor(facts);
  const where = `${facts.method} ${facts.path}`;
  const detail = facts.problem?.detail || facts.problem?.title || '';
  const said = detail ? `: ${detail}` : '';
  let message: string;
  switch (code) {
    case 'INVALID_CLIENT_CREDENTIALS':
      message = `the service refused the client credentials (${facts.status} on ${where})${said}; check STAGECOACH_CLIENT_ID / STAGECOACH_CLIENT_SECRET (or --client-id / --client-secret)`;
      break;
    case 'UNKNOWN_TENANT_OR_LABEL':
      message = `the service knows no broker key and label pair of this request for this client (${facts.status} on ${where})${said}; check STAGECOACH_BROKER_KEY / STAGECOACH_LABEL (or --broker-key / --label)`;
      break;
    case 'TOO_MANY_ATTEMPTS':
      message = `the token endpoint is refusing this client after repeated failures (${facts.status} on ${where})${said}; fix the credentials, then wait${facts.retryAfterMs ? ` ${Math.ceil(facts.retryAfterMs / 1000)} s` : ''} before trying again`;
      break;
    case 'INVALID_TOKEN':
    case 'TOKEN_EXPIRED':
    case 'MISSING_BEARER_TOKEN':
      message = `the service refused the access token even after a fresh one was fetched (${facts.status} on ${where})${said}; check that the service's signing keys did not change and that the clock of this machine is right`;
      break;
    case 'SCOPE_NOT_GRANTED': {
      const scopes = facts.tokenScopes?.length ? facts.tokenScopes.join(', ') : 'other domains';
      message = `this client's token is limited to ${scopes}; ask the operator to enable /${facts.group} for client ${facts.clientId ?? '(this client)'} (${facts.status} on ${where})${said}`;
      break;
    }
    case 'UNSUPPORTED_API_VERSION': {
      const supported = facts.supportedVersions?.length
        ? `the service supports ${facts.supportedVersions.join(', ')} (see X-Supported-Versions of GET /authentication/jwks)`
        : 'see X-Supported-Versions of GET /authentication/jwks for the versions the service supports';
      message = `the service refused api-version ${facts.version ?? '(none)'} for /${facts.group} (${facts.status} on ${where})${said}; ${supported}, and set the client's versions option for this group`;
      break;
    }
    case 'NOT_FOUND':
      message = `not found (${facts.status} on ${where})${said}; check the reference id, and that it belongs to this broker key and label`;
      break;
    case 'RATE_LIMITED':
      message = `the service is rate limiting this client (${facts.status} on ${where})${said}; slow down or try again later`;
      break;
    case 'SERVICE_UNAVAILABLE':
    case 'INTERNAL_ERROR':
      message = `the service failed (${facts.status} on ${where})${said}; try again later, and see the service log if it persists`;
      break;
    default:
      // Conflicts (409) and refused input: the service's detail says what is wrong.
      message = detail ? `${detail} (${facts.status} on ${where})` : `the service answered ${facts.status} on ${where}`;
  }
  return new ClientError(code, message, {
    status: facts.status,
    problem: facts.problem,
    method: facts.method,
    path: facts.path,
    retryAfterMs: facts.retryAfterMs,
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
/** Errors where the request surely never reached the service: safe to retry even for POST. */
const UNSENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The error of an exchange that failed without a response (network, timeout, abort). */
export function transportError(err: unknown, method: string, path: string, baseUrl: string): ClientError {
  if (err instanceof ClientError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const sysCode = e.code ?? e.cause?.code ?? '';
  const where = `${method} ${path}`;
  if (e.name === 'AbortError' || sysCode === 'UND_ERR_ABORTED' || sysCode === 'ABORT_ERR') {
    return new ClientError('ABORTED', `${where} was aborted`, { method, path, cause: err });
  }
  if (TIMEOUT_CODES.has(sysCode)) {
    const what =
      sysCode === 'UND_ERR_CONNECT_TIMEOUT'
        ? 'connecting'
        : sysCode === 'UND_ERR_HEADERS_TIMEOUT'
          ? 'waiting for the response headers'
          : 'waiting for more of the response body';
    const error = new ClientError(
      'TIMEOUT',
      `timed out ${what} on ${where} at ${baseUrl} (${sysCode}); raise the client's timeouts if the service is slow`,
      { method, path, cause: err },
    );
    return markUnsent(error, UNSENT_CODES.has(sysCode));
  }
  const hint = sysCode === 'ECONNREFUSED' ? `; is the service running at ${baseUrl}? (start one with \`stagecoach serve\`)` : '';
  const error = new ClientError(
    'NETWORK_ERROR',
    `could not complete ${where} at ${baseUrl}: ${e.message ?? String(err)}${sysCode ? ` (${sysCode})` : ''}${hint}`,
    { method, path, cause: err },
  );
  return markUnsent(error, UNSENT_CODES.has(sysCode));
}

const unsent = new WeakSet<ClientError>();
function markUnsent(err: ClientError, yes: boolean): ClientError {
  if (yes) unsent.add(err);
  return err;
}
/** Whether the request of this error surely never reached the service. */
export function wasNeverSent(err: ClientError): boolean {
  return unsent.has(err);
}
