/**
 * The staging area of counterparties: one row per (migration, referenceId), holding the
 * record as staging accepted it. The rowid is the staging order and the cursor of background
 * jobs; re-submitting a referenceId replaces the record in place (same rowid), so a client
 * that re-sends after a lost response never creates a second copy.
 *
 * Rows carry their migration as a small number (staging_migrations), not its 36-character UUID.
 *
 * Where a referenceId's row is, is held in memory (`RowsByReference`), not in a unique index on
 * (migration, referenceId). ReferenceIds are UUIDs that land anywhere in such an index, so nearly
 * every staged record dirtied another index page, written to the WAL at each commit: the index
 * was half of staging's SQLite time (an insert test shaped like staging, 600,000 rows: 9.4-9.8 s
 * of CPU with it, 4.8-5.0 s without), and most of the bytes the service wrote. The map is read
 * from the table when a migration is first touched after start, and kept for the few migrations
 * in use; rows are found by rowid and their referenceId checked, so an entry left by a
 * transaction that rolled back, or by a deleted row, only costs a failed check. Every committed
 * row is in the map: an insert adds its entry in the same step. This holds because the service
 * is the only writer of its database (one process, as `serve` runs it).
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

/** Rows per multi-row insert (6 parameters each; SQLite allows 32766). */
const INSERT_ROWS = 100;

/** Migrations whose rows are held in memory at once (8–21 bytes a staged record each). */
const MIGRATIONS_HELD = 4;

/**
 * Rowids of a migration's staged records by a 30-bit hash of their referenceId, in an
 * open-addressing table of typed arrays: 8 bytes a slot (the hash and a 32-bit rowid), at most
 * three quarters full, so 8–21 bytes a record: about 17 MB for a million records, 34 MB for three
 * million. It holds no strings: a referenceId kept as a Map key kept the whole request text it was
 * parsed from alive (V8 slices strings), and the service went from 250 to 560 MB at 1,000,000
 * records; a Map of numbers still took about 100 MB more. Several referenceIds can share a hash
 * (about 500 pairs among a million), and a slot can be left by a row that is gone, so each rowid
 * found is a candidate that the caller checks against the row. A probe stops at the first empty
 * slot; the hashes of a full cluster sit side by side, so a miss reads a cache line or two.
 * Rowids past 2³² (four billion staged rows) turn the rowids into doubles (12 bytes a slot).
 */
class RowsByReference {
  /** hash30 + 1 of the slot's referenceId; 0: empty. */
  private hashes = new Int32Array(1024);
  private ids: Uint32Array | Float64Array = new Uint32Array(1024);
  private count = 0;

  /** Calls `test` on each candidate rowid until it returns true; whether one did. */
  find(referenceId: string, test: (id: number) => boolean): boolean {
    const h = hash30(referenceId) + 1;
    const mask = this.hashes.length - 1;
    for (let slot = h & mask; this.hashes[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.hashes[slot] === h && test(this.ids[slot]!)) return true;
    }
    return false;
  }

  add(referenceId: string, id: number): void {
    if ((this.count + 1) * 4 > this.hashes.length * 3) this.grow(this.hashes.length * 2);
    if (id > 0xffffffff && this.ids instanceof Uint32Array) this.ids = Float64Array.from(this.ids);
    this.put(hash30(referenceId) + 1, id);
  }

  private put(h: number, id: number): void {
    const mask = this.hashes.length - 1;
    let slot = h & mask;
    for (; this.hashes[slot] !== 0; slot = (slot + 1) & mask) if (this.hashes[slot] === h && this.ids[slot] === id) return;
    this.hashes[slot] = h;
    this.ids[slot] = id;
    this.count++;
  }

  private grow(capacity: number): void {
    const { hashes, ids } = this;
    this.hashes = new Int32Array(capacity);
    this.ids = ids instanceof Uint32Array ? new Uint32Array(capacity) : new Float64Array(capacity);
    this.count = 0;
    for (let i = 0; i < hashes.length; i++) if (hashes[i] !== 0) this.put(hashes[i]!, ids[i]!);
  }
}

