/**
 * Dialects: the embedded service answering with the *alternatives* to its own choices where the
 * specification is silent (docs/contract-gaps.md), so that the client is tested against a
 * platform that chose differently. Off by default; `serve --dialect <switches>` or the `dialect`
 * option of startService turns switches on (switches.ts).
 *
 * Everything happens at the HTTP edge, never in a route: one onRequest hook rewrites the query
 * (`continue-from` when counters start at 0, `Actions` in another spelling) and wraps the raw response, so JSON bodies sent by
 * fastify and streams written by hijacked routes alike pass through the same rewriter: JSON
 * bodies are rewritten whole (rewrite.ts), stream records one frame at a time (and the staging
 * stream becomes a JSON container when asked), then the bytes are compressed when a content
 * coding is on. Stream records are rewritten as they are written, so streams stay streams.
 * Exceptions, decided where the thing is made: `country=derived` is rendered by the counterparty
 * routes (render.ts), because only the stored record tells a value of its own from a filled-in
 * one; `redirects` and `upload-limit` answer before the route, as something in front of a
 * platform does (edge-detours.ts); `registration-ids=opaque` and `event-groups` by the event subscription routes;
 * `duplicates=refuse-all` by the validation job; `deliveries=shuffled` by the webhook dispatcher.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { constants as zlibConstants, createBrotliCompress, createDeflate, createGzip } from 'node:zlib';
import { createFrameDecoder, encodeFrame, type StreamFormat } from '../../codec/index.js';
import type { EventEnvelope } from '../../contract/events.js';
import { MEDIA } from '../../contract/media.js';
import type { ServiceContext } from '../context.js';
import {
  actionsFilter,
  countedStream,
  resourceOf,
  rewriteBody,
  rewriteDelivery,
  rewriteError,
  rewriteRecord,
  rewriteRunningJob,
  rewriteStatus,
  stagingMember,
  type Resource,
} from './rewrite.js';
import { dialectActive, parseDialect, type ContentCoding, type Dialect } from './switches.js';
import { detour } from './edge-detours.js';
import { canonicalIds } from '../../contract/canonical-form.js';

export { dialectSwitches, parseDialect, DIALECT_PRESETS, type Dialect } from './switches.js';
export { otherForm } from './rewrite.js';
export { movedUrl } from './edge-detours.js';

/** Installs the dialect's hook; call before the routes are registered. Nothing when no switch is on. */
export function installDialect(app: FastifyInstance, ctx: ServiceContext): void {
  const dialect = parseDialect(ctx.config.dialect);
  if (!dialectActive(dialect)) return;
  ctx.logger.warn({ dialect: ctx.config.dialect }, 'dialect ON: answering with the alternatives to the service’s own choices');
  if (dialect.redirects || dialect.uploadLimit !== undefined || dialect.uuids === 'upper') {
    // First, before the responses are rewritten: what answers in front of the platform.
    app.addHook('onRequest', async (request, reply) => {
      const staging = resourceOf(request.method, request.routeOptions.url) === 'staging';
      if (await detour(request, reply, dialect, staging)) return reply;
    });
  }
  if (dialect.uuids === 'upper') {
    // Ids sent back in upper case (the case this platform writes them in) are the same ids.
    app.addHook('preValidation', (request, _reply, done) => {
      if (request.body && typeof request.body === 'object') request.body = canonicalIds(request.body);
      done();
    });
  }
  app.addHook('onRequest', (request, reply, done) => {
    const resource = resourceOf(request.method, request.routeOptions.url);
    if (dialect.countersFrom0 && countedStream(resource)) {
      // The client counts from 0: its continue-from N is our N + 1.
      const query = request.query as Record<string, unknown>;
      const given = query['continue-from'];
      if (typeof given === 'string' && /^\d+$/.test(given)) query['continue-from'] = String(Number(given) + 1);
    }
    const spelling = dialect.actions;
    if (spelling && resource === 'log-stream') {
      const query = request.query as Record<string, unknown>;
      const given = query.Actions;
      if (typeof given === 'string') query.Actions = actionsFilter(given, spelling);
      else if (Array.isArray(given)) query.Actions = given.map((a) => actionsFilter(String(a), spelling));
    }
    // Authentication's errors keep their own shape: the spec shows them (docs/contract-gaps.md).
    const errorsReshaped = !request.url.startsWith('/authentication/');
    interceptResponse(reply.raw, request.method, resource, errorsReshaped ? dialect : { ...dialect, errors: undefined });
    receivedAt.set(request, Date.now());
    done();
  });
  if (!statusesChanged(dialect)) return;
  // Statuses are chosen before the headers go out: onSend sees the route's JSON body and status
  // (errors included) while both can still change; the body rewrites above then apply as usual.
  app.addHook('onSend', (request, reply, payload, done) => {
    let body: unknown;
    if (typeof payload === 'string' && payload) {
      try {
        body = JSON.parse(payload);
      } catch {
        return done(null, payload);
      }
    } else if (payload !== undefined && payload !== null && payload !== '') return done(null, payload); // a stream or bytes: not a JSON answer
    const resource = resourceOf(request.method, request.routeOptions.url);
    const answer = rewriteStatus(resource, { status: reply.statusCode, body }, receivedAt.get(request) ?? 0, dialect);
    if (!answer) return done(null, payload);
    reply.code(answer.status);
    if (answer.status >= 400) reply.type(MEDIA.problem);
    done(null, answer.body === undefined ? payload : JSON.stringify(answer.body));
  });
}

