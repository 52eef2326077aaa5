/**
 * Event subscriptions and deliveries. Which functional group owns which events: the spec names
 * counterparty-management; the groups of lodging and process events are not shown and are our
 * choice (docs/contract-gaps.md): `lodging` and `process-orchestration`.
 */
import { z } from 'zod';
import { closestName } from './closest-name.js';

export const EVENT_GROUPS = {
  'counterparty-management': ['counterparty.merged', 'counterparty_operational.consolidated', 'counterparty_master.consolidated'],
  lodging: ['lodging.message.handling_succeeded', 'lodging.message.handling_failed'],
  'process-orchestration': ['process.status-changed'],
} as const;
export type EventGroup = keyof typeof EVENT_GROUPS;
export type EventName = (typeof EVENT_GROUPS)[EventGroup][number];

export function groupOfEvent(name: string): EventGroup | undefined {
  for (const [group, names] of Object.entries(EVENT_GROUPS)) if ((names as readonly string[]).includes(name)) return group as EventGroup;
  return undefined;
}

/** Every event name, in the order of EVENT_GROUPS. */
export const EVENT_NAMES: readonly EventName[] = Object.values(EVENT_GROUPS).flat();

/**
 * Why a name is no event name: the closest one and the whole list, for the message of a misspelt one.
 * @example unknownEventReason('counterparty.merge') // '"counterparty.merge" is not an event name (did you mean counterparty.merged?); the event names are …'
 */
export function unknownEventReason(name: string): string {
  const near = closestName(name, EVENT_NAMES);
  return `${JSON.stringify(name.slice(0, 100))} is not an event name${near ? ` (did you mean ${near}?)` : ''}; the event names are ${EVENT_NAMES.join(', ')}`;
}

export const webhookRegistrationSchema = z.object({
  id: z.string(),
  eventName: z.string(),
  createdOn: z.string(),
  token: z.string(),
  uri: z.string(),
});
export type WebhookRegistration = z.infer<typeof webhookRegistrationSchema>;

export const subscribeRequestSchema = z.object({ uri: z.string().min(1) });

/** What a webhook receives in the POST body (shape not shown by the spec: ours). */
export const eventEnvelopeSchema = z.object({
  id: z.string(), // stable across retries: receivers drop duplicates by it
  eventName: z.string(),
  occurredOn: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

export const EVENT_TOKEN_HEADER = 'x-event-token';

/** Members of an event's data that are timestamps (docs/events.md, docs/lodging.md): receivers read them in any ISO 8601 form. */
export const EVENT_DATA_TIMESTAMPS: Readonly<Partial<Record<string, readonly string[]>>> = {
  'process.status-changed': ['changedOn'],
  'lodging.message.handling_succeeded': ['handledOn'],
  'lodging.message.handling_failed': ['handledOn'],
};
