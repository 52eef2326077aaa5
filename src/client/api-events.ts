/**
 * client.events: event types, webhook registrations (one per event name), tokens, examples, and
 * the embedded service's delivery journal and trigger. The group path of an event is the one
 * given, else the documented one (EVENT_GROUPS). The specification does not show which group
 * owns the lodging and process events, so when that path answers 404 the client asks each known
 * group which events it serves (`GET /{group}/events/event-types`) and goes on under the group
 * that lists the event, for the rest of the client's life (docs/contract-gaps.md).
 */
import { z } from 'zod';
import { EVENT_GROUPS, groupOfEvent, unknownEventReason, webhookRegistrationSchema, type WebhookRegistration } from '../contract/events.js';
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
  /** The group path each event name was found under (confirmed by the platform's event types). */
  const served = new Map<string, string>();

  /**
   * The group under which the platform serves an event the documented group answered 404 for:
   * the first known group whose event types list it (the documented one first), or undefined
   * when that is the documented one (the 404 was about something else) or none lists it.
   */
  const discover = async (eventName: string, tried: string, signal?: AbortSignal): Promise<string | undefined> => {
    for (const group of [tried, ...Object.keys(EVENT_GROUPS).filter((g) => g !== tried)]) {
      const types = await api.eventTypes(group, { signal }).catch(() => [] as string[]);
      if (!types.includes(eventName)) continue;
      served.set(eventName, group);
      return group === tried ? undefined : group;
    }
    return undefined;
  };

  /** Runs a request on the event's path (`/{group}/events/{event}`), moving to the group that serves it on a 404. */
  const onEventPath = async <T>(eventName: string, opts: Opts, request: (base: string) => Promise<T>): Promise<T> => {
    const known = opts.group ?? served.get(eventName);
    const group = known ?? groupFor(eventName);
    const base = (g: string) => `/${g}/events/${seg(eventName)}`;
    try {
      return await request(base(group));
    } catch (err) {
      if (known || !(err instanceof ClientError) || err.status !== 404) throw err;
      const other = await discover(eventName, group, opts.signal);
      if (!other) throw err;
      return request(base(other));
    }
  };

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
      const res = await onEventPath(eventName, opts, (base) =>
        transport.json<unknown>({
          method: 'POST',
          path: `${base}/endpoints`,
          area: 'events',
          body: JSON.stringify({ uri }),
          contentType: 'application/json',
          signal: opts.signal,
        }),
      );
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
      const res = await onEventPath(eventName, opts, (base) =>
        transport.json<unknown>({ method: 'GET', path: `${base}/endpoints`, area: 'events', signal: opts.signal }),
      );
      const listed = parseWith(z.array(registrationSchema), res.body, 'webhook registrations');
      if (!opts.tokens) return listed;
      const withTokens: Registration[] = [];
      for (const reg of listed) withTokens.push(reg.token ? reg : { ...reg, token: await api.token(eventName, reg.id, opts) });
      return withTokens;
    },
    /** The token of a registration (the service sends it as X-Event-Token). */
    async token(eventName: string, id: string, opts: Opts = {}): Promise<string> {
      const res = await onEventPath(eventName, opts, (base) =>
        transport.json<unknown>({ method: 'GET', path: `${base}/token/${seg(id)}`, area: 'events', signal: opts.signal }),
      );
      if (typeof res.body === 'string') return res.body;
      return parseWith(z.looseObject({ token: z.string() }), res.body, 'webhook token').token;
    },
    /** Points a registration at another uri. */
    async update(eventName: string, id: string, uri: string, opts: Opts = {}): Promise<void> {
      await onEventPath(eventName, opts, (base) =>
        transport.text({
          method: 'PUT',
          path: `${base}/endpoints/${seg(id)}`,
          area: 'events',
          body: JSON.stringify({ uri }),
          contentType: 'application/json',
          signal: opts.signal,
        }),
      );
    },
    /** Deletes a registration (a 404 after a retry means an earlier attempt did it). */
    async unsubscribe(eventName: string, id: string, opts: Opts = {}): Promise<void> {
      try {
        await onEventPath(eventName, opts, (base) =>
          transport.text({ method: 'DELETE', path: `${base}/endpoints/${seg(id)}`, area: 'events', signal: opts.signal }),
        );
      } catch (err) {
        if (err instanceof ClientError && err.status === 404 && err.attempts > 1) return;
        throw err;
      }
    },
    /** A sample payload of the event (shape not shown by the spec: returned as is). */
    async example(eventName: string, opts: Opts = {}): Promise<unknown> {
      const res = await onEventPath(eventName, opts, (base) =>
        transport.json<unknown>({ method: 'GET', path: `${base}/example`, area: 'events', signal: opts.signal }),
      );
      return res.body;
    },
    /** Delivery journal of a registration (embedded service only). */
    async deliveries(
      eventName: string,
      id: string,
      opts: Opts & { offset?: number; limit?: number } = {},
    ): Promise<z.infer<typeof deliveryPageSchema>> {
      const res = await onEventPath(eventName, opts, (base) =>
        transport.json<unknown>({
          method: 'GET',
          path: `${base}/endpoints/${seg(id)}/deliveries`,
          query: { offset: opts.offset, limit: opts.limit },
          area: 'events',
          signal: opts.signal,
        }),
      );
      return parseWith(deliveryPageSchema, readPage(res.body, opts), 'delivery page');
    },
    /** Emits an event now, with the given data or the example's (embedded service only; POST: not retried). */
    async trigger(eventName: string, data?: Record<string, unknown>, opts: Opts = {}): Promise<Record<string, unknown>> {
      const res = await onEventPath(eventName, opts, (base) =>
        transport.json<unknown>({
          method: 'POST',
          path: `${base}/trigger`,
          area: 'events',
          ...(data ? { body: JSON.stringify(data) } : {}),
          contentType: 'application/json',
          signal: opts.signal,
        }),
      );
      return (res.body ?? {}) as Record<string, unknown>;
    },
  };
  return api;
}
