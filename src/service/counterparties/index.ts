/** Counterparty list and stream routes (filled in by the counterparties work). */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';

export async function registerCounterparties(_app: FastifyInstance, _ctx: ServiceContext): Promise<void> {}
