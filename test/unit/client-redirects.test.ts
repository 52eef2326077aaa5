/**
 * Redirects and bodiless answers, against a scripted node:http server (issue 42): a GET follows
 * 301/302/303/307/308 a bounded number of times and to the base URL's origin only unless another
 * is allowed; a PUT follows only 307/308, sending its body again; a 204 labelled with a content
 * coding is read as the empty answer it is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type ClientError, type ClientOptions, type StagecoachClient } from '../../src/client/index.js';

const servers: Server[] = [];
const clients: StagecoachClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((r) => {
          s.closeAllConnections();
          s.close(r);
        }),
    ),
  );
});

const MIGRATION = {
  referenceId: '11111111-1111-4111-8111-111111111111',
  stagingStatus: 'Pending',
  importStatus: 'Pending',
  numberOfStagedEntities: 0,
  numberOfImportedEntities: 0,
  activity: 'Active',
  components: [],
};
const TOKEN = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url')}.c2ln`;

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

/** A server answering the token route itself and everything else with `route`; what it was sent. */
async function server(route: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.url!.startsWith('/authentication/token/')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 300 }));
        return;
      }
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
      route(req, res, body);
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
}

function client(url: string, extra: Partial<ClientOptions> = {}): StagecoachClient {
  const c = createClient({
    baseUrl: url,
    clientId: 'id',
    clientSecret: 's',
    brokerKey: 'b',
    labelReferenceId: 'l',
    retry: { retries: 1, baseDelayMs: 5 },
    ...extra,
  });
  clients.push(c);
  return c;
}
const failure = (p: Promise<unknown>): Promise<ClientError> =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as ClientError,
  );
const json = (res: ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

describe('redirects', () => {
  it.each([301, 302, 303, 307, 308])('a GET follows %i, path and query kept by the Location, the token sent along', async (status) => {
    const f = await server((req, res) => {
      if (req.url!.startsWith('/v2/')) return json(res, MIGRATION);
      res.writeHead(status, { location: `/v2${req.url}` }).end('moved');
    });
    expect(await client(f.url).migrations.get(MIGRATION.referenceId)).toMatchObject({ referenceId: MIGRATION.referenceId });
    expect(f.seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', `/migration-assistance/migrations/${MIGRATION.referenceId}`],
      ['GET', `/v2/migration-assistance/migrations/${MIGRATION.referenceId}`],
    ]);
    expect(f.seen[1]!.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('stops after redirects.max hops in a row, saying so in one line', async () => {
    const f = await server((req, res) => res.writeHead(307, { location: `${req.url}x` }).end());
    const err = await failure(client(f.url, { redirects: { max: 3 } }).migrations.get(MIGRATION.referenceId));
    expect(err.message).toMatch(
      /^GET \/migration-assistance\/migrations\/[\w-]+ was redirected \(307\) to .*: more than 3 redirects in a row, not followed \(client option redirects\.max\)$/,
    );
    expect(f.seen).toHaveLength(4);
  });

  it('goes to another origin only when allowed, and without the token', async () => {
    const elsewhere = await server((_req, res) => json(res, MIGRATION));
    const f = await server((req, res) => res.writeHead(308, { location: `${elsewhere.url}${req.url}` }).end());
    const err = await failure(client(f.url).migrations.get(MIGRATION.referenceId));
    expect(err.message).toContain(`another origin than ${f.url}, not followed (allow it with the client option redirects.allowedOrigins)`);
    expect(elsewhere.seen).toHaveLength(0);
    const allowed = client(f.url, { redirects: { allowedOrigins: [elsewhere.url] } });
    expect(await allowed.migrations.get(MIGRATION.referenceId)).toMatchObject({ referenceId: MIGRATION.referenceId });
    expect(elsewhere.seen).toHaveLength(1);
    expect(elsewhere.seen[0]!.authorization).toBeUndefined();
  });

  it.each([307, 308])('a PUT follows %i with the same body sent again', async (status) => {
    const f = await server((req, res, body) => {
      if (!req.url!.startsWith('/v2/')) return res.writeHead(status, { location: `/v2${req.url}` }).end();
      const ids = body
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { referenceId: string }).referenceId);
      res
        .writeHead(200, { 'content-type': 'application/jsonl' })
        .end(ids.map((id) => `${JSON.stringify({ referenceId: id, isSuccessful: true, errors: [] })}\n`).join(''));
    });
    const body = `${JSON.stringify({ referenceId: 'a1', type: 'person' })}\n${JSON.stringify({ referenceId: 'a2', type: 'person' })}\n`;
    const results = await client(f.url).migrations.stageCounterparties(MIGRATION.referenceId, new TextEncoder().encode(body), {
      format: 'jsonl',
    });
    expect(results.map((r) => r.referenceId)).toEqual(['a1', 'a2']);
    expect(f.seen.map((s) => [s.method, s.body])).toEqual([
      ['PUT', body],
      ['PUT', body],
    ]);
  });

  it.each([301, 302, 303])('a PUT does not follow %i (it would become a GET): the status is the error', async (status) => {
    const f = await server((req, res) => res.writeHead(status, { location: `/v2${req.url}` }).end());
    const err = await failure(client(f.url).migrations.cancel(MIGRATION.referenceId));
    expect(err.status).toBe(status);
    expect(f.seen.map((s) => s.url)).toEqual([`/migration-assistance/migrations/${MIGRATION.referenceId}/cancel`]);
  });
});

describe('a bodiless answer labelled with a content coding', () => {
  it('reads a 204 with Content-Encoding gzip as done, once (it was retried 28 times, each applied)', async () => {
    const f = await server((_req, res) => res.writeHead(204, { 'content-encoding': 'gzip' }).end());
    await client(f.url).events.update('counterparty.merged', 'wh-1', 'http://127.0.0.1:9/hook');
    expect(f.seen).toHaveLength(1);
  });
});
