/**
 * Lodging: draft messages on a process, their attachments (checked name, type, content and
 * XML schema), sending, and the background handling that turns a sent CleanOrder message into
 * live counterparties and events. Pending handlings left by a stop or crash resume here.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { createCounterpartyTables } from '../counterparties/store.js';
import { createProcessTables } from '../process/store-processes.js';
import { createMessageTables } from './store-messages.js';
import { messagesRoute } from './route-messages.js';
import { attachmentsRoute } from './route-attachments.js';
import { sendRoute } from './route-send.js';
import { resumePendingHandlings } from './handling.js';

export async function registerLodging(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  createProcessTables(ctx.db);
  createCounterpartyTables(ctx.db);
  createMessageTables(ctx.db);
  await messagesRoute(app, ctx);
  await attachmentsRoute(app, ctx);
  await sendRoute(app, ctx);
  resumePendingHandlings(ctx);
}
