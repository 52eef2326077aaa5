/** Migration assistance and staging routes (filled in by the migration-assistance work). */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';

export async function registerMigrationAssistance(_app: FastifyInstance, _ctx: ServiceContext): Promise<void> {}
