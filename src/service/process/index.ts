/**
 * Process orchestration: the seeded catalogue of process definitions and the processes a
 * tenant starts from them. Lodging moves processes through `store-processes.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { createDefinitionTables } from './definitions.js';
import { createProcessTables } from './store-processes.js';
import { definitionsRoute } from './route-definitions.js';
import { processesRoute } from './route-processes.js';

export async function registerProcessOrchestration(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  createDefinitionTables(ctx.db);
  createProcessTables(ctx.db);
  await definitionsRoute(app, ctx);
  await processesRoute(app, ctx);
}
