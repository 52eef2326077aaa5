/**
 * Migrations the ledger knows were canceled on the platform (by `stagecoach cancel`). A canceled
 * migration's staging area is gone, yet its records keep the state they had (`staged`,
 * `invalid`, …) because that is what happened to them; `status` must not present them as
 * staged on the platform. Kept in a table of this module, created on first use, so an
 * older ledger reads as "none canceled".
 */
import type { Database } from 'better-sqlite3';

function createTable(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS canceled_migrations (
      reference_id TEXT PRIMARY KEY,
      canceled_at TEXT NOT NULL) WITHOUT ROWID;
  `);
}

/** Records that the platform canceled the migration (idempotent: the first time stays). */
export function recordMigrationCanceled(db: Database, migrationId: string, at = new Date().toISOString()): void {
  createTable(db);
  db.prepare('INSERT OR IGNORE INTO canceled_migrations (reference_id, canceled_at) VALUES (?, ?)').run(migrationId, at);
}

export interface CanceledRecords {
  pipeline: string;
  component: string;
  migrationId: string;
  canceledAt: string;
  state: string;
  records: number;
}

/**
 * The ledger's records that belong to a canceled migration, per pipeline, component, migration
 * and state. Works on a read-only ledger (no table: none).
 */
export function canceledRecords(db: Database): CanceledRecords[] {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'canceled_migrations'").get();
  if (!exists) return [];
  return db
    .prepare<[], CanceledRecords>(
      `SELECT s.pipeline, s.component, m.reference_id AS migrationId, c.canceled_at AS canceledAt, r.state, count(*) AS records
         FROM canceled_migrations c
         JOIN migrations m ON m.reference_id = c.reference_id
         JOIN records r ON r.migration = m.id
         JOIN scopes s ON s.id = r.scope
        GROUP BY s.pipeline, s.component, m.reference_id, r.state
        ORDER BY s.pipeline, s.component, c.canceled_at, r.state`,
    )
    .all();
}
