/**
 * client.events: event types, webhook registrations (one per event name), tokens, examples, and
 * the embedded service's delivery journal and trigger. The group path of an event is found
 * from EVENT_GROUPS unless given.
 */
import { z } from 'zod';
import { groupOfEvent, unknownEventReason, webhookRegistrationSchema, type WebhookRegistration } from '../contract/events.js';
import { StagecoachError } from '../contract/errors.js';
import { ClientError } from './errors.js';
import { parseWith, readPage } from './tolerant.js';
import { seg, type Transport } from './transport.js';

type Opts = { signal?: AbortSignal; group?: string };

// Tolerant: the platform's registration may lack createdOn, or omit the token in lists.
const registrationSchema = webhookRegistrationSchema.extend({ createdOn: z.string().optional(), token: z.string().optional() }).loose();
export type Registration = z.infer<typeof registrationSchema>;

export const deliverySchema = z.looseObject({
  id: z.union([z.string(), z.number()]),
  eventId: z.string(),
  status: z.string(),
  attempts: z.number(),
});
export type Delivery = z.infer<typeof deliverySchema>;
const deliveryPageSchema = z.object({ items: z.array(deliverySchema), total: z.number(), offset: z.number(), limit: z.number() });

function groupFor(eventName: string, given?: string): string {
  const group = given ?? groupOfEvent(eventName);
  if (!group)
    throw new StagecoachError(
      'UNKNOWN_EVENT_TYPE',
      `${unknownEventReason(eventName)} (for an event of another functional group, pass { group }, e.g. 'counterparty-management')`,
    );
  return group;
}

export function eventsApi(transport: Transport) {
  const base = (eventName: string, group?: string) => `/${groupFor(eventName, group)}/events/${seg(eventName)}`;
  const api = {
    /** @example await client.events.eventTypes('counterparty-management') // ['counterparty.merged', …] */
    async eventTypes(group: string, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `/${group}/events/event-types`,
        area: 'events',
        signal: opts.signal,
      });
      return parseWith(z.array(z.string()), res.body, 'event types');
    },
    /**
     * Registers a webhook uri for one event name (POST: not retried); the result carries its token.
     * @example const reg = await client.events.subscribe('counterparty.merged', 'https://hooks.example/cp');
     */
    async subscribe(eventName: string, uri: string, opts: Opts = {}): Promise<WebhookRegistration> {
      const res = await transport.json<unknown>({
        method: 'POST',
        path: `${base(eventName, opts.group)}/endpoints`,
        area: 'events',
        body: JSON.stringify({ uri }),
        contentType: 'application/json',
        signal: opts.signal,
      });
      return parseWith(
        webhookRegistrationSchema.extend({ createdOn: z.string().optional() }).loose(),
        res.body,
        'webhook registration',
      ) as WebhookRegistration;
    },
    /**
     * Registrations of one event name. With `tokens`, each one the platform listed without its
     * token (the spec does not show the list's items) gets it from the token endpoint.
     */
    async list(eventName: string, opts: Opts & { tokens?: boolean } = {}): Promise<Registration[]> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `${base(eventName, opts.group)}/endpoints`,
        area: 'events',
        signal: opts.signal,
      });
      const listed = parseWith(z.array(registrationSchema), res.body, 'webhook registrations');
      if (!opts.tokens) return listed;
      const withTokens: Registration[] = [];
      for (const reg of listed) withTokens.push(reg.token ? reg : { ...reg, token: await api.token(eventName, reg.id, opts) });
      return withTokens;
    },
    /** The token of a registration (the service sends it as X-Event-Token). */
    async token(eventName: string, id: string, opts: Opts = {}): Promise<string> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `${base(eventName, opts.group)}/token/${seg(id)}`,
        area: 'events',
        signal: opts.signal,
      });
      if (typeof res.body === 'string') return res.body;
      return parseWith(z.looseObject({ token: z.string() }), res.body, 'webhook token').token;
    },
    /** Points a registration at another uri. */
    async update(eventName: string, id: string, uri: string, opts: Opts = {}): Promise<void> {
      await transport.text({
        method: 'PUT',
        path: `${base(eventName, opts.group)}/endpoints/${seg(id)}`,
        area: 'events',
        body: JSON.stringify({ uri }),
        contentType: 'application/json',
        signal: opts.signal,
      });
    },
    /** Deletes a registration (a 404 after a retry means an earlier attempt did it). */
    async unsubscribe(eventName: string, id: string, opts: Opts = {}): Promise<void> {
      try {
        await transport.text({
          method: 'DELETE',
          path: `${base(eventName, opts.group)}/endpoints/${seg(id)}`,
          area: 'events',
          signal: opts.signal,
        });
      } catch (err) {
        if (err instanceof ClientError && err.status === 404 && err.attempts > 1) return;
        throw err;
      }
    },
    /** A sample payload of the event (shape not shown by the spec: returned as is). */
    async example(eventName: string, opts: Opts = {}): Promise<unknown> {
      return (
        await transport.json<unknown>({
          method: 'GET',
          path: `${base(eventName, opts.group)}/example`,
          area: 'events',
          signal: opts.signal,
        })
      ).body;
    },
    /** Delivery journal of a registration (embedded service only). */
    async deliveries(
      eventName: string,
      id: string,
      opts: Opts & { offset?: number; limit?: number } = {},
    ): Promise<z.infer<typeof deliveryPageSchema>> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `${base(eventName, opts.group)}/endpoints/${seg(id)}/deliveries`,
        query: { offset: opts.offset, limit: opts.limit },
        area: 'events',
        signal: opts.signal,
      });
      return parseWith(deliveryPageSchema, readPage(res.body, opts), 'delivery page');
    },
    /** Emits an event now, with the given data or the example's (embedded service only; POST: not retried). */
    async trigger(eventName: string, data?: Record<string, unknown>, opts: Opts = {}): Promise<Record<string, unknown>> {
      const res = await transport.json<unknown>({
        method: 'POST',
        path: `${base(eventName, opts.group)}/trigger`,
        area: 'events',
        ...(data ? { body: JSON.stringify(data) } : {}),
        contentType: 'application/json',
        signal: opts.signal,
      });
      return (res.body ?? {}) as Record<string, unknown>;
    },
  };
  return api;
}
