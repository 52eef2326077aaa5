/** Lodging routes (filled in by the process/lodging work). */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';

export async function registerLodging(_app: FastifyInstance, _ctx: ServiceContext): Promise<void> {}
