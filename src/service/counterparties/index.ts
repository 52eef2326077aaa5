/**
 * Counterparty management, live side: the paged list and the stream of the tenant's live
 * counterparties (staging belongs to the migration work). The store they read is `store.ts`,
 * which imports and lodging write through.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { createCounterpartyTables } from './store.js';
import { seedDemoCounterparties } from './seed.js';
import { listRoute } from './route-list.js';
import { streamRoute } from './route-stream.js';

export async function registerCounterparties(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  createCounterpartyTables(ctx.db);
  seedDemoCounterparties(ctx.db);
  await listRoute(app, ctx);
  await streamRoute(app, ctx);
}
