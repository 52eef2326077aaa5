/**
 * Staged data of a migration (paths our choice, docs/contract-gaps.md):
 *   GET    …/staging/counterparties?offset&limit        page {items, total, offset, limit}
 *   GET    …/staging/counterparties/{referenceId}       the staged record
 *   DELETE …/staging/counterparties/{referenceId}       204, 404 when absent
 * Items are the records as staging accepted them (unknown fields dropped), in staging order.
 */
import type { FastifyInstance } from 'fastify';
import { PAGE_DEFAULTS, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../../contract/counterparty.js';
import { readIntegerParam } from '../counterparties/query.js';
import { HttpProblem } from '../http/problem.js';
import { COUNTERPARTIES, requireStagingOpen, type MigrationParts } from './parts.js';

const BASE = '/counterparty-management/migrations/:id/staging/counterparties';
const AREA = { area: 'counterparty-management' } as const;

export async function stagedDataRoutes(app: FastifyInstance, parts: MigrationParts): Promise<void> {
  const { ctx, migrations, staging } = parts;

  app.get<{ Params: { id: string } }>(BASE, { config: AREA }, async (request) => {
    const offset = readIntegerParam(request.query, 'offset', { min: 0, fallback: PAGE_DEFAULTS.offset });
    const limit = readIntegerParam(request.query, 'limit', { min: PAGE_LIMIT_MIN, max: PAGE_LIMIT_MAX, fallback: PAGE_DEFAULTS.limit });
    const migration = migrations.get(request.principal.brokerKey, request.params.id);
    return ctx.db.transaction(() => ({
      items: staging.page(migration.reference_id, limit, offset).map((r) => JSON.parse(r.data) as unknown),
      total: staging.count(migration.reference_id),
      offset,
      limit,
    }))();
  });

  app.get<{ Params: { id: string; referenceId: string } }>(`${BASE}/:referenceId`, { config: AREA }, async (request) => {
    const migration = migrations.get(request.principal.brokerKey, request.params.id);
    const row = staging.byRef(migration.reference_id, request.params.referenceId);
    if (!row) throw notStaged(request.params.referenceId, migration.reference_id);
    return JSON.parse(row.data) as unknown;
  });

  app.delete<{ Params: { id: string; referenceId: string } }>(`${BASE}/:referenceId`, { config: AREA }, async (request, reply) => {
    ctx.db.transaction(() => {
      const migration = migrations.get(request.principal.brokerKey, request.params.id);
      requireStagingOpen(parts, migration, 'delete staged data');
      const deleted = staging.delete(migration.reference_id, request.params.referenceId);
      if (!deleted) throw notStaged(request.params.referenceId, migration.reference_id);
      migrations.setStagedCount(migration.reference_id, COUNTERPARTIES, staging.count(migration.reference_id));
      parts.log(migration.reference_id, {
        component: COUNTERPARTIES,
        action: 'DeletedStagedEntities',
        logLevel: 'INFO',
        entityReferenceIds: [request.params.referenceId],
        message: `staged counterparty ${request.params.referenceId} deleted`,
      });
    })();
    return reply.status(204).send();
  });
}

function notStaged(referenceId: string, migrationId: string): HttpProblem {
  return new HttpProblem(404, 'NOT_FOUND', `no staged counterparty ${referenceId} in migration ${migrationId}`);
}
