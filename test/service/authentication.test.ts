import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, base64url, decodeJwt } from 'jose';
import { createHmac } from 'node:crypto';
import { basic, call, DEMO, getToken, OTHER, SCOPED, startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ tokenTtlSeconds: 60 });
});
afterAll(async () => svc?.dispose());

describe('token issuance', () => {
  it('issues an RS256 JWT with a kid for valid Basic credentials', async () => {
    const res = await call(svc.url, undefined, 'GET', '/authentication/token/demo-broker/demo-label', {
      headers: { authorization: basic('demo-client', 'demo-secret') },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 60 });
    const header = JSON.parse(Buffer.from(res.body.access_token.split('.')[0], 'base64url').toString());
    expect(header.alg).toBe('RS256');
    expect(typeof header.kid).toBe('string');
    expect(decodeJwt(res.body.access_token)).toMatchObject({ sub: 'demo-client', broker: 'demo-broker', label: 'demo-label' });
  });

  it('answers a bare JWT when asked for application/jwt', async () => {
    const res = await call(svc.url, undefined, 'GET', '/authentication/token/demo-broker/demo-label', {
      headers: { authorization: basic('demo-client', 'demo-secret'), accept: 'application/jwt' },
    });
    expect(res.status).toBe(200);
    expect(res.text.split('.')).toHaveLength(3);
  });

  it('refuses wrong credentials with 401 and the spec title', async () => {
    const res = await call(svc.url, undefined, 'GET', '/authentication/token/demo-broker/demo-label', {
      headers: { authorization: basic('demo-client', 'nope') },
    });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ title: 'Unauthorized', status: 401, code: 'INVALID_CLIENT_CREDENTIALS' });
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers 404 for a broker key and label the client does not have', async () => {
    for (const path of [
      '/authentication/token/no-broker/demo-label',
      '/authentication/token/demo-broker/nope',
      '/authentication/token/other-broker/other-label',
    ]) {
      const res = await call(svc.url, undefined, 'GET', path, { headers: { authorization: basic('demo-client', 'demo-secret') } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ title: 'Not found', status: 404, code: 'UNKNOWN_TENANT_OR_LABEL' });
    }
    const scoped = await call(svc.url, undefined, 'GET', '/authentication/token/demo-broker/demo-label-2', {
      headers: { authorization: basic('scoped-client', 'scoped-secret') },
    });
    expect(scoped.status).toBe(404);
  });

  it('answers 400 for an api-version the authentication API does not serve', async () => {
    const res = await call(svc.url, undefined, 'GET', '/authentication/token/demo-broker/demo-label', {
      headers: { authorization: basic('demo-client', 'demo-secret'), accept: 'application/json;api-version=2019.1.0' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ title: 'Bad request', status: 400, code: 'UNSUPPORTED_API_VERSION' });
  });
});

describe('JWKS and validation', () => {
  it('publishes the keys as an array with X-Supported-Versions', async () => {
    const res = await call(svc.url, undefined, 'GET', '/authentication/jwks');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body[0]).toMatchObject({ kty: 'RSA', e: 'AQAB', alg: 'RS256', use: 'sig' });
    expect(res.headers.get('x-supported-versions')).toBe('2022.1.0,2024.1.0,2025.1.0,2026.1.0');
  });

  it('validates a good token and refuses a tampered one with the spec title', async () => {
    const token = await getToken(svc.url);
    expect((await call(svc.url, token, 'GET', '/authentication/validation')).status).toBe(200);
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${base64url.encode(JSON.stringify({ ...claims, broker: 'other-broker' }))}.${s}`;
    const res = await call(svc.url, forged, 'GET', '/authentication/validation');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ title: 'Service unavailable', status: 401, code: 'INVALID_TOKEN' });
  });
});

describe('the bearer guard', () => {
  it('refuses a request without a token', async () => {
    const res = await call(svc.url, undefined, 'GET', '/authentication/validation');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('MISSING_BEARER_TOKEN');
  });

  it('refuses alg none and HS256 keyed with the public key', async () => {
    const token = await getToken(svc.url);
    const claims = decodeJwt(token);
    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(claims))}.`;
    expect((await call(svc.url, none, 'GET', '/authentication/validation')).status).toBe(401);
    const jwks = (await call(svc.url, undefined, 'GET', '/authentication/jwks')).body;
    const hsKey = Buffer.from(JSON.stringify(jwks[0]));
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: jwks[0].kid }).sign(hsKey);
    expect((await call(svc.url, hs, 'GET', '/authentication/validation')).status).toBe(401);
    // and one HMAC-signed by hand over the PEM-less modulus, the classic confusion attack
    const input = `${base64url.encode(JSON.stringify({ alg: 'HS256', kid: jwks[0].kid }))}.${base64url.encode(JSON.stringify(claims))}`;
    const sig = createHmac('sha256', jwks[0].n).update(input).digest('base64url');
    expect((await call(svc.url, `${input}.${sig}`, 'GET', '/authentication/validation')).status).toBe(401);
  });

  it('refuses an expired token with TOKEN_EXPIRED', async () => {
    const short = await startTestService({ tokenTtlSeconds: 1 });
    try {
      const token = await getToken(short.url);
      await new Promise((r) => setTimeout(r, 2100));
      const res = await call(short.url, token, 'GET', '/authentication/validation');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('TOKEN_EXPIRED');
    } finally {
      await short.dispose();
    }
  });

  it('refuses a domain outside the token scopes with 403', async () => {
    const token = await getToken(svc.url, SCOPED);
    const res = await call(svc.url, token, 'GET', '/migration-assistance/migrations/current');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('SCOPE_NOT_GRANTED');
    expect((await call(svc.url, token, 'GET', '/authentication/validation')).status).toBe(200);
  });

  it('gives every tenant its own token', async () => {
    const other = await getToken(svc.url, OTHER);
    expect(decodeJwt(other)).toMatchObject({ broker: 'other-broker', label: 'other-label' });
    expect(decodeJwt(await getToken(svc.url, DEMO)).broker).toBe('demo-broker');
  });

  it('slows brute force on the token endpoint with 429 and Retry-After', async () => {
    const headers = { authorization: basic('other-client', 'guess') };
    let last = 0;
    for (let i = 0; i < 11; i++)
      last = (await call(svc.url, undefined, 'GET', '/authentication/token/other-broker/other-label', { headers })).status;
    expect(last).toBe(429);
    const res = await call(svc.url, undefined, 'GET', '/authentication/token/other-broker/other-label', {
      headers: { authorization: basic('other-client', 'other-secret') },
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
