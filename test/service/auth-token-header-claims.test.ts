/**
 * The service's token verifier against tokens signed with its own key that break one rule the
 * signature cannot: no `kid` in the header, and an `iat` in the future beyond the clock skew
 * (issue 41). Tokens within the skew, and the tokens the service issues, still pass.
 */
import Database from 'better-sqlite3';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../src/service/auth/keys.js';
import { CLOCK_SKEW_SECONDS, createVerifier, issueToken, TOKEN_ISSUER } from '../../src/service/auth/tokens.js';

const keys = await loadSigningKeys(new Database(':memory:'));
const verify = createVerifier(keys);
const now = () => Math.floor(Date.now() / 1000);
const claims = { sub: 'demo-client', broker: 'demo-broker', label: 'demo-label', scope: '/migration-assistance' };

function signed(header: Record<string, unknown>, iat: number): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', ...header })
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(now() + 3600)
    .sign(keys.privateKey);
}

describe('token header and issue time', () => {
  it('accepts the tokens the service issues', async () => {
    const token = await issueToken(keys, { sub: 'demo-client', broker: 'demo-broker', label: 'demo-label', scopes: ['/x'] }, 60);
    expect(await verify(token)).toMatchObject({ ok: true });
  });

  it('refuses a token signed with the service key but naming no kid', async () => {
    expect(await verify(await signed({}, now()))).toMatchObject({ ok: false, why: 'invalid' });
    expect(await verify(await signed({ kid: '' }, now()))).toMatchObject({ ok: false, why: 'invalid' });
    expect(await verify(await signed({ kid: keys.kid }, now()))).toMatchObject({ ok: true });
  });

  it('refuses a token issued in the future beyond the clock skew, and accepts one within it', async () => {
    const kid = keys.kid;
    expect(await verify(await signed({ kid }, now() + 10 * 3600))).toMatchObject({ ok: false, why: 'invalid' });
    expect(await verify(await signed({ kid }, now() + CLOCK_SKEW_SECONDS + 30))).toMatchObject({ ok: false, why: 'invalid' });
    expect(await verify(await signed({ kid }, now() + CLOCK_SKEW_SECONDS - 30))).toMatchObject({ ok: true });
  });

  it('refuses a token without iat', async () => {
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: keys.kid })
      .setIssuer(TOKEN_ISSUER)
      .setExpirationTime(now() + 3600)
      .sign(keys.privateKey);
    expect(await verify(token)).toMatchObject({ ok: false, why: 'invalid' });
  });
});