/** FNV-1a over the UTF-16 code units, cut to 30 bits (a small integer in V8). Exported for the tests, which need colliding ids. */
export function hash30(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

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
      DROP INDEX IF EXISTS staged_counterparties_ref;
      CREATE INDEX IF NOT EXISTS staged_counterparties_by_migration ON staged_counterparties (migration_no);
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
  /** referenceId → rowid of the migrations in use, by migration number (oldest use first). */
  private readonly held = new Map<number, RowsByReference>();

  constructor(db: Db) {
    this.s = {
      /** The migration's number, given on its first staged record. */
      numberOf: db.prepare<[string], number>('SELECT no FROM staging_migrations WHERE migration_id = ?').pluck(),
      number: db.prepare<[string]>('INSERT OR IGNORE INTO staging_migrations (migration_id) VALUES (?)'),
      insertOne: db.prepare<[number, string, string, string | null, string, string]>(
        'INSERT INTO staged_counterparties (migration_no, reference_id, type, identity_key, data, staged_on) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      // Many rows in one statement: about 1 µs less a row than one statement each.
      insertMany: db.prepare<unknown[]>(
        `INSERT INTO staged_counterparties (migration_no, reference_id, type, identity_key, data, staged_on) VALUES ${Array<string>(INSERT_ROWS).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`,
      ),
      /** Replaces a staged record in place, if the row is still the referenceId's. */
      replace: db.prepare<[string, string | null, string, string, number, number, string]>(
        'UPDATE staged_counterparties SET type = ?, identity_key = ?, data = ?, staged_on = ?, import_state = NULL WHERE id = ? AND migration_no = ? AND reference_id = ?',
      ),
      /** Every referenceId of a migration with its rowid (to fill the map). */
      references: db.prepare<[number], { id: number; reference_id: string }>(
        'SELECT id, reference_id FROM staged_counterparties WHERE migration_no = ?',
      ),
      /** Identities shared by several staged records, with the referenceIds sharing them. */
      duplicates: db.prepare<[string], { identity_key: string; ids: string }>(
        `SELECT identity_key, json_group_array(json_array(id, reference_id)) AS ids FROM staged_counterparties
         WHERE migration_no = ${MIGRATION_NO} AND identity_key IS NOT NULL GROUP BY identity_key HAVING COUNT(*) > 1`,
      ),
      count: db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO}`),
      countImported: db.prepare<[string], { n: number }>(
        `SELECT COUNT(*) AS n FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} AND import_state = 'imported'`,
      ),
      countByType: db.prepare<[string], { type: string; staged: number; imported: number }>(
        `SELECT type, COUNT(*) AS staged, SUM(import_state = 'imported') AS imported FROM staged_counterparties WHERE migration_no = ${MIGRATION_NO} GROUP BY type`,
      ),
      // Staging order is rowid order. "+migration_no" keeps SQLite from using the migration's
      // index and sorting the whole migration for every page: it walks the rowids instead, where
      // a migration's rows lie mostly together.
      page: db.prepare<[string, number, number], StagedRow>(
        `SELECT id, reference_id, type, data, import_state FROM staged_counterparties WHERE +migration_no = ${MIGRATION_NO} ORDER BY id LIMIT ? OFFSET ?`,
      ),
      after: db.prepare<[string, number, number], StagedRow>(
        `SELECT id, reference_id, type, data, import_state FROM staged_counterparties WHERE +migration_no = ${MIGRATION_NO} AND id > ? ORDER BY id LIMIT ?`,
      ),
      /** The row at a rowid, if it is still the referenceId's. */
      byId: db.prepare<[number, number, string], StagedRow>(
        'SELECT id, reference_id, type, data, import_state FROM staged_counterparties WHERE id = ? AND migration_no = ? AND reference_id = ?',
      ),
      delete: db.prepare<[number, number, string]>(
        'DELETE FROM staged_counterparties WHERE id = ? AND migration_no = ? AND reference_id = ?',
      ),
      setImportState: db.prepare('UPDATE staged_counterparties SET import_state = ? WHERE id = ?'),
    };
  }

  /** The migration's number in staged rows, given to it here if it has none yet (inside the caller's transaction). */
  private migrationNo(migrationId: string): number {
    this.s.number.run(migrationId);
    return this.s.numberOf.get(migrationId)!;
  }

  /** Where the migration's referenceIds are (read from the table on first use after start). */
  private rowsByReference(migrationNo: number): RowsByReference {
    let rows = this.held.get(migrationNo);
    if (rows) {
      this.held.delete(migrationNo); // most recently used last
    } else {
      rows = new RowsByReference();
      for (const r of this.s.references.iterate(migrationNo)) rows.add(r.reference_id, r.id);
      if (this.held.size >= MIGRATIONS_HELD) this.held.delete(this.held.keys().next().value!);
    }
    this.held.set(migrationNo, rows);
    return rows;
  }

  /**
   * Stages records in order, each replacing the one with the same referenceId in place (inside the caller's transaction).
   * Returns how many were new to the migration.
   */
  upsertAll(migrationId: string, rows: readonly StagingRow[], stagedOn: string): number {
    const migrationNo = this.migrationNo(migrationId);
    const byReference = this.rowsByReference(migrationNo);
    // New records, inserted INSERT_ROWS to a statement; a referenceId twice among them keeps the
    // first one's place and takes the later content, as a replacement would.
    const fresh: StagingRow[] = [];
    const freshAt = new Map<string, number>();
    for (const r of rows) {
      if (
        byReference.find(
          r.referenceId,
          (id) => this.s.replace.run(r.type, r.identity, r.data, stagedOn, id, migrationNo, r.referenceId).changes > 0,
        )
      )
        continue;
      const at = freshAt.get(r.referenceId);
      if (at !== undefined) {
        fresh[at] = r;
        continue;
      }
      freshAt.set(r.referenceId, fresh.push(r) - 1);
    }
    const params: unknown[] = [];
    const whole = fresh.length - (fresh.length % INSERT_ROWS);
    for (let i = 0; i < fresh.length; i++) {
      const r = fresh[i]!;
      if (i >= whole) {
        byReference.add(
          r.referenceId,
          Number(this.s.insertOne.run(migrationNo, r.referenceId, r.type, r.identity, r.data, stagedOn).lastInsertRowid),
        );
        continue;
      }
      params.push(migrationNo, r.referenceId, r.type, r.identity, r.data, stagedOn);
      if (params.length === INSERT_ROWS * 6) {
        // The rows of one INSERT take consecutive rowids, the last one's reported.
        const last = Number(this.s.insertMany.run(params).lastInsertRowid);
        for (let k = 0; k < INSERT_ROWS; k++) byReference.add(fresh[i - INSERT_ROWS + 1 + k]!.referenceId, last - INSERT_ROWS + 1 + k);
        params.length = 0;
      }
    }
    return fresh.length;
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
    const migrationNo = this.s.numberOf.get(migrationId);
    if (migrationNo === undefined) return undefined;
    let row: StagedRow | undefined;
    this.rowsByReference(migrationNo).find(referenceId, (id) => (row = this.s.byId.get(id, migrationNo, referenceId)) !== undefined);
    return row;
  }

  exists(migrationId: string, referenceId: string): boolean {
    return this.byRef(migrationId, referenceId) !== undefined;
  }

  /** Deletes a staged record; false when there was none. Its map entry stays: a later check finds the row gone. */
  delete(migrationId: string, referenceId: string): boolean {
    const migrationNo = this.s.numberOf.get(migrationId);
    return (
      migrationNo !== undefined &&
      this.rowsByReference(migrationNo).find(referenceId, (id) => this.s.delete.run(id, migrationNo, referenceId).changes > 0)
    );
  }

  setImportState(id: number, state: ImportState): void {
    this.s.setImportState.run(state, id);
  }

  /** Identities shared by several staged records: each with the referenceIds sharing it. */
  /** The referenceIds of each group of staged records sharing an identity, in staging order. */
  duplicates(migrationId: string): string[][] {
    return this.s.duplicates
      .all(migrationId)
      .map((r) => (JSON.parse(r.ids) as Array<[number, string]>).sort((a, b) => a[0] - b[0]).map(([, ref]) => ref));
  }
}
