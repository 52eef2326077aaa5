import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, getToken, OTHER, startTestService, type TestService } from '../support/service.js';
import { createMigration } from '../cases/migration/records.js';

let svc: TestService;
let token: string;
let otherToken: string;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  otherToken = await getToken(svc.url, OTHER);
});
afterAll(async () => svc?.dispose());

const MIGRATIONS = '/migration-assistance/migrations';

describe('migration registration', () => {
  it('registers a migration with every status Pending, counters 0 and activity Active', async () => {
    const res = await call(svc.url, token, 'POST', MIGRATIONS, { body: { components: ['Counterparties', 'Collaterals'] } });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const phase = { stagingStatus: 'Pending', importStatus: 'Pending', numberOfStagedEntities: 0, numberOfImportedEntities: 0 };
    expect(res.body).toEqual({
      referenceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...phase,
      activity: 'Active',
      components: [
        { component: 'Counterparties', ...phase },
        { component: 'Collaterals', ...phase },
      ],
    });
    const got = await call(svc.url, token, 'GET', `${MIGRATIONS}/${res.body.referenceId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const current = await call(svc.url, token, 'GET', `${MIGRATIONS}/current`);
    expect(current.status).toBe(200);
    expect(current.body).toEqual(res.body);

    // one active migration per tenant
    const second = await call(svc.url, token, 'POST', MIGRATIONS, { body: { components: ['Counterparties'] } });
    expect(second.status).toBe(409);
    expect(second.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(second.body).toMatchObject({
      status: 409,
      code: 'MIGRATION_ALREADY_ACTIVE',
      detail: `migration ${res.body.referenceId} of this tenant is still Active; complete it (import) or cancel it (PUT /migration-assistance/migrations/${res.body.referenceId}/cancel) before registering a new one`,
    });

    // cancel: final, and the tenant may register a new one
    const canceled = await call(svc.url, token, 'PUT', `${MIGRATIONS}/${res.body.referenceId}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toEqual({ ...res.body, activity: 'Canceled' });
    expect((await call(svc.url, token, 'PUT', `${MIGRATIONS}/${res.body.referenceId}/cancel`)).body.activity).toBe('Canceled');
    const none = await call(svc.url, token, 'GET', `${MIGRATIONS}/current`);
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('NOT_FOUND');
    for (const job of ['validate-staging', 'import', 'counts']) {
      const refused = await call(svc.url, token, 'PUT', `${MIGRATIONS}/${res.body.referenceId}/jobs/${job}`);
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('MIGRATION_NOT_ACTIVE');
    }
    const refusedValidation = await call(svc.url, token, 'PUT', `${MIGRATIONS}/${res.body.referenceId}/jobs/validate-staging`);
    expect(refusedValidation.body.detail).toBe(
      `cannot validate: migration ${res.body.referenceId} was canceled, which is final; register a new migration (POST /migration-assistance/migrations) to continue`,
    );
    const next = await createMigration(svc.url, token);
    expect(next).not.toBe(res.body.referenceId);
    await call(svc.url, token, 'PUT', `${MIGRATIONS}/${next}/cancel`);
  });

  it('refuses a body without known components with 400 naming the field', async () => {
    const res = await call(svc.url, token, 'POST', MIGRATIONS, { body: { components: ['Counterparties', 'Loans'] } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
    expect(res.body.errors).toEqual([{ field: 'components.1', message: 'INVALID_FIELD_VALUE' }]);
    expect(res.body.detail).toBe(
      'migration request: expected {"components": [one or more of Counterparties, Collaterals, FinancingSolutions, FinancingExecutions, Administrate]}, got {"components":["Counterparties","Loans"]}',
    );
    expect((await call(svc.url, token, 'POST', MIGRATIONS, { body: { components: [] } })).status).toBe(400);
  });
});

describe('tenant isolation', () => {
  it('hides a migration, its staging and its jobs from another tenant (404)', async () => {
    const mine = await createMigration(svc.url, token);
    const theirs = await createMigration(svc.url, otherToken);
    expect((await call(svc.url, otherToken, 'GET', `${MIGRATIONS}/${mine}`)).status).toBe(404);
    expect((await call(svc.url, otherToken, 'PUT', `${MIGRATIONS}/${mine}/cancel`)).status).toBe(404);
    expect((await call(svc.url, otherToken, 'PUT', `${MIGRATIONS}/${mine}/jobs/validate-staging`)).status).toBe(404);
    expect((await call(svc.url, otherToken, 'GET', `/counterparty-management/migrations/${mine}/staging/counterparties`)).status).toBe(404);
    expect((await call(svc.url, otherToken, 'GET', `${MIGRATIONS}/current`)).body.referenceId).toBe(theirs);
    const job = await call(svc.url, token, 'PUT', `${MIGRATIONS}/${mine}/jobs/validate-staging`);
    expect(job.status).toBe(200);
    const seen = await call(svc.url, otherToken, 'GET', `/migration-assistance/jobs/${job.body}`);
    expect(seen.status).toBe(404);
    expect(seen.body.detail).toBe(`job ${job.body} was not found`);
    await call(svc.url, token, 'PUT', `${MIGRATIONS}/${mine}/cancel`);
    await call(svc.url, otherToken, 'PUT', `${MIGRATIONS}/${theirs}/cancel`);
  });
});
