/**
 * The staging area of counterparties: one row per (migration, referenceId), holding the
 * record as staging accepted it. The rowid is the staging order and the cursor of background
 * jobs; re-submitting a referenceId replaces the record in place (same rowid), so a client
 * that re-sends after a lost response never creates a second copy.
 *
 * Rows carry their migration as a small number (staging_migrations), not its 36-character UUID:
 * the unique index on (migration, referenceId) is then about half as wide, which cut the CPU of
 * an insert test shaped like staging (600,000 rows) by a sixth to a quarter (docs/running.md).
 */
import type { Db } from '../store/database.js';

export interface StagedRow {
  id: number;
  reference_id: string;
  type: string;
  data: string;
  import_state: ImportState | null;
}

/** What import did with a staged record. */
export type ImportState = 'imported' | 'failed';

/** A record to stage, already checked and serialised. */
export interface StagingRow {
  referenceId: string;
  type: string;
  identity: string | null;
  data: string;
}

/** Rows per multi-row upsert (6 parameters each; SQLite allows 32766). */
const UPSERT_ROWS = 100;

/** A migration's number, for the queries that take its UUID (NULL, matching nothing, if it never staged). */
const MIGRATION_NO = '(SELECT no FROM staging_migrations WHERE migration_id = ?)';

export function createStagingTables(db: Db): void {
  db.transaction(() => {
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('staged_counterparties')").all();
    const byUuid = columns.some((c) => c.name === 'migration_id');
    // A database from before migration numbers: its table is set aside, its rows moved below.
    if (byUuid) db.exec('ALTER TABLE staged_counterparties RENAME TO staged_counterparties_by_uuid; DROP INDEX staged_counterparties_ref;');
    db.exec(`
      CREATE TABLE IF NOT EXISTS staging_migrations (
        no INTEGER PRIMARY KEY,
        migration_id TEXT NOT NULL UNIQUE);
      CREATE TABLE IF NOT EXISTS staged_counterparties (
        id INTEGER PRIMARY KEY,
        migration_no INTEGER NOT NULL,
        reference_id TEXT NOT NULL,
        type TEXT NOT NULL,
        identity_key TEXT,
        data TEXT NOT NULL,
        staged_on TEXT NOT NULL,
        import_state TEXT);
      CREATE UNIQUE INDEX IF NOT EXISTS staged_counterparties_ref ON staged_counterparties (migration_no, reference_id);
    `);
    if (byUuid) moveToMigrationNumbers(db);
  })();
}

/** Moves the rows of a table keyed by migration UUIDs into the numbered one, keeping their rowids (staging order, job cursors). */
function moveToMigrationNumbers(db: Db): void {
  db.exec(`
    INSERT OR IGNORE INTO staging_migrations (migration_id) SELECT migration_id FROM staged_counterparties_by_uuid GROUP BY migration_id ORDER BY MIN(id);
    INSERT INTO staged_counterparties (id, migration_no, reference_id, type, identity_key, data, staged_on, import_state)
      SELECT s.id, m.no, s.reference_id, s.type, s.identity_key, s.data, s.staged_on, s.import_state
      FROM staged_counterparties_by_uuid s JOIN staging_migrations m ON m.migration_id = s.migration_id ORDER BY s.id;
    DROP TABLE staged_counterparties_by_uuid;
  `);
}

