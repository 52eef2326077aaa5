/**
 * The bearer guard and resource ownership over EVERY route of the service, table-driven.
 *
 * The route list is taken from the running service itself: fastify's public `onRoute` hook is
 * attached to every instance this file creates (vi.mock wraps the `fastify` factory), so a route
 * somebody adds without a row in ROUTES fails the completeness test instead of going untested.
 *
 * For each route: no token, forged tokens (alg none, HS256 keyed with the public key as JWK JSON
 * and as PEM, a foreign key with its own kid, a foreign key under our kid, claims tampered under
 * the original signature, a wrong issuer, no expiry, a white label that does not exist), an
 * expired token → 401; another tenant's token → 404 for tenant-owned resources; another white
 * label's token → 404 for label-owned ones (processes, messages, webhook registrations); a token
 * without the route's domain in its scopes → 403. Every refusal is a problem body that leaks
 * nothing: no stack, no SQL, no file path, no other tenant's name or ids.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { base64url, decodeJwt, exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { call, DEMO, getToken, OTHER, SCOPED, startTestService, type TestService } from '../support/service.js';
import { createMigration, id, person, stage, stagingPath } from '../cases/migration/records.js';
import { createMessage, createProcess, LODGING, messagePath, PO } from '../service/lodging-support.js';

const seen = vi.hoisted(() => [] as Array<{ method: string; url: string }>);
vi.mock('fastify', async (importOriginal) => {
  const mod = await importOriginal<typeof import('fastify')>();
  const original = mod.default as unknown as (...args: unknown[]) => {
    addHook: (name: string, fn: (route: { method: string | string[]; url: string }) => void) => void;
  };
  const wrapped = (...args: unknown[]) => {
    const app = original(...args);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) if (method !== 'HEAD') seen.push({ method, url: route.url });
    });
    return app;
  };
  return { ...mod, default: Object.assign(wrapped, mod.default), fastify: wrapped };
});

/** Who may see what a route addresses (docs/contract-gaps.md, Authentication). */
type Owner =
  | 'public' // no token at all (the reason is in `why`)
  | 'any' // any valid token: the same answer for every tenant (catalogues, examples, own collections)
  | 'tenant' // a resource of the demo tenant: other tenants get 404
  | 'label'; // a resource of the demo tenant's white label: other tenants and labels get 404

interface Route {
  method: string;
  url: string;
  owner: Owner;
  why?: string;
  /** Concrete path (ids of the demo tenant's resources). */
  path: () => string;
  init?: () => { body?: unknown; raw?: Buffer; headers?: Record<string, string> };
}

const ctx = {} as {
  migration: string;
  job: string;
  staged: string;
  process: string;
  message: string;
  webhooks: Record<string, { event: string; id: string }>;
};
const GROUP_EVENT: Record<string, string> = {
  'counterparty-management': 'counterparty.merged',
  lodging: 'lodging.message.handling_failed',
  'process-orchestration': 'process.status-changed',
};
const V = { accept: 'application/json' };
const SEQ = { 'content-type': 'application/json-seq' };
const json =
  (body: unknown = {}) =>
  () => ({ body, headers: V });

const eventRoutes = (group: string): Route[] => {
  const base = `/${group}/events`;
  const ev = () => ctx.webhooks[group]!.event;
  const wid = () => ctx.webhooks[group]!.id;
  return [
    { method: 'GET', url: `${base}/event-types`, owner: 'any', path: () => `${base}/event-types` },
    {
      method: 'POST',
      url: `${base}/:eventName/endpoints`,
      owner: 'any',
      path: () => `${base}/${ev()}/endpoints`,
      init: json({ uri: 'http://127.0.0.1:9/hook' }),
    },
    { method: 'GET', url: `${base}/:eventName/endpoints`, owner: 'any', path: () => `${base}/${ev()}/endpoints` },
    { method: 'GET', url: `${base}/:eventName/token/:id`, owner: 'label', path: () => `${base}/${ev()}/token/${wid()}` },
    {
      method: 'PUT',
      url: `${base}/:eventName/endpoints/:id`,
      owner: 'label',
      path: () => `${base}/${ev()}/endpoints/${wid()}`,
      init: json({ uri: 'http://127.0.0.1:9/changed' }),
    },
    { method: 'DELETE', url: `${base}/:eventName/endpoints/:id`, owner: 'label', path: () => `${base}/${ev()}/endpoints/${wid()}` },
    { method: 'GET', url: `${base}/:eventName/example`, owner: 'any', path: () => `${base}/${ev()}/example` },
    {
      method: 'GET',
      url: `${base}/:eventName/endpoints/:id/deliveries`,
      owner: 'label',
      path: () => `${base}/${ev()}/endpoints/${wid()}/deliveries`,
    },
    { method: 'POST', url: `${base}/:eventName/trigger`, owner: 'any', path: () => `${base}/${ev()}/trigger`, init: json({ probe: true }) },
  ];
};

