/**
 * The fault-injection admin endpoint, for tests and demos that switch faults on a running
 * service. Public (no token) but answered only for loopback callers whose Host header is a
 * loopback name; everyone else gets 403.
 *
 *   GET    /_admin/faults                       {faults, seed, rules}
 *   PUT    /_admin/faults  {"faults": "<spec>", "seed"?: n}   replaces the rules, restarts the generator
 *   DELETE /_admin/faults                       clears every rule (204)
 *   GET    /_admin/faults/stats                 requests, faults fired, most requests in progress per route
 *   DELETE /_admin/faults/stats                 starts the counters afresh (204)
 *   GET    /_admin/faults/alterations           the data alterations that took effect at import
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { StagecoachError } from '../../contract/errors.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import type { FaultController } from './controller.js';
import type { FaultStats } from './stats.js';
import { alterationsOf } from './alterations.js';

export const ADMIN_PREFIX = '/_admin/';
const PATH = '/_admin/faults';

const bodySchema = z.object({ faults: z.string().nullable(), seed: z.number().int().optional() });

export function adminRoutes(app: FastifyInstance, ctx: ServiceContext, faults: FaultController, stats: FaultStats): void {
  const show = () => ({
    faults: faults.spec,
    seed: faults.seed,
    rules: faults.rules.map(({ pattern: _pattern, ...rule }) => rule),
  });

  app.get(PATH, { config: { public: true } }, async (request) => {
    requireLoopback(request);
    return show();
  });

  app.put(PATH, { config: { public: true } }, async (request) => {
    requireLoopback(request);
    const parsed = bodySchema.safeParse(request.body);
    if (!parsed.success) {
      throw new HttpProblem(
        400,
        'INVALID_REQUEST',
        `fault rules: expected {"faults": "<spec>" or null, "seed"?: integer}, got ${JSON.stringify(request.body ?? null).slice(0, 200)}`,
      );
    }
    try {
      faults.set(parsed.data.faults ?? '', parsed.data.seed ?? ctx.config.faultSeed);
    } catch (err) {
      if (err instanceof StagecoachError)
        throw new HttpProblem(400, 'FAULT_SPEC_INVALID', err.message, { errors: [{ field: 'faults', message: 'FAULT_SPEC_INVALID' }] });
      throw err;
    }
    ctx.logger.warn(
      { faults: faults.spec, seed: faults.seed },
      faults.active ? 'fault injection rules replaced' : 'fault injection cleared',
    );
    return show();
  });

  // Counters of requests, fired faults and the most requests in progress at once per route
  // (stats.ts), for reliability tests; DELETE starts them afresh.
  app.get(`${PATH}/stats`, { config: { public: true } }, async (request) => {
    requireLoopback(request);
    return stats.view();
  });
  // The data alterations that took effect (alterations.ts), for tests to compare with what verify finds.
  app.get(`${PATH}/alterations`, { config: { public: true } }, async (request) => {
    requireLoopback(request);
    const a = alterationsOf(ctx);
    return { alterations: a.spec ?? '', seed: a.seed, count: a.count, altered: a.done };
  });
  app.delete(`${PATH}/stats`, { config: { public: true } }, async (request, reply) => {
    requireLoopback(request);
    stats.reset();
    return reply.status(204).send();
  });

  app.delete(PATH, { config: { public: true } }, async (request, reply) => {
    requireLoopback(request);
    faults.set('', faults.seed);
    ctx.logger.warn('fault injection cleared');
    return reply.status(204).send();
  });
}

/**
 * Host headers the admin endpoint answers: 127.0.0.1, localhost or [::1], with or without a
 * port. A browser page that rebinds its own name to 127.0.0.1 (DNS rebinding) connects from
 * loopback, so the address check alone lets it through; but the browser still sends the page's
 * name as Host, and that is refused here. A request without a Host header is refused too.
 */
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

function requireLoopback(request: FastifyRequest): void {
  const address = request.socket.remoteAddress ?? '';
  const loopback = address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
  if (!loopback) {
    throw new HttpProblem(
      403,
      'ADMIN_LOOPBACK_ONLY',
      `the fault-injection admin endpoint answers loopback callers only; ${address || 'this caller'} is not one`,
    );
  }
  const host = request.headers.host;
  if (host === undefined || !LOOPBACK_HOST.test(host)) {
    const got = host === undefined ? 'no Host header' : `Host ${JSON.stringify(host.length > 200 ? `${host.slice(0, 200)}…` : host)}`;
    throw new HttpProblem(
      403,
      'ADMIN_HOST_NOT_LOOPBACK',
      `the fault-injection admin endpoint answers requests addressed to a loopback name only; expected Host 127.0.0.1, localhost or [::1] (any port), got ${got}`,
    );
  }
}
