/**
 * Invalid records deleted from the platform's staging area (so validation can pass and the
 * rest be imported). Kept in the ledger file in a table of this module: the record itself stays
 * `invalid` with its validation errors — it was refused, and the corrections file lists it —
 * while the report knows the platform no longer holds it.
 *
 * A removal holds the record's last batch at the time: when a corrections run sends the record
 * again (a new batch), the removal no longer applies and the record counts as staged again.
 */
import type { Database } from 'better-sqlite3';
import type { Ledger } from './ledger.js';
import type { RecordError } from './types.js';

export function createRemovalTables(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS staging_removals (
      migration_id TEXT NOT NULL,
      reference_id TEXT NOT NULL,
      last_batch INTEGER,
      errors TEXT NOT NULL,
      removed_at TEXT NOT NULL,
      PRIMARY KEY (migration_id, reference_id)) WITHOUT ROWID;
  `);
}

/** Records that an invalid record was deleted from staging, with the errors that got it removed. */
export function recordRemoval(
  ledger: Ledger,
  migrationId: string,
  referenceId: string,
  lastBatch: number | null,
  errors: readonly RecordError[],
): void {
  createRemovalTables(ledger.db);
  ledger.db
    .prepare('INSERT OR REPLACE INTO staging_removals (migration_id, reference_id, last_batch, errors, removed_at) VALUES (?, ?, ?, ?, ?)')
    .run(migrationId, referenceId, lastBatch, JSON.stringify(errors), new Date().toISOString());
}

/** Removals still in force (the record was not sent again since), by referenceId, with their errors. */
export function activeRemovals(ledger: Ledger, migrationId: string): Map<string, RecordError[]> {
  const db = ledger.db;
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'staging_removals'").get();
  if (!exists) return new Map();
  const rows = db
    .prepare<[string], { reference_id: string; last_batch: number | null; errors: string }>(
      'SELECT reference_id, last_batch, errors FROM staging_removals WHERE migration_id = ?',
    )
    .all(migrationId);
  if (rows.length === 0) return new Map();
  const current = new Map(ledger.recordsByReferenceIds(rows.map((r) => r.reference_id)).map((r) => [r.referenceId, r.lastBatch]));
  const out = new Map<string, RecordError[]>();
  for (const r of rows) if (current.get(r.reference_id) === r.last_batch) out.set(r.reference_id, JSON.parse(r.errors) as RecordError[]);
  return out;
}
