/**
 * Migrations: register (POST), read (GET by id, GET current), cancel (PUT …/cancel).
 * A migration belongs to the tenant (broker key) of the token; other tenants get 404.
 */
import type { FastifyInstance } from 'fastify';
import { COMPONENTS, createMigrationSchema } from '../../contract/migration.js';
import { HttpProblem } from '../http/problem.js';
import { MIGRATION_COMPONENT } from './store-logs.js';
import type { MigrationParts } from './parts.js';

const AREA = { area: 'migration-assistance' } as const;

export async function migrationRoutes(app: FastifyInstance, parts: MigrationParts): Promise<void> {
  const { ctx, migrations } = parts;

  app.post('/migration-assistance/migrations', { config: AREA }, async (request, reply) => {
    const parsed = createMigrationSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({
        field: i.path.map(String).join('.') || '(body)',
        message: i.path.length ? 'INVALID_FIELD_VALUE' : 'INVALID_REQUEST',
      }));
      throw new HttpProblem(
        400,
        'INVALID_REQUEST',
        `migration request: expected {"components": [one or more of ${COMPONENTS.join(', ')}]}, got ${JSON.stringify(request.body ?? null).slice(0, 200)}`,
        { errors },
      );
    }
    const row = ctx.db.transaction(() => {
      const created = migrations.create(request.principal.brokerKey, parsed.data.components);
      parts.log(created.reference_id, {
        component: MIGRATION_COMPONENT,
        action: 'CreatedMigration',
        logLevel: 'INFO',
        message: `migration registered for components ${[...new Set(parsed.data.components)].join(', ')}`,
      });
      return created;
    })();
    return reply.status(201).send(migrations.render(row));
  });

  // Registered before /:id; fastify prefers the static segment anyway.
  app.get('/migration-assistance/migrations/current', { config: AREA }, async (request) => {
    const row = migrations.current(request.principal.brokerKey);
    if (!row)
      throw new HttpProblem(
        404,
        'NOT_FOUND',
        'this tenant has no active migration; register one with POST /migration-assistance/migrations',
      );
    return migrations.render(row);
  });

  app.get<{ Params: { id: string } }>('/migration-assistance/migrations/:id', { config: AREA }, async (request) => {
    return migrations.render(migrations.get(request.principal.brokerKey, request.params.id));
  });

  app.put<{ Params: { id: string } }>('/migration-assistance/migrations/:id/cancel', { config: AREA }, async (request) => {
    const row = ctx.db.transaction(() => {
      const current = migrations.get(request.principal.brokerKey, request.params.id);
      // Canceling twice is harmless (a retried request); canceling a completed migration is not.
      if (current.activity === 'Canceled') return current;
      migrations.requireActive(current, 'cancel');
      migrations.cancel(current);
      parts.log(current.reference_id, {
        component: MIGRATION_COMPONENT,
        action: 'CanceledMigration',
        logLevel: 'WARN',
        message: 'migration canceled; it cannot be reactivated',
      });
      return migrations.get(request.principal.brokerKey, request.params.id);
    })();
    return migrations.render(row);
  });
}
