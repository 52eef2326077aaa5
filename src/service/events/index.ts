/**
 * Events and webhooks: subscription routes for every functional group that owns events
 * (EVENT_GROUPS), and the dispatcher that delivers the event outbox to the registrations.
 */
import type { FastifyInstance } from 'fastify';
import { EVENT_GROUPS, type EventGroup } from '../../contract/events.js';
import type { ServiceContext } from '../context.js';
import { createWebhookTables } from './store-webhooks.js';
import { startDispatcher } from './dispatcher.js';
import { subscriptionRoutes } from './route-subscriptions.js';

export async function registerEvents(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  createWebhookTables(ctx.db);
  const dispatcher = startDispatcher(ctx);
  for (const group of Object.keys(EVENT_GROUPS) as EventGroup[]) await subscriptionRoutes(app, ctx, group, dispatcher);
}