/** When each request arrived (the resend switch tells a repeated send by it). */
const receivedAt = new WeakMap<object, number>();

const statusesChanged = (d: Dialect) =>
  !!(d.rejections || d.missingFiles || d.definitionRefused || d.messageCreated200 || d.resend409 || d.upload201);

/** How the dialect's platform sends webhook deliveries: each one's body, and how often it is POSTed. */
export interface DeliveryDialect {
  body(envelope: EventEnvelope): string;
  /** 2 when every delivery is sent again after its acknowledgement (receivers drop it by id). */
  copies: number;
  /** Deliveries held back until a few are due, then sent newest first (`deliveries=shuffled`). */
  shuffled: boolean;
}

/**
 * The delivery side of a dialect (the dispatcher's outgoing HTTP edge): the service's own
 * envelope when no switch concerns deliveries.
 * @example deliveryDialect('timestamps=basic').body(envelope) // '{"id":…,"occurredOn":"20260102T030405.123Z",…}'
 */
export function deliveryDialect(spec: string | undefined): DeliveryDialect {
  const d = parseDialect(spec);
  return {
    body: (envelope) =>
      JSON.stringify(
        d.nulls || d.timestamps || d.deliveryExtras || d.deliveryExtraData || d.processStatusUpperSnake
          ? rewriteDelivery(envelope, d)
          : envelope,
      ),
    copies: d.deliveriesTwice ? 2 : 1,
    shuffled: !!d.deliveriesShuffled,
  };
}

/** What turns one response's body bytes into the dialect's: fed chunk by chunk, then ended. */
interface BodyRewriter {
  write(chunk: Buffer): string | Buffer;
  end(): string | Buffer;
}

function interceptResponse(res: ServerResponse, method: string, resource: Resource, d: Dialect): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: Record<string, unknown>) => ServerResponse;
  const write = res.write.bind(res) as (chunk: string | Buffer) => boolean;
  const end = res.end.bind(res) as (chunk?: string | Buffer) => ServerResponse;
  let rewriter: BodyRewriter | undefined;
  let coder: Transform | undefined;
  let ended = false;

  const send = (out: string | Buffer): boolean => {
    if (out.length === 0) return true;
    return coder ? coder.write(out) : write(out);
  };

  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers: Record<string, unknown> = {};
    for (const arg of rest) if (arg && typeof arg === 'object' && !Array.isArray(arg)) Object.assign(headers, arg);
    const lower = (name: string) => Object.keys(headers).find((k) => k.toLowerCase() === name);
    const ctKey = lower('content-type');
    const contentType = String((ctKey ? headers[ctKey] : res.getHeader('content-type')) ?? '');
    const ok = status >= 200 && status < 300;
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    const reshape = (newType: string | undefined) => {
      if (ctKey) delete headers[ctKey];
      res.removeHeader('content-type');
      if (newType) headers['content-type'] = newType;
    };
    if (status >= 400 && d.errors && type === MEDIA.problem) {
      rewriter = errorRewriter(d.errors);
      reshape(d.errors === 'plain' ? 'text/plain; charset=utf-8' : MEDIA.json);
    } else if (status === 202 && resource === 'job' && d.jobRunning) {
      rewriter = runningJobRewriter(d.jobRunning);
      if (d.jobRunning === 'empty') reshape(undefined);
    } else if (ok && resource === 'token' && d.tokenBody === 'plain' && type === MEDIA.json) {
      // The JWT alone as text/plain, whatever the request's Accept put first.
      rewriter = wholeJsonRewriter((body) => String(rewriteBody(resource, body, d)));
      reshape('text/plain; charset=utf-8');
    } else rewriter = ok ? bodyRewriter(resource, contentType, d) : undefined;
    if (rewriter && resource === 'staging' && d.stagingContainer && contentType.split(';')[0]!.trim() !== MEDIA.json) {
      if (ctKey) delete headers[ctKey];
      headers['content-type'] = MEDIA.json;
      res.removeHeader('content-type');
    }
    const hasBody = method !== 'HEAD' && status !== 204 && status !== 304;
    // A coding named on a response without a body (`empty-coding=gzip`): nothing to decode.
    if (!hasBody && d.emptyCoded) headers['content-encoding'] = 'gzip';
    if (d.coding && hasBody) {
      coder = compressor(d.coding);
      headers['content-encoding'] = d.coding;
      coder.on('data', (c: Buffer) => {
        if (!write(c)) coder!.pause();
      });
      res.on('drain', () => coder?.resume());
      coder.on('drain', () => res.emit('drain'));
      coder.on('end', () => end());
    }
    if (rewriter || coder) {
      const lenKey = lower('content-length');
      if (lenKey) delete headers[lenKey];
      res.removeHeader('content-length');
    }
    return writeHead(status, headers);
  }) as ServerResponse['writeHead'];

  res.write = ((chunk: string | Buffer, ...rest: unknown[]) => {
    if (!res.headersSent) res.writeHead(res.statusCode);
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const result = send(rewriter ? rewriter.write(buf) : buf);
    const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    cb?.();
    return result;
  }) as ServerResponse['write'];

  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (ended) return res;
    ended = true;
    if (!res.headersSent) res.writeHead(res.statusCode);
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
      send(rewriter ? rewriter.write(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)) : (chunk as Buffer));
    }
    if (rewriter) send(rewriter.end());
    if (coder) coder.end();
    else end();
    const cb = [chunk, ...rest].find((r) => typeof r === 'function') as (() => void) | undefined;
    if (cb) res.once('finish', cb);
    return res;
  }) as ServerResponse['end'];
}

