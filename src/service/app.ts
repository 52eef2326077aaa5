/**
 * Builds the fastify application of the embedded lending service: problem handlers, the request
 * guard, fault injection, and one registration per functional group.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import './http/route-config.js';
import type { ServiceContext } from './context.js';
import { HttpProblem, installProblemHandlers, sendProblem } from './http/problem.js';
import { installGuard } from './auth/guard.js';
import { httpTimeouts } from './http/timeouts.js';
import { authenticationRoutes } from './auth/route-authentication.js';
import { installFaults } from './faults/index.js';
import { installDialect, movedUrl, parseDialect } from './dialect/index.js';
import { registerMigrationAssistance } from './migration/index.js';
import { registerProcessOrchestration } from './process/index.js';
import { registerLodging } from './lodging/index.js';
import { registerCounterparties } from './counterparties/index.js';
import { registerEvents } from './events/index.js';

export async function buildApp(ctx: ServiceContext): Promise<FastifyInstance> {
  // Typed as the default instance: route modules take a plain FastifyInstance.
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger as unknown as FastifyBaseLogger,
    // Per-request lines only at debug: a staging run makes thousands of requests.
    logController: new LogController({ disableRequestLogging: ctx.config.logLevel !== 'debug' && ctx.config.logLevel !== 'trace' }),
    bodyLimit: 10 * 1024 * 1024,
    // A client that stops sending is cut; one on a slow link is not (http/timeouts.ts).
    ...httpTimeouts(ctx.config),
    // Close idle keep-alive sockets on shutdown; in-flight requests still finish.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // `redirects=…`: a redirected request comes back under another path (dialect/edge-detours.ts).
    ...(parseDialect(ctx.config.dialect).redirects ? { rewriteUrl: movedUrl } : {}),
    // Errors fastify raises before routing (a path that is not valid percent-encoding, such as an
    // overlong UTF-8 "%c0%ae"): a problem body like every other error, not fastify's own JSON.
    frameworkErrors: (error, request, reply) => {
      sendProblem(reply, new HttpProblem(400, 'INVALID_REQUEST', `the request cannot be read: ${error.message}`), request.url);
    },
  });
  installProblemHandlers(app);
  // First: every answer, refusals of the guard and injected faults included, speaks the dialect.
  installDialect(app, ctx);
  installGuard(app, ctx);
  installFaults(app, ctx);
  // An empty application/json body (PUT …/send, PUT …/cancel) is allowed: no body needed.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      (err as { statusCode?: number }).statusCode = 400;
      done(err as Error, undefined);
    }
  });

  await authenticationRoutes(app, ctx);
  await registerProcessOrchestration(app, ctx);
  await registerLodging(app, ctx);
  await registerCounterparties(app, ctx);
  await registerEvents(app, ctx);
  await registerMigrationAssistance(app, ctx);
  return app;
}
