/**
 * Issues and verifies the service's RS256 access tokens. Verification allows RS256 only, so a
 * token with `alg: none`, or HS256 keyed with the public key, is refused before its claims
 * are read. A token must name its key (`kid`): the service always writes one, and a token
 * without it would otherwise be tried against whichever key fits. A token must say when it was
 * issued (`iat`), and not later than `CLOCK_SKEW_SECONDS` from now (docs/security.md).
 */
import { createLocalJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import { randomUUID } from 'node:crypto';
import type { AccessClaims } from '../../contract/auth.js';
import type { SigningKeys } from './keys.js';

export const TOKEN_ISSUER = 'urn:stagecoach:embedded-lending-service';
/** How far in the future a token's `iat` may lie (the issuer's clock running ahead of ours). */
export const CLOCK_SKEW_SECONDS = 60;

export interface Principal {
  clientId: string;
  brokerKey: string;
  label: string;
  scopes: string[];
  expiresAt: number;
}

export async function issueToken(
  keys: SigningKeys,
  claims: Omit<AccessClaims, 'scope'> & { scopes: string[] },
  ttlSeconds: number,
): Promise<string> {
  return new SignJWT({ broker: claims.broker, label: claims.label, scope: claims.scopes.join(' ') })
    .setProtectedHeader({ alg: 'RS256', kid: keys.kid, typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .setJti(randomUUID())
    .sign(keys.privateKey);
}

export type VerifyFailure = 'expired' | 'invalid';

export function createVerifier(keys: SigningKeys) {
  const jwks = createLocalJWKSet({ keys: keys.publicJwks });
  // A header without `kid` is refused before any key is tried (jose would try every key of the set).
  const keyOf: JWTVerifyGetKey = (header, token) => {
    if (typeof header.kid !== 'string' || header.kid === '') throw new joseErrors.JWSInvalid('token names no key (kid)');
    return jwks(header, token);
  };
  return async (token: string): Promise<{ ok: true; principal: Principal } | { ok: false; why: VerifyFailure; detail: string }> => {
    try {
      const { payload } = await jwtVerify(token, keyOf, {
        algorithms: ['RS256'],
        issuer: TOKEN_ISSUER,
        requiredClaims: ['exp', 'sub', 'iat'],
      });
      if (payload.iat! > Math.floor(Date.now() / 1000) + CLOCK_SKEW_SECONDS)
        return { ok: false, why: 'invalid', detail: 'token signature, algorithm or claims are not valid' };
      const { broker, label, scope } = payload as Record<string, unknown>;
      if (typeof broker !== 'string' || typeof label !== 'string' || typeof scope !== 'string') {
        return { ok: false, why: 'invalid', detail: 'token lacks the broker, label or scope claim' };
      }
      return {
        ok: true,
        principal: { clientId: payload.sub!, brokerKey: broker, label, scopes: scope.split(' ').filter(Boolean), expiresAt: payload.exp! },
      };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, why: 'expired', detail: 'token has expired; request a new one' };
      return { ok: false, why: 'invalid', detail: 'token signature, algorithm or claims are not valid' };
    }
  };
}
