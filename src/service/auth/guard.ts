/**
 * The request guard: every route that is not public demands a valid Bearer token (RS256,
 * unexpired, our issuer), whose tenant and white label still exist and whose scopes cover the
 * route's path prefix; then the route's Accept is negotiated.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MEDIA } from '../../contract/media.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { negotiate } from '../http/negotiation.js';
import { createVerifier, type Principal } from './tokens.js';
import { labelExists } from './identities.js';

export function installGuard(app: FastifyInstance, ctx: ServiceContext): void {
  const verify = createVerifier(ctx.keys);
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('negotiated', null as unknown as FastifyRequest['negotiated']);

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (!request.routeOptions.url) return; // not-found handler
    if (!config.public) {
      try {
        request.principal = await authenticate(request, verify, ctx, config.anyScope === true);
      } catch (err) {
        if (err instanceof HttpProblem && err.status === 401 && config.unauthorizedTitle) err.extra.title = config.unauthorizedTitle;
        throw err;
      }
    }
    if (config.area) {
      request.negotiated = negotiate(request.headers.accept, {
        area: config.area,
        produces: config.produces ?? [MEDIA.json],
        requireExplicit: config.requireExplicitAccept,
      });
    }
  });
}

const unauthorized = (code: 'MISSING_BEARER_TOKEN' | 'INVALID_TOKEN' | 'TOKEN_EXPIRED', detail: string) =>
  new HttpProblem(401, code, detail, { headers: { 'www-authenticate': `Bearer error="invalid_token"` } });

async function authenticate(
  request: FastifyRequest,
  verify: ReturnType<typeof createVerifier>,
  ctx: ServiceContext,
  anyScope: boolean,
): Promise<Principal> {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw unauthorized('MISSING_BEARER_TOKEN', 'this endpoint needs Authorization: Bearer <access token>');
  const result = await verify(match[1]!);
  if (!result.ok) throw unauthorized(result.why === 'expired' ? 'TOKEN_EXPIRED' : 'INVALID_TOKEN', result.detail);
  const principal = result.principal;
  if (!labelExists(ctx.db, principal.brokerKey, principal.label)) {
    throw unauthorized('INVALID_TOKEN', 'the tenant or white label of this token no longer exists');
  }
  if (!anyScope) {
    const prefix = '/' + (request.url.split('/')[1] ?? '').split('?')[0];
    if (!principal.scopes.includes(prefix)) {
      throw new HttpProblem(
        403,
        'SCOPE_NOT_GRANTED',
        `this token is limited to ${principal.scopes.join(', ') || 'no domain'}; ${prefix} must be enabled for the client by the service operator`,
      );
    }
  }
  return principal;
}
