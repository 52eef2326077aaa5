/**
 * How the ledger knows a migration ended: canceled on the platform (by `stagecoach cancel`), or
 * completed by its import (`migrate`, `import`). A canceled migration's staging area is gone, yet
 * its records keep the state they had (`staged`, `invalid`, …) because that is what happened to
 * them; `status` must not present them as staged on the platform. A record imported in an earlier
 * migration and sent again into one that was canceled is still live on the platform from that
 * import (the ledger keeps it in `earlier_imports`, src/ledger/schema.ts). An ended migration
 * takes no more records: the next run registers a new one and sends everything into it, which
 * `plan --ledger` must predict. The cancels are kept in a table of this module, created on first
 * use, so an older ledger reads as "none canceled".
 */
import type { Database } from 'better-sqlite3';
import { importFinishedAt } from './ledger-files.js';

const hasTable = (db: Database, name: string) =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

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

/** How a migration ended, as the ledger knows it. */
export interface MigrationEnd {
  migrationId: string;
  how: 'completed' | 'canceled';
  at: string;
}

/**
 * Whether the ledger knows the migration ended: canceled (`stagecoach cancel`), or completed (its
 * import job finished). Works on a read-only ledger.
 * @example migrationEnd(ledger.db, 'a82df1e0-…') // { migrationId: 'a82df1e0-…', how: 'completed', at: '2026-11-25T06:44:10.471Z' }
 */
export function migrationEnd(db: Database, migrationId: string): MigrationEnd | undefined {
  if (hasTable(db, 'canceled_migrations')) {
    const c = db
      .prepare<[string], { at: string }>('SELECT canceled_at AS at FROM canceled_migrations WHERE reference_id = ?')
      .get(migrationId);
    if (c) return { migrationId, how: 'canceled', at: c.at };
  }
  const at = importFinishedAt(db, migrationId);
  return at ? { migrationId, how: 'completed', at } : undefined;
}

export interface CanceledRecords {
  pipeline: string;
  component: string;
  migrationId: string;
  canceledAt: string;
  state: string;
  records: number;
  /**
   * The migration these records were imported in before they were sent into the canceled one:
   * the platform still holds them, live, from that import. Absent: the platform holds nothing of them.
   */
  importedIn?: string;
}

/**
 * The ledger's records that belong to a canceled migration, per pipeline, component, migration,
 * state and earlier import. Works on a read-only ledger (no table: none).
 */
export function canceledRecords(db: Database): CanceledRecords[] {
  if (!hasTable(db, 'canceled_migrations')) return [];
  // A ledger written before earlier_imports existed knows of no earlier import.
  const earlier = hasTable(db, 'earlier_imports');
  const rows = db
    .prepare<[], CanceledRecords & { importedIn: string | null }>(
      `SELECT s.pipeline, s.component, m.reference_id AS migrationId, c.canceled_at AS canceledAt, r.state, count(*) AS records,
              ${earlier ? 'em.reference_id' : 'NULL'} AS importedIn
         FROM canceled_migrations c
         JOIN migrations m ON m.reference_id = c.reference_id
         JOIN records r ON r.migration = m.id
         JOIN scopes s ON s.id = r.scope
         ${
           earlier
             ? `LEFT JOIN earlier_imports e ON e.scope = r.scope AND e.keyed = r.keyed AND e.legacy_key = r.legacy_key
                LEFT JOIN migrations em ON em.id = e.migration`
             : ''
         }
        GROUP BY s.pipeline, s.component, m.reference_id, r.state, importedIn
        ORDER BY s.pipeline, s.component, c.canceled_at, r.state, importedIn`,
    )
    .all();
  return rows.map(({ importedIn, ...r }) => (importedIn ? { ...r, importedIn } : r));
}
