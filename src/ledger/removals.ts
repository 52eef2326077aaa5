/**
 * Invalid records deleted from the platform's staging area (so validation can pass and the
 * rest be imported). Kept in the ledger's table `staging_removals`: the record itself stays
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
import type { Db } from './schema.js';
import { errorsJson } from './record-errors.js';
import { once } from './rows.js';
import type { RecordReads } from './record-reads.js';
import type { RecordError, RemovalState } from './types.js';

/** One record a validation refused and that is to be deleted from staging. */
export interface RemovalInput {
  referenceId: string;
  lastBatch: number | null;
  errors: readonly RecordError[];
}

/** A removal as stored, with whether it still applies to the record as the ledger has it now. */
export interface StoredRemoval {
  referenceId: string;
  state: RemovalState;
  errors: RecordError[];
  /** False once the record was sent again (a newer batch) since the removal was written. */
  applies: boolean;
}

export class Removals {
  private readonly insert = once(() =>
    this.db.prepare(
      `INSERT OR REPLACE INTO staging_removals (migration_id, reference_id, last_batch, errors, removed_at, state) VALUES (?, ?, ?, ?, ?, 'removing')`,
    ),
  );
  private readonly confirm_ = once(() =>
    this.db.prepare(`UPDATE staging_removals SET state = 'removed', removed_at = ? WHERE migration_id = ? AND reference_id = ?`),
  );
  private readonly drop_ = once(() => this.db.prepare('DELETE FROM staging_removals WHERE migration_id = ? AND reference_id = ?'));
  private readonly ofMigration = once(() =>
    this.db.prepare<[string], { reference_id: string; last_batch: number | null; errors: string; state: RemovalState }>(
      'SELECT reference_id, last_batch, errors, state FROM staging_removals WHERE migration_id = ?',
    ),
  );

  constructor(
    private readonly db: Db,
    private readonly reads: RecordReads,
  ) {}

  /**
   * Writes the intent to delete these records from staging, all in one transaction, before any
   * DELETE is sent: whatever happens next, the ledger knows they were meant to go.
   */
  intend(migrationId: string, records: readonly RemovalInput[]): void {
    const now = new Date().toISOString();
    const insert = this.insert();
    this.db.transaction(() => {
      for (const r of records) insert.run(migrationId, r.referenceId, r.lastBatch, errorsJson(r.errors), now);
    })();
  }

  /** The platform no longer holds the record (it answered the DELETE, or a lookup found nothing). */
  confirm(migrationId: string, referenceId: string): void {
    this.confirm_().run(new Date().toISOString(), migrationId, referenceId);
  }

  /** Forgets an intent that no longer applies (the record was sent again since). */
  drop(migrationId: string, referenceId: string): void {
    this.drop_().run(migrationId, referenceId);
  }

  /** Intents a killed run left unsettled (`removing`), whether or not they still apply. */
  pending(migrationId: string): StoredRemoval[] {
    return this.stored(migrationId).filter((r) => r.state === 'removing');
  }

  /** Confirmed removals still in force (the record was not sent again since), by referenceId, with their errors. */
  active(migrationId: string): Map<string, RecordError[]> {
    const out = new Map<string, RecordError[]>();
    for (const r of this.stored(migrationId)) if (r.state === 'removed' && r.applies) out.set(r.referenceId, r.errors);
    return out;
  }

  private stored(migrationId: string): StoredRemoval[] {
    const rows = this.ofMigration().all(migrationId);
    if (rows.length === 0) return [];
    const current = new Map(this.reads.recordsByReferenceIds(rows.map((r) => r.reference_id)).map((r) => [r.referenceId, r.lastBatch]));
    return rows.map((r) => ({
      referenceId: r.reference_id,
      state: r.state,
      errors: JSON.parse(r.errors) as RecordError[],
      applies: current.get(r.reference_id) === r.last_batch,
    }));
  }
}
