/** client.auth: the access token (cached), its validation by the service, and the JWKS. */
import { jwksSchema, type PublicJwk } from '../contract/auth.js';
import type { TokenManager } from './tokens.js';
import { parseWith } from './tolerant.js';
import type { Transport } from './transport.js';

export interface TokenInfo {
  /** The bearer token itself: a secret, print it only when asked. */
  accessToken: string;
  expiresAt: Date;
  /** Claims read from the JWT payload (unverified; use `validate` or the JWKS to verify). */
  claims: Record<string, unknown>;
}

export interface Jwks {
  keys: PublicJwk[];
  /** X-Supported-Versions of the response, split. */
  supportedVersions: string[];
}

export function authApi(transport: Transport, tokens: TokenManager) {
  return {
    /**
     * The current access token (cached; refreshed shortly before expiry).
     * @example const { expiresAt, claims } = await client.auth.token();
     */
    async token(opts: { signal?: AbortSignal; fresh?: boolean } = {}): Promise<TokenInfo> {
      const c = opts.fresh ? await tokens.refresh() : await tokens.current(opts.signal);
      return { accessToken: c.token, expiresAt: new Date(c.expiresAtMs), claims: c.claims ?? {} };
    },
    /**
     * Asks the service whether the current token is valid; returns what it says about it.
     * @example await client.auth.validate() // { valid: true, clientId: 'demo-client', … }
     */
    async validate(opts: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: '/authentication/validation',
        area: 'authentication',
        signal: opts.signal,
      });
      return res.body && typeof res.body === 'object' ? (res.body as Record<string, unknown>) : { valid: true };
    },
    /**
     * The service's public keys and the versions it supports (no token needed).
     * @example (await client.auth.jwks()).supportedVersions // ['2022.1.0', …]
     */
    async jwks(opts: { signal?: AbortSignal } = {}): Promise<Jwks> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: '/authentication/jwks',
        area: 'authentication',
        auth: 'none',
        signal: opts.signal,
      });
      // An array per the spec; tolerate the RFC 7517 {keys: […]} set.
      const body =
        res.body && typeof res.body === 'object' && !Array.isArray(res.body) && Array.isArray((res.body as { keys?: unknown }).keys)
          ? (res.body as { keys: unknown }).keys
          : res.body;
      const header = res.headers['x-supported-versions'];
      const versions = (Array.isArray(header) ? header.join(',') : (header ?? ''))
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      return { keys: parseWith(jwksSchema, body, 'JWKS'), supportedVersions: versions };
    },
  };
}
