/**
 * Migrations and their components, and the state machine that moves them:
 *
 *   activity:        Active ──cancel──▶ Canceled            (final)
 *                    Active ──import done for all──▶ Completed (final)
 *   stagingStatus:   Pending ──stage──▶ InProgress ──validation passes──▶ Completed
 *                    Completed ──stage or delete──▶ InProgress   (new data must be validated again)
 *   importStatus:    Pending ──import job──▶ InProgress ──import done──▶ Completed
 *
 * The migration's own statuses and counters are derived from its components, so they can
 * never disagree. One Active migration per tenant is enforced by a partial unique index.
 * Every refusal is a 409 problem saying which state blocks the request and what to do.
 */
import { randomUUID } from 'node:crypto';
import type { Activity, Component, Migration, PhaseStatus } from '../../contract/migration.js';
import type { Db } from '../store/database.js';
import { HttpProblem } from '../http/problem.js';

export interface MigrationRow {
  reference_id: string;
  broker_key: string;
  activity: Activity;
  staging_generation: number;
  created_on: string;
  updated_on: string;
}

export interface ComponentRow {
  migration_id: string;
  position: number;
  component: Component;
  staging_status: PhaseStatus;
  import_status: PhaseStatus;
  staged: number;
  imported: number;
}

export function createMigrationTables(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS migrations (
      reference_id TEXT PRIMARY KEY,
      broker_key TEXT NOT NULL,
      activity TEXT NOT NULL,
      staging_generation INTEGER NOT NULL DEFAULT 0,
      created_on TEXT NOT NULL,
      updated_on TEXT NOT NULL);
    CREATE UNIQUE INDEX IF NOT EXISTS migrations_one_active ON migrations (broker_key) WHERE activity = 'Active';
    CREATE TABLE IF NOT EXISTS migration_components (
      migration_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      component TEXT NOT NULL,
      staging_status TEXT NOT NULL,
      import_status TEXT NOT NULL,
      staged INTEGER NOT NULL DEFAULT 0,
      imported INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (migration_id, component)) WITHOUT ROWID;
  `);
}

/** What a request wants to do, for the wording of state conflicts. */
export type Intent = 'stage' | 'delete staged data' | 'validate' | 'import' | 'count' | 'cancel';

export class MigrationStore {
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      insert: db.prepare('INSERT INTO migrations (reference_id, broker_key, activity, created_on, updated_on) VALUES (?, ?, ?, ?, ?)'),
      insertComponent: db.prepare(
        "INSERT INTO migration_components (migration_id, position, component, staging_status, import_status) VALUES (?, ?, ?, 'Pending', 'Pending')",
      ),
      byId: db.prepare<[string], MigrationRow>('SELECT * FROM migrations WHERE reference_id = ?'),
      active: db.prepare<[string], MigrationRow>("SELECT * FROM migrations WHERE broker_key = ? AND activity = 'Active'"),
      components: db.prepare<[string], ComponentRow>('SELECT * FROM migration_components WHERE migration_id = ? ORDER BY position'),
      setActivity: db.prepare('UPDATE migrations SET activity = ?, updated_on = ? WHERE reference_id = ?'),
      bumpGeneration: db.prepare(
        'UPDATE migrations SET staging_generation = staging_generation + 1, updated_on = ? WHERE reference_id = ?',
      ),
      setStaging: db.prepare('UPDATE migration_components SET staging_status = ? WHERE migration_id = ? AND component = ?'),
      setImport: db.prepare('UPDATE migration_components SET import_status = ? WHERE migration_id = ? AND component = ?'),
      setStaged: db.prepare('UPDATE migration_components SET staged = ? WHERE migration_id = ? AND component = ?'),
      setImported: db.prepare('UPDATE migration_components SET imported = ? WHERE migration_id = ? AND component = ?'),
    };
  }

  /**
   * Registers a migration for a tenant with no active one (else 409 MIGRATION_ALREADY_ACTIVE).
   * @example store.create('demo-broker', ['Counterparties']).stagingStatus // 'Pending'
   */
  create(brokerKey: string, components: readonly Component[]): MigrationRow {
    const id = randomUUID();
    const now = new Date().toISOString();
    const unique = [...new Set(components)];
    this.db.transaction(() => {
      const active = this.s.active.get(brokerKey);
      if (active) {
        throw new HttpProblem(
          409,
          'MIGRATION_ALREADY_ACTIVE',
          `migration ${active.reference_id} of this tenant is still Active; complete it (import) or cancel it (PUT /migration-assistance/migrations/${active.reference_id}/cancel) before registering a new one`,
        );
      }
      this.s.insert.run(id, brokerKey, 'Active', now, now);
      unique.forEach((c, i) => this.s.insertComponent.run(id, i, c));
    })();
    return this.s.byId.get(id)!;
  }

  /** The tenant's migration, or 404 (another tenant's migration does not exist for this one). */
  get(brokerKey: string, id: string): MigrationRow {
    const row = this.s.byId.get(id);
    if (!row || row.broker_key !== brokerKey) throw new HttpProblem(404, 'NOT_FOUND', `migration ${id} was not found`);
    return row;
  }

  /** The row by id, whoever owns it (background jobs). */
  byId(id: string): MigrationRow | undefined {
    return this.s.byId.get(id);
  }

  current(brokerKey: string): MigrationRow | undefined {
    return this.s.active.get(brokerKey);
  }

  components(id: string): ComponentRow[] {
    return this.s.components.all(id);
  }

  component(id: string, component: Component): ComponentRow | undefined {
    return this.components(id).find((c) => c.component === component);
  }

  /** The migration resource of the spec. */
  render(row: MigrationRow): Migration {
    const components = this.components(row.reference_id);
    return {
      referenceId: row.reference_id,
      stagingStatus: overall(components.map((c) => c.staging_status)),
      importStatus: overall(components.map((c) => c.import_status)),
      numberOfStagedEntities: components.reduce((n, c) => n + c.staged, 0),
      numberOfImportedEntities: components.reduce((n, c) => n + c.imported, 0),
      activity: row.activity,
      components: components.map((c) => ({
        component: c.component,
        stagingStatus: c.staging_status,
        importStatus: c.import_status,
        numberOfStagedEntities: c.staged,
        numberOfImportedEntities: c.imported,
      })),
    };
  }

  /** Throws 409 MIGRATION_NOT_ACTIVE unless the migration is Active. */
  requireActive(row: MigrationRow, intent: Intent): void {
    if (row.activity === 'Active') return;
    const why = row.activity === 'Canceled' ? 'was canceled, which is final' : 'is Completed (imported), which is final';
    throw new HttpProblem(
      409,
      'MIGRATION_NOT_ACTIVE',
      `cannot ${intent}: migration ${row.reference_id} ${why}; register a new migration (POST /migration-assistance/migrations) to continue`,
    );
  }

  /** Throws 409 MIGRATION_STATE_CONFLICT with the blocking state and the way out. */
  conflict(row: MigrationRow, intent: Intent, state: string, remedy: string): never {
    throw new HttpProblem(409, 'MIGRATION_STATE_CONFLICT', `cannot ${intent}: migration ${row.reference_id} ${state}; ${remedy}`);
  }

  cancel(row: MigrationRow): void {
    this.s.setActivity.run('Canceled', new Date().toISOString(), row.reference_id);
  }

  complete(id: string): void {
    this.s.setActivity.run('Completed', new Date().toISOString(), id);
  }

  /** Staged data changed: a validation that started before it cannot pass the migration. */
  bumpGeneration(id: string): void {
    this.s.bumpGeneration.run(new Date().toISOString(), id);
  }

  setStagingStatus(id: string, component: Component, status: PhaseStatus): void {
    this.s.setStaging.run(status, id, component);
  }

  setImportStatus(id: string, component: Component, status: PhaseStatus): void {
    this.s.setImport.run(status, id, component);
  }

  setStagedCount(id: string, component: Component, n: number): void {
    this.s.setStaged.run(n, id, component);
  }

  setImportedCount(id: string, component: Component, n: number): void {
    this.s.setImported.run(n, id, component);
  }
}

/** Pending until anything moves, Completed when every component is, InProgress in between. */
export function overall(statuses: PhaseStatus[]): PhaseStatus {
  if (statuses.every((s) => s === 'Completed')) return 'Completed';
  if (statuses.every((s) => s === 'Pending')) return 'Pending';
  return 'InProgress';
}
