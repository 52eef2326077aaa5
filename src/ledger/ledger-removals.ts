/**
 * Invalid records deleted from the platform's staging area (so validation can pass and the
 * rest be imported). Kept in the ledger file in a table of this module: the record itself stays
 * `invalid` with its validation errors — it was refused, and the corrections file lists it —
 * while the report knows the platform no longer holds it.
 *
 * A removal is written in two steps around the DELETE: first the intent (`removing`), for every
 * record of a round in one transaction, then, once the platform answered, `removed`. A kill in
 * between leaves `removing` rows, which the next chain settles by asking the platform
 * (src/reconcile/chain.ts, `settleRemovals`). Written the other way round (delete, then record),
 * a kill after the DELETE left the ledger unaware of the deletion: the next validation no longer
 * named the record, and the ledger took it for staged, then imported.
 *
 * A removal holds the record's last batch at the time: when a corrections run sends the record
 * again (a new batch), the removal no longer applies and the record counts as staged again.
 */
import type { Database } from 'better-sqlite3';
import type { Ledger } from './ledger.js';
import type { RecordError } from './types.js';
import { errorsJson } from './record-errors.js';

/** `removing`: the DELETE was (or was about to be) sent, its answer not recorded; `removed`: the platform no longer holds it. */
export const REMOVAL_STATES = ['removing', 'removed'] as const;
export type RemovalState = (typeof REMOVAL_STATES)[number];

const STATE_COLUMN = `state TEXT NOT NULL DEFAULT 'removed' CHECK (state IN (${REMOVAL_STATES.map((s) => `'${s}'`).join(', ')}))`;

function tableExists(db: Database): boolean {
  return !!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'staging_removals'").get();
}

function hasStateColumn(db: Database): boolean {
  return db
    .prepare<[], { name: string }>('PRAGMA table_info(staging_removals)')
    .all()
    .some((c) => c.name === 'state');
}

/**
 * Creates the table, and migrates one made before removals had a state: its rows were written
 * after their DELETE had succeeded, so they are `removed` (the column's default).
 */
export function createRemovalTables(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS staging_removals (
      migration_id TEXT NOT NULL,
      reference_id TEXT NOT NULL,
      last_batch INTEGER,
      errors TEXT NOT NULL,
      removed_at TEXT NOT NULL,
      ${STATE_COLUMN},
      PRIMARY KEY (migration_id, reference_id)) WITHOUT ROWID;
  `);
  if (!hasStateColumn(db)) db.exec(`ALTER TABLE staging_removals ADD COLUMN ${STATE_COLUMN}`);
}

/** One record a validation refused and that is to be deleted from staging. */
export interface RemovalInput {
  referenceId: string;
  lastBatch: number | null;
  errors: readonly RecordError[];
}

/**
 * Writes the intent to delete these records from staging, all in one transaction, before any
 * DELETE is sent: whatever happens next, the ledger knows they were meant to go.
 */
export function intendRemovals(ledger: Ledger, migrationId: string, records: readonly RemovalInput[]): void {
  const db = ledger.db;
  createRemovalTables(db);
  const now = new Date().toISOString();
  const insert = db.prepare(
    `INSERT OR REPLACE INTO staging_removals (migration_id, reference_id, last_batch, errors, removed_at, state) VALUES (?, ?, ?, ?, ?, 'removing')`,
  );
  db.transaction(() => {
    for (const r of records) insert.run(migrationId, r.referenceId, r.lastBatch, errorsJson(r.errors), now);
  })();
}

/** The platform no longer holds the record (it answered the DELETE, or a lookup found nothing). */
export function confirmRemoval(ledger: Ledger, migrationId: string, referenceId: string): void {
  ledger.db
    .prepare(`UPDATE staging_removals SET state = 'removed', removed_at = ? WHERE migration_id = ? AND reference_id = ?`)
    .run(new Date().toISOString(), migrationId, referenceId);
}

/** Forgets an intent that no longer applies (the record was sent again since). */
export function dropRemoval(ledger: Ledger, migrationId: string, referenceId: string): void {
  ledger.db.prepare('DELETE FROM staging_removals WHERE migration_id = ? AND reference_id = ?').run(migrationId, referenceId);
}

/** A removal as stored, with whether it still applies to the record as the ledger has it now. */
export interface StoredRemoval {
  referenceId: string;
  state: RemovalState;
  errors: RecordError[];
  /** False once the record was sent again (a newer batch) since the removal was written. */
  applies: boolean;
}

function storedRemovals(ledger: Ledger, migrationId: string): StoredRemoval[] {
  const db = ledger.db;
  if (!tableExists(db)) return [];
  // A ledger opened read-only may still have the table as it was before the state column.
  const state = hasStateColumn(db) ? 'state' : `'removed' AS state`;
  const rows = db
    .prepare<[string], { reference_id: string; last_batch: number | null; errors: string; state: RemovalState }>(
      `SELECT reference_id, last_batch, errors, ${state} FROM staging_removals WHERE migration_id = ?`,
    )
    .all(migrationId);
  if (rows.length === 0) return [];
  const current = new Map(ledger.recordsByReferenceIds(rows.map((r) => r.reference_id)).map((r) => [r.referenceId, r.lastBatch]));
  return rows.map((r) => ({
    referenceId: r.reference_id,
    state: r.state,
    errors: JSON.parse(r.errors) as RecordError[],
    applies: current.get(r.reference_id) === r.last_batch,
  }));
}

/** Intents a killed run left unsettled (`removing`), whether or not they still apply. */
export function pendingRemovals(ledger: Ledger, migrationId: string): StoredRemoval[] {
  return storedRemovals(ledger, migrationId).filter((r) => r.state === 'removing');
}

/** Confirmed removals still in force (the record was not sent again since), by referenceId, with their errors. */
export function activeRemovals(ledger: Ledger, migrationId: string): Map<string, RecordError[]> {
  const out = new Map<string, RecordError[]>();
  for (const r of storedRemovals(ledger, migrationId)) if (r.state === 'removed' && r.applies) out.set(r.referenceId, r.errors);
  return out;
}