const MIG = '/migration-assistance/migrations';
const ROUTES: Route[] = [
  {
    method: 'GET',
    url: '/authentication/token/:brokerKey/:labelId',
    owner: 'public',
    why: 'token issuance takes Basic client credentials (brute force: security-auth-abuse test)',
    path: () => '/authentication/token/demo-broker/demo-label',
  },
  {
    method: 'GET',
    url: '/authentication/jwks',
    owner: 'public',
    why: 'the public keys are public by design (spec: "JWKS request: none")',
    path: () => '/authentication/jwks',
  },
  {
    method: 'GET',
    url: '/_admin/faults',
    owner: 'public',
    why: 'fault-injection admin: no token, loopback callers only (403 ADMIN_LOOPBACK_ONLY otherwise) with a loopback Host (403 ADMIN_HOST_NOT_LOOPBACK otherwise)',
    path: () => '/_admin/faults',
  },
  { method: 'PUT', url: '/_admin/faults', owner: 'public', why: 'as above', path: () => '/_admin/faults' },
  { method: 'DELETE', url: '/_admin/faults', owner: 'public', why: 'as above', path: () => '/_admin/faults' },
  { method: 'GET', url: '/_admin/faults/stats', owner: 'public', why: 'as above', path: () => '/_admin/faults/stats' },
  { method: 'DELETE', url: '/_admin/faults/stats', owner: 'public', why: 'as above', path: () => '/_admin/faults/stats' },
  { method: 'GET', url: '/_admin/faults/alterations', owner: 'public', why: 'as above', path: () => '/_admin/faults/alterations' },
  { method: 'GET', url: '/authentication/validation', owner: 'any', path: () => '/authentication/validation' },
  {
    method: 'GET',
    url: '/process-orchestration/process-definitions',
    owner: 'any',
    path: () => '/process-orchestration/process-definitions',
    init: () => ({ headers: PO }),
  },
  {
    method: 'POST',
    url: '/process-orchestration/processes',
    owner: 'any',
    path: () => '/process-orchestration/processes',
    init: () => ({ body: {}, headers: PO }),
  },
  {
    method: 'GET',
    url: '/process-orchestration/processes/:processId',
    owner: 'label',
    path: () => `/process-orchestration/processes/${ctx.process}`,
    init: () => ({ headers: PO }),
  },
  {
    method: 'PUT',
    url: '/lodging/processes/:processId/messages/:messageId',
    owner: 'label',
    path: () => messagePath(ctx.process, ctx.message),
    init: () => ({ body: { messageType: 'CleanOrder' }, headers: LODGING }),
  },
  {
    method: 'GET',
    url: '/lodging/processes/:processId/messages/:messageId',
    owner: 'label',
    path: () => messagePath(ctx.process, ctx.message),
    init: () => ({ headers: LODGING }),
  },
  {
    method: 'PUT',
    url: '/lodging/processes/:processId/messages/:messageId/attachments/*',
    owner: 'label',
    path: () => `${messagePath(ctx.process, ctx.message)}/attachments/Note.txt`,
    init: () => ({
      raw: Buffer.from(
        '--b\r\nContent-Disposition: form-data; name="mimeType"\r\n\r\ntext/plain\r\n--b\r\nContent-Disposition: form-data; name="content"; filename="Note.txt"\r\n\r\nhello\r\n--b--\r\n',
      ),
      headers: { ...LODGING, 'content-type': 'multipart/form-data; boundary=b' },
    }),
  },
  {
    method: 'PUT',
    url: '/lodging/processes/:processId/messages/:messageId/send',
    owner: 'label',
    path: () => `${messagePath(ctx.process, ctx.message)}/send`,
    init: () => ({ headers: LODGING }),
  },
  { method: 'GET', url: '/counterparty-management/counterparties', owner: 'any', path: () => '/counterparty-management/counterparties' },
  {
    method: 'GET',
    url: '/counterparty-management/counterparties/stream',
    owner: 'any',
    path: () => '/counterparty-management/counterparties/stream',
    init: () => ({ headers: { accept: 'application/jsonl' } }),
  },
  {
    method: 'PUT',
    url: '/counterparty-management/migrations/:id/staging/counterparties',
    owner: 'tenant',
    path: () => stagingPath(ctx.migration),
    init: () => ({ raw: Buffer.from(`\x1e${JSON.stringify(person(9))}\n`), headers: SEQ }),
  },
  {
    method: 'GET',
    url: '/counterparty-management/migrations/:id/staging/counterparties',
    owner: 'tenant',
    path: () => stagingPath(ctx.migration),
  },
  {
    method: 'GET',
    url: '/counterparty-management/migrations/:id/staging/counterparties/:referenceId',
    owner: 'tenant',
    path: () => `${stagingPath(ctx.migration)}/${ctx.staged}`,
  },
  {
    method: 'DELETE',
    url: '/counterparty-management/migrations/:id/staging/counterparties/:referenceId',
    owner: 'tenant',
    path: () => `${stagingPath(ctx.migration)}/${ctx.staged}`,
  },
  { method: 'POST', url: MIG, owner: 'any', path: () => MIG, init: json({ components: [] }) },
  { method: 'GET', url: `${MIG}/current`, owner: 'tenant', path: () => `${MIG}/current` },
  { method: 'GET', url: `${MIG}/:id`, owner: 'tenant', path: () => `${MIG}/${ctx.migration}` },
  { method: 'PUT', url: `${MIG}/:id/cancel`, owner: 'tenant', path: () => `${MIG}/${ctx.migration}/cancel` },
  { method: 'PUT', url: `${MIG}/:id/jobs/validate-staging`, owner: 'tenant', path: () => `${MIG}/${ctx.migration}/jobs/validate-staging` },
  { method: 'PUT', url: `${MIG}/:id/jobs/import`, owner: 'tenant', path: () => `${MIG}/${ctx.migration}/jobs/import` },
  { method: 'PUT', url: `${MIG}/:id/jobs/counts`, owner: 'tenant', path: () => `${MIG}/${ctx.migration}/jobs/counts` },
  {
    method: 'GET',
    url: `${MIG}/:id/logs/stream`,
    owner: 'tenant',
    path: () => `${MIG}/${ctx.migration}/logs/stream`,
    init: () => ({ headers: { accept: 'application/jsonl' } }),
  },
  { method: 'GET', url: '/migration-assistance/jobs/:jobId', owner: 'tenant', path: () => `/migration-assistance/jobs/${ctx.job}` },
  ...Object.keys(GROUP_EVENT).flatMap(eventRoutes),
];
const PROTECTED = ROUTES.filter((r) => r.owner !== 'public');
const OWNED = ROUTES.filter((r) => r.owner === 'tenant' || r.owner === 'label');

