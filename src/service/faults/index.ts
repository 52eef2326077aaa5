/**
 * Fault injection: makes the embedded service misbehave on purpose, so that the client's
 * retries, resumes and ledger can be tested against the failures a real platform has —
 * error statuses (500, 503, 429 with Retry-After), added latency, connections reset while an
 * upload arrives, and stream responses cut in the middle of a record.
 *
 * Off by default: with no rules the hooks return at once and stream routes write directly.
 * Rules come from `config.faults` (`serve --faults`) and can be replaced at runtime through
 * the loopback-only admin endpoint /_admin/faults (route-admin.ts). Decisions come from a
 * seeded generator (`config.faultSeed`), so the same sequence of requests meets the same
 * faults. Rule language and examples: docs/fault-injection.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { ServiceContext } from '../context.js';
import { HttpProblem, sendProblem } from '../http/problem.js';
import { FaultController } from './controller.js';
import type { Random } from './random.js';
import { ruleMatches, type FaultRule } from './rules.js';
import { adminRoutes, ADMIN_PREFIX } from './route-admin.js';
import { FaultStats } from './stats.js';

export { parseFaultSpec, type FaultRule } from './rules.js';
export { FaultController } from './controller.js';

/** Where a stream response is to be cut: after `after` bytes, or at a random place of the first write. */
interface CutPlan {
  after?: number;
  random: Random;
  rule: string;
  /** Counts the cut once it happens. */
  onCut: () => void;
}
/** Planned cuts by raw request; stream routes look here through `streamWriter`. */
const cuts = new WeakMap<IncomingMessage, CutPlan>();
const resets = new WeakMap<IncomingMessage, { after: number; rule: string }>();
/** Requests already counted as faulted (a request may meet latency, then a reset). */
const faultedRequests = new WeakSet<IncomingMessage>();
function countFault(stats: FaultStats, raw: IncomingMessage, kind: FaultRule['kind'], status?: number): void {
  stats.fire(kind, status);
  if (faultedRequests.has(raw)) return;
  faultedRequests.add(raw);
  stats.faultedRequest();
}

/**
 * Installs the fault hooks and the admin endpoint; call it before the routes are registered.
 * @example installFaults(app, ctx); // rules from ctx.config.faults, seed ctx.config.faultSeed
 */
export function installFaults(app: FastifyInstance, ctx: ServiceContext): void {
  const faults = new FaultController(ctx.config.faults, ctx.config.faultSeed);
  if (faults.active) ctx.logger.warn({ faults: faults.spec, seed: faults.seed }, 'fault injection is ON');
  const stats = new FaultStats();
  adminRoutes(app, ctx, faults, stats);

  app.addHook('onRequest', (request, reply, done) => {
    if (request.url.startsWith(ADMIN_PREFIX)) return done();
    stats.track(`${request.method} ${request.routeOptions.url ?? '(no route)'}`, reply.raw);
    if (!faults.active) return done();
    decide(faults, ctx, request, reply, stats).then(
      (handled) => {
        if (!handled) done();
      },
      (err: Error) => done(err),
    );
  });

  app.addHook('preParsing', (request, _reply, payload, done) => {
    const plan = faults.active ? resets.get(request.raw) : undefined;
    if (!plan) return done(null, payload);
    let seen = 0;
    const wrapped = new Transform({
      transform(chunk: Buffer, _enc, callback) {
        seen += chunk.length;
        if (seen <= plan.after) return callback(null, chunk);
        ctx.logger.info({ rule: plan.rule, url: request.url, bytes: seen }, 'injected fault: connection reset during the request body');
        countFault(stats, request.raw, 'reset');
        request.raw.socket.destroy();
        callback(new Error(`injected fault: connection reset (${plan.rule})`));
      },
    });
    payload.on('error', (err) => wrapped.destroy(err));
    // A route may answer without reading the body (e.g. a 409 before staging starts); the reset
    // error must then not become an uncaught 'error' event that takes the whole service down.
    // Routes that do read the body still see the error through their own listeners.
    wrapped.on('error', () => undefined);
    payload.pipe(wrapped);
    done(null, wrapped);
  });
}

