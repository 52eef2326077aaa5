/**
 * Example payloads of every event, served by GET /{group}/events/{event-name}/example and used
 * as the data of a triggered event sent without a body. The `data` shapes are the ones the
 * service's emitters produce (docs/events.md, docs/lodging.md).
 */
import type { EventEnvelope, EventName } from '../../contract/events.js';

const PERSON = '3f2b8c1e-5d4a-4b6f-9a7e-1c2d3e4f5a6b';
const MERGED = '8e7d6c5b-4a39-4281-9706-f5e4d3c2b1a0';
const PROCESS = '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f';
const MESSAGE = 'c4d5e6f7-0819-4a2b-8c3d-4e5f60718293';
const DEFINITION = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const STATUS_RECEIVED = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const STATUS_IN_REVIEW = '6e5d4c3b-2a19-4f8e-9d7c-6b5a49382716';

export const EXAMPLE_DATA: Record<EventName, Record<string, unknown>> = {
  'counterparty.merged': {
    survivorReferenceId: PERSON,
    mergedReferenceIds: [MERGED],
    counterpartyType: 'person',
    matchedOn: ['surname', 'initials', 'dateOfBirth'],
    source: 'import',
  },
  'counterparty_master.consolidated': {
    referenceId: PERSON,
    fields: ['firstName', 'nationalities'],
    source: 'lodging',
    previousSource: 'import',
  },
  'counterparty_operational.consolidated': {
    referenceId: PERSON,
    fields: ['addresses', 'telephoneNumbers'],
    source: 'import',
    previousSource: 'import',
  },
  'lodging.message.handling_succeeded': {
    processReferenceId: PROCESS,
    messageReferenceId: MESSAGE,
    messageType: 'CleanOrder',
    status: 'Sent',
    attachments: ['CleanOrderCounterparties.xml', 'CleanOrderFinancingRequest.xml'],
    handlingStatus: 'Succeeded',
    handledOn: '2025-01-15T09:30:00.000Z',
    counterparties: { referenceIds: [PERSON], inserted: 1, updated: 0, merged: [] },
  },
  'lodging.message.handling_failed': {
    processReferenceId: PROCESS,
    messageReferenceId: MESSAGE,
    messageType: 'CleanOrder',
    status: 'Sent',
    attachments: ['CleanOrderCounterparties.xml', 'CleanOrderFinancingRequest.xml'],
    handlingStatus: 'Failed',
    handledOn: '2025-01-15T09:30:00.000Z',
    errors: [
      {
        code: 'UNRESOLVED_REFERENCE',
        fileName: 'CleanOrderFinancingRequest.xml',
        field: 'Applicant/@counterpartyRef',
        line: 14,
        message: 'line 14: counterparty "P3" is not in CleanOrderCounterparties.xml (ids there: P1, P2)',
      },
    ],
  },
  'process.status-changed': {
    processReferenceId: PROCESS,
    processDefinitionReferenceId: DEFINITION,
    processDefinitionCode: 'CleanOrder',
    previousStatus: 'ApplicationReceived',
    previousStatusReferenceId: STATUS_RECEIVED,
    status: 'InReview',
    statusReferenceId: STATUS_IN_REVIEW,
    messageReferenceId: MESSAGE,
    reason: `message ${MESSAGE} handled`,
    externalReferences: [{ origin: 'crm', referenceId: 'A-2025-7' }],
    changedOn: '2025-01-15T09:30:00.000Z',
  },
};

/**
 * The envelope a receiver gets, with example data.
 * @example exampleEnvelope('counterparty.merged').data.survivorReferenceId
 */
export function exampleEnvelope(eventName: EventName): EventEnvelope {
  return { id: '5a1f0e2d-3c4b-4a59-8e7f-6d5c4b3a2918', eventName, occurredOn: '2025-01-15T09:30:00.000Z', data: EXAMPLE_DATA[eventName] };
}
