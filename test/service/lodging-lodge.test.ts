import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { WELL_KNOWN_ATTACHMENTS } from '../../src/contract/process.js';
import { definitionReferenceId } from '../../src/service/process/definitions.js';
import { lodgedReferenceId } from '../../src/service/lodging/read-application.js';
import { call, getToken, startTestService, tempDir, type TestService } from '../support/service.js';
import {
  createMessage,
  createProcess,
  LODGING,
  messagePath,
  outbox,
  PARTIES,
  PO,
  sample,
  upload,
  uploadSamples,
  waitForHandling,
} from './lodging-support.js';

let svc: TestService;
let token: string;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_FILES = [...WELL_KNOWN_ATTACHMENTS, 'EmployerStatement.pdf'];

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
});
afterAll(async () => svc?.dispose());

describe('lodging a complete application', () => {
  let pid: string;
  const mid = randomUUID();
  let sent: any;
  let handled: any;

  it('creates a Draft message with the fields of the create response', async () => {
    pid = await createProcess(svc.url, token, 'CleanOrder', [{ origin: 'crm', referenceId: 'AANVRAAG-7' }]);
    const res = await call(svc.url, token, 'PUT', messagePath(pid, mid), {
      headers: LODGING,
      body: { messageType: 'CleanOrder', ...PARTIES },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      referenceId: mid,
      messageType: 'CleanOrder',
      status: 'Draft',
      createdOn: expect.stringMatching(ISO),
      sentOn: null,
    });
  });

  it('answers a repeated identical PUT with 200 and the same message', async () => {
    const first = await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING });
    const res = await call(svc.url, token, 'PUT', messagePath(pid, mid), {
      headers: LODGING,
      body: { messageType: 'CleanOrder', ...PARTIES },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      referenceId: mid,
      messageType: 'CleanOrder',
      status: 'Draft',
      createdOn: first.body.createdOn,
      sentOn: null,
    });
  });

  it('refuses a PUT of the same message id with another body with 409 MESSAGE_ALREADY_EXISTS', async () => {
    const res = await call(svc.url, token, 'PUT', messagePath(pid, mid), {
      headers: LODGING,
      body: { messageType: 'CleanOrder', ...PARTIES, sender: { id: 'someone-else', type: 'broker' } },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'MESSAGE_ALREADY_EXISTS',
      detail: `message ${mid} already exists with other sender; choose a new message id for a new message`,
      errors: [{ field: 'sender', message: 'MESSAGE_ALREADY_EXISTS' }],
    });
  });

  it('accepts every sample file with 204', async () => {
    for (const name of ALL_FILES) {
      const res = await upload(svc.url, token, pid, mid, name, sample(name), name.endsWith('.pdf') ? 'application/pdf' : 'application/xml');
      expect([name, res.status]).toEqual([name, 204]);
    }
  });

  it('replaces an attachment uploaded again under its name while Draft, keeping its createdOn', async () => {
    const before = (await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING })).body.attachments.find(
      (a: any) => a.fileName === 'CleanOrderCovers.xml',
    );
    const res = await upload(svc.url, token, pid, mid, 'CleanOrderCovers.xml', sample('CleanOrderCovers.xml'), 'text/xml; charset=utf-8');
    expect(res.status).toBe(204);
    const after = (await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING })).body.attachments.find(
      (a: any) => a.fileName === 'CleanOrderCovers.xml',
    );
    expect(after).toEqual({ ...before, mimeType: 'text/xml', updatedOn: expect.stringMatching(ISO) });
    expect(after.updatedOn >= before.updatedOn).toBe(true);
  });

  it('sends the message: 200 with every field of the message table, status Sent', async () => {
    const res = await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/send`, {
      headers: { ...LODGING, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    sent = res.body;
    expect(Object.keys(sent)).toEqual([
      'referenceId',
      'messageType',
      'status',
      'createdOn',
      'sentOn',
      'stakeholder',
      'recipient',
      'sender',
      'updatedOn',
      'attachments',
    ]);
    expect(sent).toMatchObject({
      referenceId: mid,
      messageType: 'CleanOrder',
      status: 'Sent',
      sentOn: expect.stringMatching(ISO),
      updatedOn: sent.sentOn,
      ...PARTIES,
    });
    expect(sent.attachments).toEqual(
      [...ALL_FILES].sort().map((fileName) => ({
        fileName,
        mimeType: fileName === 'CleanOrderCovers.xml' ? 'text/xml' : fileName.endsWith('.pdf') ? 'application/pdf' : 'application/xml',
        size: sample(fileName).length,
        createdOn: expect.stringMatching(ISO),
        updatedOn: expect.stringMatching(ISO),
      })),
    );
  });

  it('handles the sent message in the background: handling succeeds and names the new counterparties', async () => {
    handled = await waitForHandling(svc.url, token, pid, mid);
    const ids = ['P1', 'P2', 'O1'].map((local) => lodgedReferenceId('demo-broker', pid, local));
    expect(handled).toEqual({
      ...sent,
      processReferenceId: pid,
      handling: { status: 'Succeeded', handledOn: expect.stringMatching(ISO), errors: [], counterpartyReferenceIds: ids },
    });
  });

  it('makes the lodged persons and organisation live counterparties of the tenant', async () => {
    const list = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=100', {
      headers: { accept: 'application/json;api-version=2025.1.0' },
    });
    const byId = new Map(list.body.items.map((i: any) => [i.referenceId, i]));
    const p1 = byId.get(lodgedReferenceId('demo-broker', pid, 'P1')) as any;
    expect(p1).toMatchObject({
      type: 'StreamingPersonCounterparty',
      salutation: 'Mrs',
      initials: 'J.M.',
      firstName: 'Johanna',
      surnamePrefix: 'van der',
      surname: 'Berg',
      sex: 'female',
      dateOfBirth: '1986-04-17',
      nationalities: ['NL'],
      emailAddress: 'johanna.vanderberg@example.nl',
      countryCode: 'NL',
      preferredCommunicationLanguage: 'nl-NL',
      income: { amount: 68400, currency: 'EUR', frequency: 'yearly' },
      telephoneNumbers: [{ type: 'mobile', number: '+31612345678' }],
      addresses: [
        {
          referenceId: lodgedReferenceId('demo-broker', pid, 'P1', 'address/1'),
          type: 'main',
          addressLine1: 'Oudegracht 148 B',
          postalCode: '3511 AZ',
          locality: 'Utrecht',
          countryCode: 'NL',
        },
      ],
      relations: [
        { to: lodgedReferenceId('demo-broker', pid, 'P2'), type: 'isSignificantOtherOf' },
        { to: lodgedReferenceId('demo-broker', pid, 'O1'), type: 'isDirectorOf' },
      ],
    });
    expect(byId.get(lodgedReferenceId('demo-broker', pid, 'P2'))).toMatchObject({
      initials: 'S.',
      surname: 'Bakker',
      nationalities: ['NL', 'DE'],
      income: { amount: 4150, currency: 'EUR', frequency: 'monthly' },
    });
    expect(byId.get(lodgedReferenceId('demo-broker', pid, 'O1'))).toMatchObject({
      type: 'StreamingOrganisationCounterparty',
      organisationName: 'Van der Berg Advies B.V.',
      cocNumber: '68750110',
      countryOfIncorporation: 'NL',
    });
  });

  it('moved the process Created → ApplicationReceived → InReview, one process.status-changed per move, with the handling event between', async () => {
    const got = await call(svc.url, token, 'GET', `/process-orchestration/processes/${pid}`, { headers: PO });
    expect(got.body.status).toEqual({ referenceId: definitionReferenceId('CleanOrder', 'InReview'), code: 'InReview', name: 'In review' });
    const events = outbox(svc.dataDir, pid);
    expect(events.map((e) => [e.eventName, e.group, e.brokerKey, e.label])).toEqual([
      ['process.status-changed', 'process-orchestration', 'demo-broker', 'demo-label'],
      ['process.status-changed', 'process-orchestration', 'demo-broker', 'demo-label'],
      ['lodging.message.handling_succeeded', 'lodging', 'demo-broker', 'demo-label'],
      ['process.status-changed', 'process-orchestration', 'demo-broker', 'demo-label'],
    ]);
    const moves = events
      .filter((e) => e.eventName === 'process.status-changed')
      .map((e) => [e.data.previousStatus, e.data.status, e.data.messageReferenceId]);
    expect(moves).toEqual([
      [null, 'Created', null],
      ['Created', 'ApplicationReceived', mid],
      ['ApplicationReceived', 'InReview', mid],
    ]);
    expect(events[3]!.data).toEqual({
      processReferenceId: pid,
      processDefinitionReferenceId: definitionReferenceId('CleanOrder'),
      processDefinitionCode: 'CleanOrder',
      previousStatus: 'ApplicationReceived',
      previousStatusReferenceId: definitionReferenceId('CleanOrder', 'ApplicationReceived'),
      status: 'InReview',
      statusReferenceId: definitionReferenceId('CleanOrder', 'InReview'),
      messageReferenceId: mid,
      reason: `message ${mid} handled`,
      externalReferences: [{ origin: 'crm', referenceId: 'AANVRAAG-7' }],
      changedOn: got.body.updatedOn,
    });
    expect(events[2]!.data).toEqual({
      processReferenceId: pid,
      messageReferenceId: mid,
      messageType: 'CleanOrder',
      status: 'Sent',
      attachments: [...ALL_FILES].sort(),
      handlingStatus: 'Succeeded',
      handledOn: handled.handling.handledOn,
      counterparties: { referenceIds: handled.handling.counterpartyReferenceIds, inserted: 3, updated: 0, merged: [] },
    });
  });

  it('answers a repeated send with 200 and the same message, and emits nothing more', async () => {
    const before = outbox(svc.dataDir).length;
    const res = await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(sent);
    expect(outbox(svc.dataDir).length).toBe(before);
  });

  it('refuses an upload to the Sent message with 409 MESSAGE_NOT_DRAFT', async () => {
    const res = await upload(svc.url, token, pid, mid, 'late.pdf', sample('EmployerStatement.pdf'), 'application/pdf');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'MESSAGE_NOT_DRAFT',
      detail: `message ${mid} is Sent; attachments can only be uploaded while it is Draft`,
    });
  });
});

describe('sending without the required attachments', () => {
  it('is refused with 409 REQUIRED_ATTACHMENTS_MISSING naming both files; nothing changes', async () => {
    const pid = await createProcess(svc.url, token);
    const mid = await createMessage(svc.url, token, pid);
    await uploadSamples(svc.url, token, pid, mid, ['CleanOrderCollaterals.xml', 'EmployerStatement.pdf']);
    const eventsBefore = outbox(svc.dataDir, pid);
    const res = await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      title: 'Conflict',
      status: 409,
      code: 'REQUIRED_ATTACHMENTS_MISSING',
      detail: `message ${mid} cannot be sent: required attachments CleanOrderFinancingRequest.xml and CleanOrderCounterparties.xml are missing; upload them first`,
      instance: `${messagePath(pid, mid)}/send`,
      errors: [
        { field: 'CleanOrderFinancingRequest.xml', message: 'REQUIRED_ATTACHMENTS_MISSING' },
        { field: 'CleanOrderCounterparties.xml', message: 'REQUIRED_ATTACHMENTS_MISSING' },
      ],
    });
    const message = await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING });
    expect(message.body).toMatchObject({ status: 'Draft', sentOn: null, handling: null });
    expect((await call(svc.url, token, 'GET', `/process-orchestration/processes/${pid}`, { headers: PO })).body.status.code).toBe(
      'Created',
    );
    expect(outbox(svc.dataDir, pid)).toEqual(eventsBefore);
  });

  it('names the one file that is missing', async () => {
    const pid = await createProcess(svc.url, token);
    const mid = await createMessage(svc.url, token, pid);
    await uploadSamples(svc.url, token, pid, mid, ['CleanOrderFinancingRequest.xml']);
    const res = await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe(
      `message ${mid} cannot be sent: required attachment CleanOrderCounterparties.xml is missing; upload it first`,
    );
  });
});

describe('handling that fails', () => {
  it('emits handling_failed with the file, line and element of each problem, moves the process to HandlingFailed and creates no counterparties', async () => {
    const pid = await createProcess(svc.url, token);
    const mid = await createMessage(svc.url, token, pid);
    await uploadSamples(svc.url, token, pid, mid, ['CleanOrderCounterparties.xml', 'CleanOrderCollaterals.xml']);
    // Valid against the XSD, but the applicant P3 does not exist and the parts do not add up.
    const request = sample('CleanOrderFinancingRequest.xml')
      .toString()
      .replace('counterpartyRef="P2"', 'counterpartyRef="P3"')
      .replace('<TotalLoanAmount currency="EUR">380000.00', '<TotalLoanAmount currency="EUR">390000.00');
    expect((await upload(svc.url, token, pid, mid, 'CleanOrderFinancingRequest.xml', request, 'application/xml')).status).toBe(204);
    // Metadata of a document that is not attached.
    expect(
      (
        await upload(
          svc.url,
          token,
          pid,
          mid,
          'DocumentManagementFileDocuments.xml',
          sample('DocumentManagementFileDocuments.xml'),
          'application/xml',
        )
      ).status,
    ).toBe(204);
    expect((await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING })).status).toBe(200);

    const handled = await waitForHandling(svc.url, token, pid, mid);
    const errors = [
      {
        code: 'UNRESOLVED_REFERENCE',
        fileName: 'CleanOrderFinancingRequest.xml',
        field: 'Applicant/@counterpartyRef',
        line: 14,
        message: 'line 14: counterparty "P3" is not in CleanOrderCounterparties.xml (ids there: P1, P2, O1)',
      },
      {
        code: 'INVALID_FIELD_VALUE',
        fileName: 'CleanOrderFinancingRequest.xml',
        field: 'TotalLoanAmount',
        line: 39,
        message: "line 39: TotalLoanAmount 390000.00 is not the sum of the loan parts' principals (380000.00)",
      },
      {
        code: 'UNRESOLVED_REFERENCE',
        fileName: 'DocumentManagementFileDocuments.xml',
        field: 'Document/FileName',
        line: 4,
        message: 'line 4: document "EmployerStatement.pdf" is not attached to this message',
      },
    ];
    expect(handled.handling).toEqual({ status: 'Failed', handledOn: expect.stringMatching(ISO), errors, counterpartyReferenceIds: [] });

    const events = outbox(svc.dataDir, pid);
    expect(events.map((e) => e.eventName)).toEqual([
      'process.status-changed',
      'process.status-changed',
      'lodging.message.handling_failed',
      'process.status-changed',
    ]);
    expect(events[2]!.data).toEqual({
      processReferenceId: pid,
      messageReferenceId: mid,
      messageType: 'CleanOrder',
      status: 'Sent',
      attachments: [
        'CleanOrderCollaterals.xml',
        'CleanOrderCounterparties.xml',
        'CleanOrderFinancingRequest.xml',
        'DocumentManagementFileDocuments.xml',
      ],
      handlingStatus: 'Failed',
      handledOn: handled.handling.handledOn,
      errors,
    });
    expect([events[3]!.data.previousStatus, events[3]!.data.status]).toEqual(['ApplicationReceived', 'HandlingFailed']);
    expect((await call(svc.url, token, 'GET', `/process-orchestration/processes/${pid}`, { headers: PO })).body.status.code).toBe(
      'HandlingFailed',
    );

    const list = await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=100', {
      headers: { accept: 'application/json;api-version=2025.1.0' },
    });
    expect(list.body.items.some((i: any) => i.referenceId === lodgedReferenceId('demo-broker', pid, 'P1'))).toBe(false);
  });
});

describe('handling after a restart', () => {
  it('resumes a message that was sent but not handled when the service stopped', async () => {
    const dataDir = tempDir('stagecoach-lodging-restart-');
    const first = await startTestService({ dataDir });
    const t1 = await getToken(first.url);
    const pid = await createProcess(first.url, t1);
    const mid = await createMessage(first.url, t1, pid);
    await uploadSamples(first.url, t1, pid, mid);
    await first.close();
    // The state a crash right after the send transaction leaves behind.
    const db = new Database(join(dataDir, 'service.db'));
    db.prepare(`UPDATE lodging_messages SET status = 'Sent', sent_on = ?, handling_status = 'Pending' WHERE reference_id = ?`).run(
      new Date().toISOString(),
      mid,
    );
    db.close();

    const again = await startTestService({ dataDir });
    try {
      const t2 = await getToken(again.url);
      const handled = await waitForHandling(again.url, t2, pid, mid);
      expect(handled.handling.status).toBe('Succeeded');
      expect(outbox(dataDir, pid).filter((e) => e.eventName === 'lodging.message.handling_succeeded')).toHaveLength(1);
      const list = await call(again.url, t2, 'GET', '/counterparty-management/counterparties?limit=100', {
        headers: { accept: 'application/json;api-version=2025.1.0' },
      });
      expect(list.body.items.filter((i: any) => handled.handling.counterpartyReferenceIds.includes(i.referenceId))).toHaveLength(3);
    } finally {
      await again.dispose();
    }
  });
});
