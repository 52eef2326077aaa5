/** Event subscription routes and the webhook dispatcher (filled in by the events work). */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';

export async function registerEvents(_app: FastifyInstance, _ctx: ServiceContext): Promise<void> {}