let svc: TestService;
const tokens = {} as Record<'demo' | 'other' | 'label2' | 'scoped', string>;
let forged: Array<[string, string]>;

/** Signs a token with the service's own key (read from its database), to vary one claim. */
async function serviceSigned(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const db = new Database(join(svc.dataDir, 'service.db'), { readonly: true });
  const row = db.prepare('SELECT kid, private_jwk FROM signing_keys').get() as { kid: string; private_jwk: string };
  db.close();
  const key = await importJWK(JSON.parse(row.private_jwk) as JWK, 'RS256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: row.kid, ...header }).sign(key);
}

beforeAll(async () => {
  svc = await startTestService();
  tokens.demo = await getToken(svc.url, DEMO);
  tokens.other = await getToken(svc.url, OTHER);
  tokens.label2 = await getToken(svc.url, { ...DEMO, label: 'demo-label-2' });
  tokens.scoped = await getToken(svc.url, SCOPED);

  // the demo tenant's resources every owned route addresses
  ctx.migration = await createMigration(svc.url, tokens.demo);
  ctx.staged = id(1);
  await stage(svc.url, tokens.demo, ctx.migration, [person(1)]);
  ctx.job = JSON.parse((await call(svc.url, tokens.demo, 'PUT', `${MIG}/${ctx.migration}/jobs/validate-staging`)).text) as string;
  ctx.process = await createProcess(svc.url, tokens.demo);
  ctx.message = await createMessage(svc.url, tokens.demo, ctx.process);
  ctx.webhooks = {};
  for (const [group, event] of Object.entries(GROUP_EVENT)) {
    const res = await call(svc.url, tokens.demo, 'POST', `/${group}/events/${event}/endpoints`, {
      body: { uri: 'http://127.0.0.1:9/hook' },
    });
    ctx.webhooks[group] = { event, id: res.body.id };
  }

  // forged and broken tokens
  const claims = decodeJwt(tokens.demo);
  const header = JSON.parse(Buffer.from(tokens.demo.split('.')[0]!, 'base64url').toString()) as { kid: string };
  const jwks = (await call(svc.url, undefined, 'GET', '/authentication/jwks')).body as JWK[];
  const publicJwk = jwks[0]!;
  const pem = await exportSPKI((await importJWK(publicJwk, 'RS256')) as CryptoKey);
  const foreign = await generateKeyPair('RS256');
  const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
  const [h, , sig] = tokens.demo.split('.');
  const now = Math.floor(Date.now() / 1000);
  forged = [
    ['alg none', `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`],
    ['alg none with our kid', `${enc({ alg: 'none', typ: 'JWT', kid: header.kid })}.${enc(claims)}.`],
    [
      'HS256 keyed with the public JWK (JSON)',
      await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: header.kid }).sign(Buffer.from(JSON.stringify(publicJwk))),
    ],
    [
      'HS256 keyed with the public key (PEM)',
      await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: header.kid }).sign(Buffer.from(pem)),
    ],
    [
      'a foreign RSA key with its own kid',
      await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'foreign-kid' }).sign(foreign.privateKey),
    ],
    [
      'a foreign RSA key under our kid',
      await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(foreign.privateKey),
    ],
    ['the broker claim changed under the original signature', `${h}.${enc({ ...claims, broker: 'other-broker' })}.${sig}`],
    ['the label claim changed under the original signature', `${h}.${enc({ ...claims, label: 'demo-label-2' })}.${sig}`],
    ['the scope claim widened under the original signature', `${h}.${enc({ ...claims, scope: `${String(claims.scope)} /_admin` })}.${sig}`],
    ['exp pushed out under the original signature', `${h}.${enc({ ...claims, exp: now + 86_400 })}.${sig}`],
    ['a signature cut off', `${h}.${enc(claims)}`],
    ['not a JWT at all', 'not-a-token'],
    ['a wrong issuer (our key)', await serviceSigned({ ...claims, iss: 'urn:somebody-else' })],
    [
      'no expiry (our key)',
      await serviceSigned({ sub: claims.sub, broker: claims.broker, label: claims.label, scope: claims.scope, iss: claims.iss }),
    ],
    ['a white label that does not exist (our key)', await serviceSigned({ ...claims, label: 'ghost-label' })],
    ['a tenant that does not exist (our key)', await serviceSigned({ ...claims, broker: 'ghost-broker' })],
    ['a scope claim that is not a string (our key)', await serviceSigned({ ...claims, scope: ['/migration-assistance'] })],
    ['expired (our key)', await serviceSigned({ ...claims, iat: now - 600, exp: now - 300 })],
    ['no kid in the header (our key)', await serviceSigned(claims, { kid: undefined })],
    ['issued 10 hours in the future (our key)', await serviceSigned({ ...claims, iat: now + 36_000 })],
  ];
}, 60_000);

