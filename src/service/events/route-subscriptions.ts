/**
 * Event subscription routes of one functional group (/{group}/events/…): event types, webhook
 * registrations (create, list, token, change uri, delete), an example payload, and two routes
 * the spec does not show: the delivery journal of a registration and on-demand triggering.
 * Registrations belong to the token's tenant and white label; anyone else gets 404. A triggered
 * event reaches only the registrations of the caller's tenant and white label. Which events a
 * group serves is EVENT_GROUPS, or the dialect's `event-groups` (eventsOfGroup).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { EVENT_GROUPS, subscribeRequestSchema, type EventGroup, type EventName } from '../../contract/events.js';
import { PAGE_DEFAULTS, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../../contract/counterparty.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { readIntegerParam } from '../counterparties/query.js';
import { emitEvent } from './outbox.js';
import { exampleEnvelope, EXAMPLE_DATA } from './examples.js';
import {
  countDeliveries,
  deleteRegistration,
  deliveryPage,
  findRegistration,
  insertRegistration,
  newRegistrationId,
  listRegistrations,
  toRegistration,
  updateRegistrationUri,
  type Owner,
  type RegistrationRow,
} from './store-webhooks.js';
import { checkWebhookUri, type UriPolicy } from './uri-guard.js';
import type { Dispatcher } from './dispatcher.js';
import { parseDialect, type Dialect } from '../dialect/switches.js';

/**
 * The events a group's path serves: EVENT_GROUPS (the service's choice), or with the dialect
 * `event-groups=<group>` the lodging and the process events alike under that group, the other
 * of the two serving none (a platform that files them under one functional group).
 * @example eventsOfGroup('lodging', 'process-orchestration') // []
 */
export function eventsOfGroup(group: EventGroup, eventGroups: Dialect['eventGroups']): readonly string[] {
  if (!eventGroups || group === 'counterparty-management') return EVENT_GROUPS[group];
  return group === eventGroups ? [...EVENT_GROUPS.lodging, ...EVENT_GROUPS['process-orchestration']] : [];
}

type Params = { eventName: string; id: string };

