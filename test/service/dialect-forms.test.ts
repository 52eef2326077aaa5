/**
 * `serve --dialect` switches of issue 42, over raw HTTP (no stagecoach client): a platform that
 * writes the same data in other forms (UUIDs in upper case, NFD text, dates in another ISO 8601
 * form, amounts as strings, empty arrays left out, ordinal and week timestamps), one with a
 * proxy's size limit (413 with an HTML page), one that redirects (307/308), one that labels a
 * bodiless 204 with a content coding; and the service's own choice since issue 39: it shows what
 * it was sent, filling in no country or language unless `country=derived` says so.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, getToken, startTestService, type TestService } from '../support/service.js';
import { createMigration, frames, id, MEDIA_SEQ, person, runJob, stage, stagingPath } from '../cases/migration/records.js';
import { parseDialect } from '../../src/service/dialect/index.js';
import { readIsoDateTime } from '../../src/contract/iso8601.js';

const services: TestService[] = [];
afterAll(async () => {
  for (const s of services.splice(0)) await s.dispose();
});
const STREAM = '/counterparty-management/counterparties/stream';

async function serviceWith(dialect?: string): Promise<{ url: string; token: string }> {
  const svc = await startTestService(dialect ? { dialect } : {});
  services.push(svc);
  return { url: svc.url, token: await getToken(svc.url) };
}

const jsonl = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Persons 1 (with a country, a language, an accent) and 2 (without either) staged and imported. */
async function imported(url: string, token: string) {
  const m = await createMigration(url, token);
  await stage(url, token, m, [
    person(1, { firstName: 'Zoë', countryCode: 'PL', preferredCommunicationLanguage: 'pl-PL' }),
    person(2, { firstName: 'Inès', addresses: undefined }),
  ]);
  await runJob(url, token, m, 'validate-staging');
  await runJob(url, token, m, 'import');
  const streamed = jsonl((await call(url, token, 'GET', STREAM, { headers: { accept: 'application/jsonl' } })).text);
  const byId = (n: number) => streamed.find((c) => String(c.referenceId).toLowerCase() === id(n))!;
  return { m, streamed, one: byId(1), two: byId(2) };
}

describe('the service shows what it was sent (issue 39)', () => {
  it('streams a record sent without countryCode and preferredCommunicationLanguage without them; country=derived fills them in', async () => {
    const own = await serviceWith();
    const { one, two } = await imported(own.url, own.token);
    expect(one).toMatchObject({ countryCode: 'PL', preferredCommunicationLanguage: 'pl-PL' });
    expect(two).not.toHaveProperty('countryCode');
    expect(two).not.toHaveProperty('preferredCommunicationLanguage');
    const derived = await serviceWith('country=derived');
    const filled = await imported(derived.url, derived.token);
    expect(filled.one).toMatchObject({ countryCode: 'PL', preferredCommunicationLanguage: 'pl-PL' });
    expect(filled.two).toMatchObject({ countryCode: 'NL', preferredCommunicationLanguage: 'nl-NL' });
  });
});

describe('the same data in other forms', () => {
  it('uuids=upper, text=nfd, dates=basic, amounts=string: every id upper case, text decomposed, 19800101, "3000.00"; ids read back in any case', async () => {
    const { url, token } = await serviceWith('uuids=upper,text=nfd,dates=basic,amounts=string');
    const m = await createMigration(url, token);
    expect(m).toMatch(/^[0-9A-F-]{36}$/);
    // the staging results name the records in upper case
    const results = await stage(url, token, m, [person(1, { firstName: 'Zoë' })]);
    expect(results).toEqual([{ referenceId: id(1).toUpperCase(), isSuccessful: true, errors: [] }]);
    // the platform takes its ids back in any case: the migration by its upper-case id, the job likewise
    expect((await call(url, token, 'GET', `/migration-assistance/migrations/${m}`)).status).toBe(200);
    expect((await call(url, token, 'GET', `/migration-assistance/migrations/${m.toLowerCase()}`)).status).toBe(200);
    await runJob(url, token, m, 'validate-staging');
    await runJob(url, token, m, 'import');
    const got = jsonl((await call(url, token, 'GET', STREAM, { headers: { accept: 'application/jsonl' } })).text).find(
      (c) => c.referenceId === id(1).toUpperCase(),
    )!;
    expect(got).toMatchObject({
      firstName: 'Zoe\u0308',
      dateOfBirth: '19800101',
      income: { amount: '3000.00', currency: 'EUR', frequency: 'Monthly' },
    });
    expect((got.addresses as Array<{ referenceId: string }>)[0]!.referenceId).toBe(id(1, 'aaaaaaaa').toUpperCase());
    expect(got.firstName).not.toBe('Zoë');
  });

  it('uuids=upper-stream: upper case in streamed counterparties only; dates=ordinal and dates=week', async () => {
    for (const [dialect, date] of [
      ['uuids=upper-stream,dates=ordinal', '1980-001'],
      ['uuids=upper-stream,dates=week', '1980-W01-2'],
    ] as const) {
      const { url, token } = await serviceWith(dialect);
      const m = await createMigration(url, token);
      expect(m).toMatch(/^[0-9a-f-]{36}$/);
      expect(await stage(url, token, m, [person(1)])).toEqual([{ referenceId: id(1), isSuccessful: true, errors: [] }]);
      await runJob(url, token, m, 'validate-staging');
      await runJob(url, token, m, 'import');
      const streamed = jsonl((await call(url, token, 'GET', STREAM, { headers: { accept: 'application/jsonl' } })).text);
      expect(streamed.find((c) => c.referenceId === id(1).toUpperCase())).toMatchObject({ dateOfBirth: date });
      const page = (await call(url, token, 'GET', '/counterparty-management/counterparties?limit=100')).body.items as Array<{
        referenceId: string;
      }>;
      expect(page.map((c) => c.referenceId)).toContain(id(1));
    }
  });

  it('empty-arrays=omitted: a job result without its empty arrays; timestamps=ordinal / week: every timestamp in that form, the same instant', async () => {
    for (const form of ['ordinal', 'week'] as const) {
      const { url, token } = await serviceWith(`empty-arrays=omitted,timestamps=${form}`);
      const m = await createMigration(url, token);
      await stage(url, token, m, [person(1)]);
      const validated = await runJob(url, token, m, 'validate-staging');
      expect(validated).toMatchObject({ jobType: 'ValidateStaging', isValid: true });
      expect(validated).not.toHaveProperty('errors');
      const logs = jsonl(
        (await call(url, token, 'GET', `/migration-assistance/migrations/${m}/logs/stream`, { headers: { accept: 'application/jsonl' } }))
          .text,
      );
      const stamp = String(logs[0]!.timestamp);
      expect(stamp).toMatch(form === 'ordinal' ? /^\d{4}-\d{3}T/ : /^\d{4}-W\d{2}-\dT/);
      expect(Math.abs(Date.parse(readIsoDateTime(stamp)!) - Date.now())).toBeLessThan(60_000);
    }
  });
});

