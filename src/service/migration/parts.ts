/**
 * The pieces of the migration-assistance module that its routes and jobs share: the stores
 * over the service database and the log writer. Built once at registration.
 */
import type { ServiceContext } from '../context.js';
import { createJobTables, JobStore } from './store-jobs.js';
import { createLogTables, logWriter, type NewLogEntry } from './store-logs.js';
import { createMigrationTables, MigrationStore, type MigrationRow } from './store-migrations.js';
import { createStagingTables, StagingStore } from './store-staging.js';
import type { Component } from '../../contract/migration.js';

export interface MigrationParts {
  ctx: ServiceContext;
  migrations: MigrationStore;
  staging: StagingStore;
  jobs: JobStore;
  log: (migrationId: string, entry: NewLogEntry) => number;
}

export function createMigrationParts(ctx: ServiceContext): MigrationParts {
  createMigrationTables(ctx.db);
  createStagingTables(ctx.db);
  createJobTables(ctx.db);
  createLogTables(ctx.db);
  return {
    ctx,
    migrations: new MigrationStore(ctx.db),
    staging: new StagingStore(ctx.db),
    jobs: new JobStore(ctx.db),
    log: logWriter(ctx.db),
  };
}

/** The only component this service stages data for; the others have no staging endpoint. */
export const COUNTERPARTIES: Component = 'Counterparties';

/**
 * Refuses staging changes (upload, deletion) unless the migration is Active, has the
 * Counterparties component and import has not started.
 */
export function requireStagingOpen(parts: MigrationParts, row: MigrationRow, intent: 'stage' | 'delete staged data'): void {
  parts.migrations.requireActive(row, intent);
  const component = parts.migrations.component(row.reference_id, COUNTERPARTIES);
  if (!component) {
    parts.migrations.conflict(
      row,
      intent,
      'does not include the component Counterparties',
      'register a migration with components ["Counterparties", …] to stage counterparties',
    );
  }
  if (component.import_status !== 'Pending') {
    parts.migrations.conflict(
      row,
      intent,
      `has importStatus ${component.import_status} for Counterparties, and staged data cannot change once import has started`,
      'wait for the import job to finish and register a new migration for further data',
    );
  }
}
