/**
 * Example payloads of every event, served by GET /{group}/events/{event-name}/example and used
 * as the data of a triggered event sent without a body. The `data` shapes are the ones the
 * service's emitters produce (docs/events.md).
 */
import type { EventEnvelope, EventName } from '../../contract/events.js';

const PERSON = '3f2b8c1e-5d4a-4b6f-9a7e-1c2d3e4f5a6b';
const MERGED = '8e7d6c5b-4a39-4281-9706-f5e4d3c2b1a0';
const PROCESS = '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f';
const MESSAGE = 'c4d5e6f7-0819-4a2b-8c3d-4e5f60718293';

export const EXAMPLE_DATA: Record<EventName, Record<string, unknown>> = {
  'counterparty.merged': {
    survivorReferenceId: PERSON,
    mergedReferenceIds: [MERGED],
    counterpartyType: 'person',
    matchedOn: ['surname', 'initials', 'dateOfBirth'],
    source: 'import',
  },
  'counterparty_master.consolidated': { referenceId: PERSON, fields: ['firstName', 'nationalities'], source: 'lodging', previousSource: 'import' },
  'counterparty_operational.consolidated': { referenceId: PERSON, fields: ['addresses', 'telephoneNumbers'], source: 'import', previousSource: 'import' },
  'lodging.message.handling_succeeded': {
    processReferenceId: PROCESS,
    messageReferenceId: MESSAGE,
    messageType: 'CleanOrder',
    status: 'Sent',
  },
  'lodging.message.handling_failed': {
    processReferenceId: PROCESS,
    messageReferenceId: MESSAGE,
    messageType: 'CleanOrder',
    status: 'Sent',
    errors: [{ code: 'ATTACHMENT_SCHEMA_VIOLATION', message: 'CleanOrderFinancingRequest.xml:12: element Amount: not a decimal' }],
  },
  'process.status-changed': {
    processReferenceId: PROCESS,
    previousStatus: 'Received',
    status: 'InProgress',
  },
};

/**
 * The envelope a receiver gets, with example data.
 * @example exampleEnvelope('counterparty.merged').data.survivorReferenceId
 */
export function exampleEnvelope(eventName: EventName): EventEnvelope {
  return { id: '5a1f0e2d-3c4b-4a59-8e7f-6d5c4b3a2918', eventName, occurredOn: '2025-01-15T09:30:00.000Z', data: EXAMPLE_DATA[eventName] };
}