describe('what stands in front of a platform', () => {
  it('upload-limit=16k: an upload over the limit is refused 413 with a proxy’s HTML page, one under it is staged', async () => {
    const { url, token } = await serviceWith('upload-limit=16k');
    const m = await createMigration(url, token);
    const big = frames(
      'json-seq',
      Array.from({ length: 60 }, (_, i) => person(i + 1)),
    );
    expect(Buffer.byteLength(big)).toBeGreaterThan(16 * 1024);
    const refused = await call(url, token, 'PUT', stagingPath(m), { raw: big, headers: { 'content-type': MEDIA_SEQ, accept: MEDIA_SEQ } });
    expect(refused.status).toBe(413);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(refused.text).toContain('<title>413 Request Entity Too Large</title>');
    expect(await stage(url, token, m, [person(1)])).toHaveLength(1);
  });

  it('redirects=307 / 308: every GET and PUT answered with a redirect to the same resource elsewhere, which then answers', async () => {
    for (const status of [307, 308] as const) {
      const { url, token } = await serviceWith(`redirects=${status}`);
      const auth = { authorization: `Bearer ${token}` };
      const first = await fetch(`${url}/migration-assistance/migrations/current`, { headers: auth, redirect: 'manual' });
      expect(first.status).toBe(status);
      const location = first.headers.get('location')!;
      expect(location).toBe('/_moved/migration-assistance/migrations/current');
      expect((await fetch(new URL(location, url), { headers: auth, redirect: 'manual' })).status).toBe(404); // no current migration yet
      const m = await createMigration(url, token); // POST: not redirected
      const put = await fetch(`${url}${stagingPath(m)}`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': MEDIA_SEQ, accept: MEDIA_SEQ },
        body: frames('json-seq', [person(1)]),
        redirect: 'manual',
      });
      expect(put.status).toBe(status);
      // the body sent again to where it points is staged
      const again = await fetch(new URL(put.headers.get('location')!, url), {
        method: 'PUT',
        headers: { ...auth, 'content-type': MEDIA_SEQ, accept: MEDIA_SEQ },
        body: frames('json-seq', [person(1)]),
      });
      expect(again.status).toBe(200);
      expect(await again.text()).toContain(id(1));
    }
  });

  it('empty-coding=gzip: a bodiless 204 labelled Content-Encoding gzip', async () => {
    const { url, token } = await serviceWith('empty-coding=gzip');
    const m = await createMigration(url, token);
    await stage(url, token, m, [person(1)]);
    const res = await fetch(`${url}${stagingPath(m)}/${id(1)}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(204);
    expect(res.headers.get('content-encoding')).toBe('gzip');
  });

  it('parses each new switch and the presets that combine them', () => {
    expect(parseDialect('all-ninth')).toMatchObject({
      uuids: 'upper',
      textNfd: true,
      dates: 'basic',
      amountsString: true,
      emptyArraysOmitted: true,
      uploadLimit: 64 * 1024,
      redirects: 307,
      timestamps: 'ordinal',
      emptyCoded: true,
      countryDerived: true,
    });
    expect(parseDialect('all-tenth')).toMatchObject({
      uuids: 'upper-stream',
      dates: 'week',
      uploadLimit: 16 * 1024,
      redirects: 308,
      timestamps: 'week',
    });
    expect(() => parseDialect('upload-limit=2k')).toThrow('expected upload-limit=16k|64k|1m');
  });
});