afterAll(async () => svc?.dispose());

/** What a refusal body may never show. */
function expectNothingLeaked(body: unknown, text: string, who: 'none' | 'other'): void {
  expect(typeof body).toBe('object');
  const b = body as Record<string, unknown>;
  expect(Object.keys(b).every((k) => ['title', 'status', 'detail', 'code', 'instance', 'errors'].includes(k))).toBe(true);
  for (const pattern of [
    /\bat .+:\d+:\d+/,
    /SQLITE|SELECT |INSERT |UPDATE |DELETE FROM/i,
    /\/work\/|\/tmp\/|node_modules|\.ts\b|\.js\b/,
    /-----BEGIN|private_jwk|secret_hash/,
  ]) {
    expect(text).not.toMatch(pattern);
  }
  if (who === 'other') {
    // the demo tenant's name and the ids of its resources
    for (const word of ['demo-broker', 'demo-label', ctx.process, ctx.message, ...Object.values(ctx.webhooks).map((w) => w.id)]) {
      if (!b.instance || !String(b.instance).includes(word)) expect(String(b.detail)).not.toContain(word);
    }
  }
}

async function send(route: Route, token: string | undefined, extra: Record<string, string> = {}) {
  const init = route.init?.() ?? {};
  return call(svc.url, token, route.method, route.path(), { ...init, headers: { ...(init.headers ?? {}), ...extra } });
}

describe('the route table', () => {
  it('lists every route the service registers, and nothing it does not', () => {
    const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
    expect(seen.length).toBeGreaterThan(0);
    expect([...new Set(seen.map(key))].sort()).toEqual(ROUTES.map(key).sort());
  });
});