export async function subscriptionRoutes(
  app: FastifyInstance,
  ctx: ServiceContext,
  group: EventGroup,
  dispatcher: Dispatcher,
): Promise<void> {
  const base = `/${group}/events`;
  const config = { area: 'events' as const };
  const dialect = parseDialect(ctx.config.dialect);
  const names = eventsOfGroup(group, dialect.eventGroups);
  // Decided where the id is made: an id the edge rewrote would have to be mapped back on every request.
  const opaqueIds = !!dialect.registrationIdsOpaque;
  const policy: UriPolicy = { allowPrivate: ctx.config.allowPrivateWebhooks, allowLoopback: ctx.config.allowLoopbackWebhooks };

  const eventOf = (request: FastifyRequest): EventName => {
    const { eventName } = request.params as Params;
    if (!names.includes(eventName)) {
      throw new HttpProblem(
        404,
        'UNKNOWN_EVENT_TYPE',
        `event type ${eventName} is not an event of /${group}; ${names.length ? `its events are ${names.join(', ')}` : 'it has no events'}`,
      );
    }
    return eventName as EventName;
  };
  const owner = (request: FastifyRequest): Owner => ({ brokerKey: request.principal.brokerKey, label: request.principal.label });
  const registrationOf = (request: FastifyRequest): RegistrationRow => {
    const eventName = eventOf(request);
    const { id } = request.params as Params;
    const row = findRegistration(ctx.db, owner(request), eventName, id);
    if (!row) throw new HttpProblem(404, 'NOT_FOUND', `webhook registration ${id} of event ${eventName} was not found`);
    return row;
  };
  const uriOf = async (body: unknown): Promise<string> => {
    const parsed = subscribeRequestSchema.safeParse(body);
    if (!parsed.success) {
      throw new HttpProblem(400, 'INVALID_REQUEST', 'request body: expected a JSON object {"uri": "<http(s) uri of the receiver>"}', {
        errors: [{ field: 'uri', message: 'MISSING_REQUIRED_FIELD' }],
      });
    }
    return (await checkWebhookUri(parsed.data.uri, policy)).href;
  };

  app.get(`${base}/event-types`, { config }, async () => [...names]);

  app.post(`${base}/:eventName/endpoints`, { config }, async (request, reply) => {
    const eventName = eventOf(request);
    const uri = await uriOf(request.body);
    const row = insertRegistration(ctx.db, owner(request), group, eventName, uri, newRegistrationId(opaqueIds));
    return reply.code(201).header('location', `${base}/${eventName}/endpoints/${row.id}`).send(toRegistration(row));
  });

  app.get(`${base}/:eventName/endpoints`, { config }, async (request) =>
    listRegistrations(ctx.db, owner(request), eventOf(request)).map(toRegistration),
  );

  app.get(`${base}/:eventName/token/:id`, { config }, async (request) => ({ token: registrationOf(request).token }));

  app.put(`${base}/:eventName/endpoints/:id`, { config }, async (request, reply) => {
    const row = registrationOf(request);
    updateRegistrationUri(ctx.db, row.id, await uriOf(request.body));
    dispatcher.wake();
    return reply.code(204).send();
  });

  app.delete(`${base}/:eventName/endpoints/:id`, { config }, async (request, reply) => {
    deleteRegistration(ctx.db, registrationOf(request).id);
    return reply.code(204).send();
  });

  app.get(`${base}/:eventName/example`, { config }, async (request) => exampleEnvelope(eventOf(request)));

  app.get(`${base}/:eventName/endpoints/:id/deliveries`, { config }, async (request) => {
    const row = registrationOf(request);
    const offset = readIntegerParam(request.query, 'offset', { min: 0, fallback: PAGE_DEFAULTS.offset });
    const limit = readIntegerParam(request.query, 'limit', { min: PAGE_LIMIT_MIN, max: PAGE_LIMIT_MAX, fallback: PAGE_DEFAULTS.limit });
    return ctx.db.transaction(() => ({
      items: deliveryPage(ctx.db, row.id, offset, limit).map((d) => ({
        id: d.id,
        eventId: d.event_id,
        status: d.status,
        attempts: d.attempts,
        lastStatusCode: d.last_status_code,
        lastError: d.last_error,
        lastLatencyMs: d.last_latency_ms,
        nextAttemptAt: d.status === 'pending' ? new Date(d.next_attempt_at).toISOString() : null,
        createdOn: d.created_on,
        updatedOn: d.updated_on,
        deliveredOn: d.delivered_on,
        attemptLog: d.attemptRows.map((a) => ({
          attempt: a.attempt,
          startedOn: a.started_on,
          outcome: a.outcome,
          statusCode: a.status_code,
          error: a.error,
          latencyMs: a.latency_ms,
        })),
      })),
      total: countDeliveries(ctx.db, row.id),
      offset,
      limit,
    }))();
  });

  app.post(`${base}/:eventName/trigger`, { config }, async (request, reply) => {
    const eventName = eventOf(request);
    const body = request.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw new HttpProblem(
        400,
        'INVALID_REQUEST',
        `request body: expected a JSON object (the event data) or no body, got ${Array.isArray(body) ? 'an array' : typeof body}`,
      );
    }
    const data = (body as Record<string, unknown> | undefined) ?? EXAMPLE_DATA[eventName];
    // The event carries the caller's white label, so only the caller's own registrations get it.
    // Without it the fan-out would reach every white label of the tenant, handing caller-chosen
    // data to their receivers under their X-Event-Token. Real events keep their own rule.
    const { brokerKey, label } = request.principal;
    const emitted = ctx.db.transaction(() => emitEvent(ctx.db, { brokerKey, label, eventName, data }))();
    return reply.code(202).send(emitted);
  });
}