function compressor(coding: ContentCoding): Transform {
  // Flushed per write: a stream record reaches the client when it is written, not at the end.
  if (coding === 'gzip') return createGzip({ flush: zlibConstants.Z_SYNC_FLUSH });
  if (coding === 'deflate') return createDeflate({ flush: zlibConstants.Z_SYNC_FLUSH });
  return createBrotliCompress({ flush: zlibConstants.BROTLI_OPERATION_FLUSH });
}

/** A whole body, buffered and rewritten at its end by `rewrite` (bodies that are not JSON pass as they were). */
function wholeJsonRewriter(rewrite: (value: unknown) => string): BodyRewriter {
  const chunks: Buffer[] = [];
  return {
    write(chunk) {
      chunks.push(chunk);
      return '';
    },
    end() {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text.trim()) return text;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return text; // not ours to fix: pass it on as it was
      }
      return rewrite(value);
    },
  };
}

const errorRewriter = (mode: NonNullable<Dialect['errors']>) => wholeJsonRewriter((problem) => rewriteError(problem, mode));
const runningJobRewriter = (mode: 'status' | 'empty') =>
  wholeJsonRewriter((running) => {
    const out = rewriteRunningJob(running, mode);
    return out === undefined ? '' : JSON.stringify(out);
  });

/** The rewriter of a successful body of this resource and type, or undefined to pass it through. */
function bodyRewriter(resource: Resource, contentType: string, d: Dialect): BodyRewriter | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === MEDIA.jsonl || type === MEDIA.jsonSeq) {
    const format: StreamFormat = type === MEDIA.jsonl ? 'jsonl' : 'json-seq';
    return streamRewriter(format, resource, d);
  }
  const indent = resource === 'staging' && d.stagingContainer === 'pretty' ? 2 : undefined;
  if (type === MEDIA.json || type.endsWith('+json'))
    return wholeJsonRewriter((value) => JSON.stringify(rewriteBody(resource, value, d), null, indent));
  return undefined;
}

/**
 * Stream records rewritten one by one; for the staging stream with a container switch, the
 * records become the items of one JSON container (`[…]`, `{"results": […]}`, `{"items": […]}`).
 */
function streamRewriter(format: StreamFormat, resource: Resource, d: Dialect): BodyRewriter {
  const container = resource === 'staging' ? d.stagingContainer : undefined;
  // Written as a streaming server writes it: one item a line, as each batch commits.
  const [open, close] =
    container === undefined
      ? ['', '']
      : container === 'array'
        ? ['[\n', '\n]\n']
        : [`{${JSON.stringify(stagingMember(container))}: [\n`, '\n]}\n'];
  // pretty: each item over several lines, indented as a pretty-printing serialiser writes it
  const item = (value: unknown) =>
    container === 'pretty' ? `  ${JSON.stringify(value, null, 2).replaceAll('\n', '\n  ')}` : JSON.stringify(value);
  let out = open;
  let items = 0;
  const decoder = createFrameDecoder(format, (frame) => {
    // A frame the decoder cannot read (a cut made by fault injection) is passed on as it was.
    const value = frame.kind === 'invalid' ? undefined : rewriteRecord(resource, frame.value, d);
    if (frame.kind === 'invalid') out += frame.text;
    else if (container) out += (items++ > 0 ? ',\n' : '') + item(value);
    else out += encodeFrame(format, value);
  });
  const take = () => {
    const text = out;
    out = '';
    return text;
  };
  return {
    write(chunk) {
      decoder.write(chunk);
      return take();
    },
    end() {
      decoder.end();
      return take() + close;
    },
  };
}