describe.each(PROTECTED.map((r) => [`${r.method} ${r.url}`, r] as const))('%s', (_name, route) => {
  it('refuses no token, a Basic header and every forged or expired token with 401, leaking nothing', async () => {
    const attempts: Array<[string, string | undefined, Record<string, string>]> = [
      ['no Authorization', undefined, {}],
      [
        'Basic credentials instead of a bearer token',
        undefined,
        { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
      ],
      ['an empty bearer', undefined, { authorization: 'Bearer ' }],
      ...forged.map(([name, t]) => [name, t, {}] as [string, string, Record<string, string>]),
    ];
    for (const [name, token, headers] of attempts) {
      const res = await send(route, token, headers);
      expect([name, res.status, res.headers.get('content-type')]).toEqual([name, 401, 'application/problem+json; charset=utf-8']);
      expect([name, res.body.code]).toEqual([
        name,
        name === 'expired (our key)'
          ? 'TOKEN_EXPIRED'
          : name.startsWith('no Authorization') || name.startsWith('Basic') || name.startsWith('an empty')
            ? 'MISSING_BEARER_TOKEN'
            : 'INVALID_TOKEN',
      ]);
      expectNothingLeaked(res.body, res.text, 'none');
    }
  });

  // scoped-client holds /counterparty-management only; validation takes any valid token
  if (route.url.startsWith('/counterparty-management') || route.url === '/authentication/validation') return;
  it('refuses a token without this domain in its scopes with 403, leaking nothing', async () => {
    const res = await send(route, tokens.scoped);
    expect([res.status, res.body.code]).toEqual([403, 'SCOPE_NOT_GRANTED']);
    expectNothingLeaked(res.body, res.text, 'none');
  });
});

describe('another tenant and another white label', () => {
  // The label-owned routes first, with the demo tenant's second label, then both kinds with the
  // other tenant; destructive routes (DELETE, cancel) are refused, so they can run in any order.
  it.each(OWNED.filter((r) => r.owner === 'label').map((r) => [`${r.method} ${r.url}`, r] as const))(
    'hides %s from another white label of the same tenant (404)',
    async (_name, route) => {
      const res = await send(route, tokens.label2);
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
      expectNothingLeaked(res.body, res.text, 'other');
    },
  );

  it.each(OWNED.map((r) => [`${r.method} ${r.url}`, r] as const))(
    'hides %s from another tenant (404, never its data)',
    async (_name, route) => {
      const res = await send(route, tokens.other);
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
      expectNothingLeaked(res.body, res.text, 'other');
    },
  );

  it('shows another tenant none of the demo tenant data on the shared collection routes', async () => {
    const lists: Array<[string, Record<string, string>]> = [
      ['/counterparty-management/events/counterparty.merged/endpoints', V],
      ['/lodging/events/lodging.message.handling_failed/endpoints', V],
      ['/process-orchestration/events/process.status-changed/endpoints', V],
    ];
    for (const [path, headers] of lists) {
      for (const t of [tokens.other, tokens.label2]) {
        const res = await call(svc.url, t, 'GET', path, { headers });
        expect([path, res.status, res.body]).toEqual([path, 200, []]);
      }
    }
    const current = await call(svc.url, tokens.other, 'GET', `${MIG}/current`);
    expect(current.status).toBe(404);
    const staged = await call(svc.url, tokens.other, 'GET', `${stagingPath(ctx.migration)}`);
    expect(staged.status).toBe(404);
  });

  it('left every demo resource as it was', async () => {
    const t = tokens.demo;
    expect((await call(svc.url, t, 'GET', `${MIG}/${ctx.migration}`)).body.activity).toBe('Active');
    expect((await call(svc.url, t, 'GET', `${stagingPath(ctx.migration)}/${ctx.staged}`)).status).toBe(200);
    expect((await call(svc.url, t, 'GET', messagePath(ctx.process, ctx.message), { headers: LODGING })).body).toMatchObject({
      status: 'Draft',
      attachments: [],
    });
    for (const [group, w] of Object.entries(ctx.webhooks)) {
      const list = (await call(svc.url, t, 'GET', `/${group}/events/${w.event}/endpoints`)).body as Array<{ id: string; uri: string }>;
      expect(list.find((r) => r.id === w.id)?.uri).toBe('http://127.0.0.1:9/hook');
    }
  });
});

describe('a random id', () => {
  it.each(OWNED.filter((r) => /\/migrations\/:id/.test(r.url)).map((r) => [`${r.method} ${r.url}`, r] as const))(
    'of a migration on %s is 404 for the owner too (nothing to tell apart)',
    async (_name, route) => {
      const res = await call(svc.url, tokens.demo, route.method, route.path().replace(ctx.migration, randomUUID()), route.init?.() ?? {});
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
    },
  );
});
