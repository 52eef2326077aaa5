import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/service/store/database.js';
import { upsertLiveCounterparties } from '../../src/service/counterparties/store.js';
import { seedReferenceId } from '../../src/service/counterparties/seed.js';
import type { StagedCounterparty } from '../../src/contract/migration.js';
import { call, getToken, OTHER, startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let token: string;
const JSON_2025 = { accept: 'application/json;api-version=2025.1.0' };
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  // 145 more counterparties for demo-broker, written as an import would (own connection, WAL).
  const db = openDatabase(svc.dataDir);
  const records = Array.from(
    { length: 145 },
    (_, i) => ({ referenceId: id(i + 1), type: 'person', initials: 'T', surname: `Test${i + 1}` }) as StagedCounterparty,
  );
  db.transaction(() => upsertLiveCounterparties(db, 'demo-broker', records, 'import'))();
  db.close();
});
afterAll(async () => svc?.dispose());

describe('counterparty list', () => {
  it('answers the first page with the default limit and the envelope of the spec', async () => {
    const res = await call(svc.url, token, 'GET', '/counterparty-management/counterparties', { headers: JSON_2025 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['items', 'total', 'offset', 'limit']);
    expect(res.body).toMatchObject({ total: 150, offset: 0, limit: 20 });
    expect(res.body.items).toHaveLength(20);
    expect(res.body.items.map((i: { sequenceNumber: number }) => i.sequenceNumber)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('shows counterparties in the streamed shape, the seeded demo persons first', async () => {
    const res = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1', { headers: JSON_2025 });
    expect(res.body.items[0]).toEqual({
      sequenceNumber: 1,
      type: 'StreamingPersonCounterparty',
      referenceId: seedReferenceId('demo-broker', 'person/ada'),
      associatedParties: [],
      // no country or language of its own stored: none shown (the service shows what it was sent, issue 39)
      telephoneNumbers: [{ type: 'mobile', number: '+31600000001' }],
      relations: [{ to: seedReferenceId('demo-broker', 'person/bram'), type: 'isSignificantOtherOf' }],
      lifecycleStatus: 'counterparty',
      nationalities: ['NL'],
      salutation: 'Mrs',
      initials: 'A.',
      firstName: 'Ada',
      surname: 'Seedling',
      sex: 'female',
      dateOfBirth: '1971-03-14',
      income: { amount: 64000, currency: 'EUR', frequency: 'yearly' },
      emailAddress: 'ada.seedling@example.org',
      addresses: [
        {
          referenceId: seedReferenceId('demo-broker', 'address/ada'),
          type: 'main',
          addressLine1: 'Demostraat 1',
          postalCode: '1000 AA',
          locality: 'Amsterdam',
          countryCode: 'NL',
        },
      ],
    });
  });

  it('pages with offset and limit up to the last partial page', async () => {
    const res = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?offset=100&limit=100', { headers: JSON_2025 });
    expect(res.body).toMatchObject({ total: 150, offset: 100, limit: 100 });
    expect(res.body.items.map((i: { sequenceNumber: number }) => i.sequenceNumber)).toEqual(Array.from({ length: 50 }, (_, i) => i + 101));
    const beyond = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?offset=1000', { headers: JSON_2025 });
    expect(beyond.body).toEqual({ items: [], total: 150, offset: 1000, limit: 20 });
  });

  it.each([
    ['limit=0', 'limit', '"0"', 'an integer from 1 to 100'],
    ['limit=101', 'limit', '"101"', 'an integer from 1 to 100'],
    ['limit=1.5', 'limit', '"1.5"', 'an integer from 1 to 100'],
    ['limit=abc', 'limit', '"abc"', 'an integer from 1 to 100'],
    ['limit=', 'limit', '""', 'an integer from 1 to 100'],
    ['offset=-1', 'offset', '"-1"', 'an integer ≥ 0'],
    ['offset=abc', 'offset', '"abc"', 'an integer ≥ 0'],
    ['offset=1.5', 'offset', '"1.5"', 'an integer ≥ 0'],
    ['offset=1&offset=2', 'offset', '2 values ("1", "2")', 'an integer ≥ 0'],
  ])('refuses %s with 400 naming the parameter and value', async (query, name, shown, expected) => {
    const res = await call(svc.url, token, 'GET', `/counterparty-management/counterparties?${query}`, { headers: JSON_2025 });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({
      status: 400,
      code: 'INVALID_QUERY_PARAMETER',
      detail: `query parameter ${name}: expected ${expected}, got ${shown}`,
      errors: [{ field: name, message: 'INVALID_QUERY_PARAMETER' }],
    });
  });

  it('shows each tenant only its own counterparties', async () => {
    const other = await getToken(svc.url, OTHER);
    const res = await call(svc.url, other, 'GET', '/counterparty-management/counterparties?limit=100', { headers: JSON_2025 });
    expect(res.body.total).toBe(5);
    expect(res.body.items.map((i: { referenceId: string }) => i.referenceId)).toContain(
      seedReferenceId('other-broker', 'organisation/bakery'),
    );
    expect(res.body.items.map((i: { referenceId: string }) => i.referenceId)).not.toContain(
      seedReferenceId('demo-broker', 'organisation/bakery'),
    );
  });

  it('refuses an api-version the counterparty API does not serve', async () => {
    const res = await call(svc.url, token, 'GET', '/counterparty-management/counterparties', {
      headers: { accept: 'application/json;api-version=2024.1.0' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNSUPPORTED_API_VERSION');
  });
});
