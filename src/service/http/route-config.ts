/** Per-route settings read by the request guard, and what the guard adds to a request. */
import type { VersionedArea } from '../../contract/media.js';
import type { Principal } from '../auth/tokens.js';
import type { Negotiated } from './negotiation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No bearer token needed (token issuance, JWKS). */
    public?: boolean;
    /** Any valid token will do, whatever its scopes (token validation). */
    anyScope?: boolean;
    /** Versioned area of the route; its Accept is negotiated before the handler runs. */
    area?: VersionedArea;
    /** Media types the route produces (default application/json). */
    produces?: readonly string[];
    /** Title of 401 problems on this route (the spec's validation table says "Service unavailable"). */
    unauthorizedTitle?: string;
    /** Streams: Accept must name the format. */
    requireExplicitAccept?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
    negotiated: Negotiated;
  }
}
