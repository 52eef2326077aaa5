import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { definitionReferenceId } from '../../src/service/process/definitions.js';
import { call, DEMO, getToken, OTHER, startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let token: string;
const PO = { accept: 'application/json;api-version=2026.1.0' };
const CLEAN_ORDER = definitionReferenceId('CleanOrder');

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
});
afterAll(async () => svc?.dispose());

function outbox(eventName: string): Array<{ broker_key: string; label_id: string; data: Record<string, unknown> }> {
  const db = new Database(join(svc.dataDir, 'service.db'), { readonly: true });
  try {
    const rows = db
      .prepare('SELECT broker_key, label_id, payload FROM event_outbox WHERE event_name = ? ORDER BY seq')
      .all(eventName) as Array<{ broker_key: string; label_id: string; payload: string }>;
    return rows.map((r) => ({ broker_key: r.broker_key, label_id: r.label_id, data: JSON.parse(r.payload) }));
  } finally {
    db.close();
  }
}

const codesOf = (body: Array<{ code: string }>) => body.map((d) => d.code);

describe('process definitions', () => {
  it('lists the whole catalogue as an array when no filter is given', async () => {
    const res = await call(svc.url, token, 'GET', '/process-orchestration/process-definitions', { headers: PO });
    expect(res.status).toBe(200);
    expect(codesOf(res.body)).toEqual(['CleanOrder', 'BridgingLoanOrder', 'LegacyOrder', 'ChangeOrder', 'RedemptionOrder']);
  });

  it('shows the CleanOrder definition with names in two locales and its statuses', async () => {
    const res = await call(svc.url, token, 'GET', '/process-orchestration/process-definitions?types=LoanOrigination&codes=CleanOrder', {
      headers: PO,
    });
    expect(res.status).toBe(200);
    const status = (code: string, name: string, isActive = true) => ({
      referenceId: definitionReferenceId('CleanOrder', code),
      code,
      name,
      isActive,
    });
    expect(res.body).toEqual([
      {
        referenceId: CLEAN_ORDER,
        type: 'LoanOrigination',
        code: 'CleanOrder',
        name: { 'nl-NL': 'Hypotheekaanvraag', 'en-GB': 'Mortgage application' },
        isActive: true,
        statuses: [
          status('Created', 'Created'),
          status('ApplicationReceived', 'Application received'),
          status('InReview', 'In review'),
          status('HandlingFailed', 'Handling failed'),
          status('Approved', 'Approved'),
          status('Rejected', 'Rejected'),
          status('Withdrawn', 'Withdrawn'),
          status('OfferIssued', 'Offer issued', false),
        ],
        updatedOn: '2026-01-05T08:00:00.000Z',
      },
    ]);
  });

  it('filters by type, inactive definitions included', async () => {
    const res = await call(svc.url, token, 'GET', '/process-orchestration/process-definitions?types=LoanOrigination', { headers: PO });
    expect(codesOf(res.body)).toEqual(['CleanOrder', 'BridgingLoanOrder', 'LegacyOrder']);
    expect(res.body.map((d: { isActive: boolean }) => d.isActive)).toEqual([true, true, false]);
  });

  it('takes several values comma-separated, repeated, or both, ignoring case and blanks', async () => {
    const comma = await call(svc.url, token, 'GET', '/process-orchestration/process-definitions?codes=ChangeOrder,RedemptionOrder', {
      headers: PO,
    });
    expect(codesOf(comma.body)).toEqual(['ChangeOrder', 'RedemptionOrder']);
    const repeated = await call(
      svc.url,
      token,
      'GET',
      '/process-orchestration/process-definitions?types=redemption&types=LoanModification,&codes=',
      { headers: PO },
    );
    expect(codesOf(repeated.body)).toEqual(['ChangeOrder', 'RedemptionOrder']);
  });

  it('answers an empty array when nothing matches', async () => {
    const res = await call(
      svc.url,
      token,
      'GET',
      '/process-orchestration/process-definitions?types=LoanOrigination&codes=RedemptionOrder',
      { headers: PO },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('refuses an api-version the group does not serve', async () => {
    const res = await call(svc.url, token, 'GET', '/process-orchestration/process-definitions', {
      headers: { accept: 'application/json;api-version=2022.1.0' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNSUPPORTED_API_VERSION');
  });

  it('seeds again without error on a restart and keeps the same referenceIds', async () => {
    const dataDir = tempDir('stagecoach-po-restart-');
    const first = await startTestService({ dataDir });
    await first.close();
    const again = await startTestService({ dataDir });
    try {
      const t = await getToken(again.url);
      const res = await call(again.url, t, 'GET', '/process-orchestration/process-definitions?codes=CleanOrder', { headers: PO });
      expect(res.body.map((d: { referenceId: string }) => d.referenceId)).toEqual([CLEAN_ORDER]);
    } finally {
      await again.dispose();
    }
  });
});

describe('process creation', () => {
  it('creates a process in status Created and emits process.status-changed for it', async () => {
    const externalReferences = [{ origin: 'crm', referenceId: 'AANVRAAG-2026-0042' }];
    const res = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: { processDefinitionReferenceId: CLEAN_ORDER, externalReferences },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['referenceId']);
    const id = res.body.referenceId as string;
    expect(res.headers.get('location')).toBe(`/process-orchestration/processes/${id}`);

    const got = await call(svc.url, token, 'GET', `/process-orchestration/processes/${id}`, { headers: PO });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      referenceId: id,
      processDefinitionReferenceId: CLEAN_ORDER,
      type: 'LoanOrigination',
      code: 'CleanOrder',
      status: { referenceId: definitionReferenceId('CleanOrder', 'Created'), code: 'Created', name: 'Created' },
      externalReferences,
      createdOn: expect.any(String),
      updatedOn: got.body.createdOn,
    });

    const events = outbox('process.status-changed').filter((e) => e.data.processReferenceId === id);
    expect(events).toEqual([
      {
        broker_key: 'demo-broker',
        label_id: 'demo-label',
        data: {
          processReferenceId: id,
          processDefinitionReferenceId: CLEAN_ORDER,
          processDefinitionCode: 'CleanOrder',
          previousStatus: null,
          previousStatusReferenceId: null,
          status: 'Created',
          statusReferenceId: definitionReferenceId('CleanOrder', 'Created'),
          messageReferenceId: null,
          externalReferences,
          changedOn: got.body.createdOn,
        },
      },
    ]);
  });

  it('defaults externalReferences to an empty list', async () => {
    const res = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: { processDefinitionReferenceId: definitionReferenceId('ChangeOrder') },
    });
    expect(res.status).toBe(201);
    const got = await call(svc.url, token, 'GET', `/process-orchestration/processes/${res.body.referenceId}`, { headers: PO });
    expect(got.body).toMatchObject({ code: 'ChangeOrder', type: 'LoanModification', externalReferences: [], status: { code: 'Created' } });
  });

  it('refuses an unknown definition with 422 UNKNOWN_PROCESS_DEFINITION', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const res = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: { processDefinitionReferenceId: unknown, externalReferences: [] },
    });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({
      title: 'Unprocessable content',
      status: 422,
      detail: `processDefinitionReferenceId ${unknown} names no process definition; GET /process-orchestration/process-definitions lists them`,
      code: 'UNKNOWN_PROCESS_DEFINITION',
      instance: '/process-orchestration/processes',
      errors: [{ field: 'processDefinitionReferenceId', message: 'UNKNOWN_PROCESS_DEFINITION' }],
    });
  });

  it('refuses an inactive definition with 422 PROCESS_DEFINITION_INACTIVE', async () => {
    const res = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: { processDefinitionReferenceId: definitionReferenceId('LegacyOrder') },
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('PROCESS_DEFINITION_INACTIVE');
    expect(res.body.detail).toBe(
      `process definition LegacyOrder (${definitionReferenceId('LegacyOrder')}) is not active; no new processes can be started from it`,
    );
  });

  it('refuses a body without a definition id, or with malformed external references, naming the fields', async () => {
    const res = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: { externalReferences: [{ origin: 'crm' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
    expect(res.body.errors.map((e: { field: string; message: string }) => [e.field, e.message])).toEqual([
      ['processDefinitionReferenceId', 'MISSING_REQUIRED_FIELD'],
      ['externalReferences.0.referenceId', 'MISSING_REQUIRED_FIELD'],
    ]);
    const notJson = await call(svc.url, token, 'POST', '/process-orchestration/processes', { headers: PO });
    expect(notJson.status).toBe(400);
    expect(notJson.body.detail).toBe('process creation body: expected a JSON object, got no body');
  });

  it('hides a process from other tenants and from other white labels of the same tenant', async () => {
    const created = await call(svc.url, token, 'POST', '/process-orchestration/processes', {
      headers: PO,
      body: { processDefinitionReferenceId: CLEAN_ORDER },
    });
    const path = `/process-orchestration/processes/${created.body.referenceId}`;
    const otherTenant = await getToken(svc.url, OTHER);
    const otherLabel = await getToken(svc.url, { ...DEMO, label: 'demo-label-2' });
    for (const t of [otherTenant, otherLabel]) {
      const res = await call(svc.url, t, 'GET', path, { headers: PO });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', detail: `process ${created.body.referenceId} was not found` });
    }
    expect((await call(svc.url, token, 'GET', path, { headers: PO })).status).toBe(200);
  });

  it('answers 404 for an id that is not a UUID', async () => {
    const res = await call(svc.url, token, 'GET', '/process-orchestration/processes/not-a-uuid', { headers: PO });
    expect(res.status).toBe(404);
  });
});