export class StagingStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      /** The migration's number, given on its first staged record. */
      numberOf: db.prepare<[string], number>('SELECT no FROM staging_migrations WHERE migration_id = ?').pluck(),
      number: db.prepare<[string]>('INSERT OR IGNORE INTO staging_migrations (migration_id) VALUES (?)'),
      // Insert-or-ignore then update, for the rows after the last whole upsertMany: as cheap as a
      // plain insert for new records.
      insert: db.prepare<[number, string, string, string | null, string, string]>(
        `INSERT INTO staged_counterparties (migration_no, reference_id, type, identity_key, data, staged_on) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (migration_no, reference_id) DO NOTHING`,
      ),
      replace: db.prepare<[string, string | null, string, string, number, string]>(
        'UPDATE staged_counterparties SET type = ?, identity_key = ?, data = ?, staged_on = ?, import_state = NULL WHERE migration_no = ? AND reference_id = ?',
      ),
      // The same as insert-then-replace, for many rows in one statement (about 1 µs less per row).
      upsertMany: db.prepare<unknown[]>(
        `INSERT INTO staged_counterparties (migration_no, reference_id, type, identity_key, data, staged_on)
         VALUES ${Array<string>(UPSERT_ROWS).fill('(?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (migration_no, reference_id) DO UPDATE SET type = excluded.type, identity_key = excluded.identity_key,
           data = excluded.data, staged_on = excluded.staged_on, import_state = NULL`,
      ),
      maxId: db.prepare<[], { id: number | null }>('SELECT MAX(id) AS id FROM staged_counterparties'),
      /** Identities shared by several staged records, with the referenceIds sharing them. */
      duplicates: db.prepare<[string], { identity_key: string; ids: string }>(
        `SELECT identity_key, json_group_array(reference_id) AS ids FROM staged_counterparties
         WHERE migration_no = ${MIGRATION_NO} AND identity_key IS NOT NULL GROUP BY identity_key HAVING COUNT(*) > 1`,
      ),
      count: db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO}`),
      countImported: db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} AND import_state = 'imported'`),
      countByType: db.prepare<[string], { type: string; staged: number; imported: number }>(
        `SELECT type, COUNT(*) AS staged, SUM(import_state = 'imported') AS imported FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} GROUP BY type`,
      ),
      // Staging order is rowid order. "+migration_no" keeps SQLite from using the (migration_no,
      // reference_id) index and sorting the whole migration for every page: it walks the rowids
      // instead, where a migration's rows lie mostly together. (An index on (migration_no, id)
      // would do it too, at about 1 µs more per staged record.)
      page: db.prepare<[string, number, number], StagedRow>(
        `SELECT id, reference_id, type, data, import_state FROM staged_counterparties WHERE +migration_no = ${MIGRATION_NO} ORDER BY id LIMIT ? OFFSET ?`,
      ),
      after: db.prepare<[string, number, number], StagedRow>(
        `SELECT id, reference_id, type, data, import_state FROM staged_counterparties WHERE +migration_no = ${MIGRATION_NO} AND id > ? ORDER BY id LIMIT ?`,
      ),
      byRef: db.prepare<[string, string], StagedRow>(
        `SELECT id, reference_id, type, data, import_state FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} AND reference_id = ?`,
      ),
      exists: db.prepare<[string, string], { id: number }>(`SELECT id FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} AND reference_id = ?`),
      delete: db.prepare(`DELETE FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} AND reference_id = ?`),
      setImportState: db.prepare('UPDATE staged_counterparties SET import_state = ? WHERE id = ?'),
    };
  }

  /** The migration's number in staged rows, given to it here if it has none yet (inside the caller's transaction). */
  private migrationNo(migrationId: string): number {
    this.s.number.run(migrationId);
    return this.s.numberOf.get(migrationId)!;
  }

  /** Stages one record, replacing the one with the same referenceId in place (the rows `upsertMany` does not take). */
  private upsertOne(migrationNo: number, referenceId: string, type: string, identity: string | null, data: string, stagedOn: string): void {
    if (this.s.insert.run(migrationNo, referenceId, type, identity, data, stagedOn).changes === 0) this.s.replace.run(type, identity, data, stagedOn, migrationNo, referenceId);
  }

  /**
   * Stages records in order, each replacing the one with the same referenceId in place (inside the caller's transaction).
   * Returns how many were new to the migration.
   */
  upsertAll(migrationId: string, rows: readonly StagingRow[], stagedOn: string): number {
    // A new row takes rowid MAX(id) + 1 and a replaced one keeps its own: the rowids gained
    // count the new records (the upsert's `changes` counts replaced ones too).
    const before = this.s.maxId.get()!.id ?? 0;
    const migrationNo = this.migrationNo(migrationId);
    const whole = rows.length - (rows.length % UPSERT_ROWS);
    const params: unknown[] = [];
    for (let i = 0; i < whole; i++) {
      const r = rows[i]!;
      params.push(migrationNo, r.referenceId, r.type, r.identity, r.data, stagedOn);
      if (params.length === UPSERT_ROWS * 6) {
        this.s.upsertMany.run(params);
        params.length = 0;
      }
    }
    for (let i = whole; i < rows.length; i++) {
      const r = rows[i]!;
      this.upsertOne(migrationNo, r.referenceId, r.type, r.identity, r.data, stagedOn);
    }
    return (this.s.maxId.get()!.id ?? 0) - before;
  }

  count(migrationId: string): number {
    return this.s.count.get(migrationId)!.n;
  }

  countImported(migrationId: string): number {
    return this.s.countImported.get(migrationId)!.n;
  }

  countByType(migrationId: string): Array<{ type: string; staged: number; imported: number }> {
    return this.s.countByType.all(migrationId);
  }

  /** Staged records in staging order, by offset (the retrieval endpoint). */
  page(migrationId: string, limit: number, offset: number): StagedRow[] {
    return this.s.page.all(migrationId, limit, offset);
  }

  /** The next `limit` staged records after rowid `cursor` (background jobs). */
  after(migrationId: string, cursor: number, limit: number): StagedRow[] {
    return this.s.after.all(migrationId, cursor, limit);
  }

  byRef(migrationId: string, referenceId: string): StagedRow | undefined {
    return this.s.byRef.get(migrationId, referenceId);
  }

  exists(migrationId: string, referenceId: string): boolean {
    return this.s.exists.get(migrationId, referenceId) !== undefined;
  }

  /** Deletes a staged record; false when there was none. */
  delete(migrationId: string, referenceId: string): boolean {
    return this.s.delete.run(migrationId, referenceId).changes > 0;
  }

  setImportState(id: number, state: ImportState): void {
    this.s.setImportState.run(state, id);
  }

  /** Identities shared by several staged records: each with the referenceIds sharing it. */
  duplicates(migrationId: string): string[][] {
    return this.s.duplicates.all(migrationId).map((r) => JSON.parse(r.ids) as string[]);
  }
}
