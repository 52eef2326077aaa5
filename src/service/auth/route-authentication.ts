/**
 * /authentication: token issuance (Basic client credentials), token validation, JWKS.
 * Status codes and titles follow the spec's error tables exactly (including its titles
 * "Service unavailable" for a 500 on issuance and a 401 on validation).
 */
import type { FastifyInstance } from 'fastify';
import { MEDIA, SUPPORTED_VERSIONS } from '../../contract/media.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { authenticateClient, labelExists } from './identities.js';
import { issueToken } from './tokens.js';
import { LoginThrottle } from './login-throttle.js';

export async function authenticationRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const throttle = new LoginThrottle();

  app.get<{ Params: { brokerKey: string; labelId: string } }>(
    '/authentication/token/:brokerKey/:labelId',
    { config: { public: true, area: 'authentication', produces: [MEDIA.json, 'application/jwt', 'text/plain'] } },
    async (request, reply) => {
      const credentials = parseBasic(request.headers.authorization);
      const throttleKey = `${credentials?.clientId ?? ''}|${request.ip}`;
      const wait = throttle.retryAfter(throttleKey);
      if (wait > 0) {
        throw new HttpProblem(429, 'TOO_MANY_ATTEMPTS', `too many failed attempts for this client; retry after ${wait} s`, {
          headers: { 'retry-after': String(wait) },
        });
      }
      const client = credentials && authenticateClient(ctx.db, credentials.clientId, credentials.secret);
      if (!client) {
        throttle.fail(throttleKey);
        throw new HttpProblem(
          401,
          'INVALID_CLIENT_CREDENTIALS',
          'client id and secret are not valid; send them as HTTP Basic credentials',
          {
            title: 'Unauthorized',
            headers: { 'www-authenticate': 'Basic realm="stagecoach"' },
          },
        );
      }
      throttle.succeed(throttleKey);
      const { brokerKey, labelId } = request.params;
      // Only after authentication, so that unauthenticated callers cannot probe tenant names.
      if (client.brokerKey !== brokerKey || !client.labels.includes(labelId) || !labelExists(ctx.db, brokerKey, labelId)) {
        throw new HttpProblem(
          404,
          'UNKNOWN_TENANT_OR_LABEL',
          `no broker key "${brokerKey}" with label reference "${labelId}" for this client`,
          { title: 'Not found' },
        );
      }
      let token: string;
      try {
        token = await issueToken(
          ctx.keys,
          { sub: client.clientId, broker: brokerKey, label: labelId, scopes: client.scopes },
          ctx.config.tokenTtlSeconds,
        );
      } catch (err) {
        request.log.error({ err }, 'token signing failed');
        throw new HttpProblem(500, 'INTERNAL_ERROR', 'the token could not be issued', { title: 'Service unavailable' });
      }
      reply.header('cache-control', 'no-store');
      if (request.negotiated.mediaType !== MEDIA.json) return reply.type(request.negotiated.mediaType).send(token);
      return { access_token: token, token_type: 'Bearer', expires_in: ctx.config.tokenTtlSeconds };
    },
  );

  app.get(
    '/authentication/validation',
    { config: { anyScope: true, area: 'authentication', unauthorizedTitle: 'Service unavailable' } },
    async (request) => {
      const p = request.principal;
      return {
        valid: true,
        clientId: p.clientId,
        brokerKey: p.brokerKey,
        labelReferenceId: p.label,
        scopes: p.scopes,
        expiresAt: new Date(p.expiresAt * 1000).toISOString(),
      };
    },
  );

  app.get('/authentication/jwks', { config: { public: true, area: 'authentication' } }, async (_request, reply) => {
    reply.header('x-supported-versions', SUPPORTED_VERSIONS.join(','));
    return ctx.keys.publicJwks;
  });
}

function parseBasic(header: string | undefined): { clientId: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}