/** Applies the matching rules to one request; true when the request was answered or dropped. */
async function decide(
  faults: FaultController,
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  stats: FaultStats,
): Promise<boolean> {
  const path = request.url.split('?')[0]!;
  let delay = 0;
  let status: FaultRule | undefined;
  let reset: FaultRule | undefined;
  let cut: FaultRule | undefined;
  for (const rule of faults.rules) {
    if (!ruleMatches(rule, request.method, path)) continue;
    // Always draw, fired or not, so each request consumes the same numbers whatever happens.
    const fires = faults.random.next() < rule.p;
    if (rule.kind === 'latency') {
      const extra = rule.latency!.min + Math.floor(faults.random.next() * (rule.latency!.max - rule.latency!.min + 1));
      if (fires) delay += extra;
    } else if (fires) {
      if (rule.kind === 'status') status ??= rule;
      else if (rule.kind === 'reset') reset ??= rule;
      else cut ??= rule;
    }
  }
  if (delay > 0) {
    countFault(stats, request.raw, 'latency');
    await new Promise((r) => setTimeout(r, delay));
  }
  if (reset) {
    if (hasBody(request.raw)) {
      resets.set(request.raw, { after: reset.after ?? 0, rule: reset.text });
    } else {
      ctx.logger.info({ rule: reset.text, url: request.url }, 'injected fault: connection reset');
      countFault(stats, request.raw, 'reset');
      reply.hijack();
      request.raw.socket.destroy();
      return true;
    }
  }
  if (status) {
    ctx.logger.info({ rule: status.text, url: request.url, status: status.status }, 'injected fault: error status');
    countFault(stats, request.raw, 'status', status.status);
    const headers: Record<string, string> = { 'x-injected-fault': status.text };
    if (status.retryAfter !== undefined) headers['retry-after'] = String(status.retryAfter);
    const problem = new HttpProblem(
      status.status!,
      'INJECTED_FAULT',
      `injected fault: rule \`${status.text}\` answered ${status.status} (fault injection is on; see docs/fault-injection.md)`,
      {
        headers,
      },
    );
    sendProblem(reply, problem, request.url);
    return true;
  }
  if (cut)
    cuts.set(request.raw, { after: cut.after, random: faults.random, rule: cut.text, onCut: () => countFault(stats, request.raw, 'cut') });
  return false;
}

function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The write function a streaming route uses instead of `res.write`: it writes straight through,
 * unless fault injection planned a cut for this request — then it writes part of a record,
 * destroys the connection once that part is flushed, makes `res.end()` a no-op and returns
 * false from then on (the route's 'close' listener sees the end). Costs one WeakMap lookup per
 * response when off.
 * @example
 *   const write = streamWriter(request, reply.raw);
 *   const more = write(chunk); // instead of reply.raw.write(chunk)
 *   if (!more) await drainedOrClosed(reply.raw);
 */
export function streamWriter(request: FastifyRequest, res: ServerResponse): (chunk: string) => boolean {
  const plan = cuts.get(request.raw);
  if (!plan) return (chunk) => res.write(chunk);
  cuts.delete(request.raw);
  let written = 0;
  let cutDone = false;
  return (chunk) => {
    if (cutDone || res.destroyed) return false;
    const buf = Buffer.from(chunk);
    // Where in this chunk the cut may start: after `after` bytes in all, or anywhere in the first write.
    const from = plan.after === undefined ? Math.floor(plan.random.next() * buf.length) : plan.after - written;
    const end = from < buf.length ? buf.indexOf(0x0a, Math.max(0, from)) : -1;
    if (end < 0) {
      written += buf.length;
      return res.write(buf);
    }
    // Cut the record that ends at `end` somewhere strictly inside it: never on a boundary.
    const start = end === 0 ? 0 : buf.lastIndexOf(0x0a, end - 1) + 1;
    const at = start + 1 + Math.floor(plan.random.next() * Math.max(1, end - start - 1));
    cutDone = true;
    plan.onCut();
    // The route may call res.end() right after this write; that must not finish the response
    // properly, so end() is disabled for this one response and the socket is destroyed once
    // the partial record has been flushed to it.
    res.end = (() => res) as typeof res.end;
    res.write(buf.subarray(0, Math.min(at, end)), () => res.destroy());
    return false;
  };
}
