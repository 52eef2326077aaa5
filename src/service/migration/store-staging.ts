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
 *
 * The map is bounded: once it holds `hotRecords` records of a migration (1,500,000 by default:
 * under three quarters of 2²¹ slots, 17 MB), its entries go to the database as one run (the
 * staged_reference_runs table, (hash, rowid) in hash order: appended, not scattered like a
 * unique index's pages) and the map is emptied in place, keeping its size. For each run a Bloom
 * filter stays in memory (1.25 bytes a record): a referenceId is looked up in a run only when
 * that run's filter says it may be there, which for a new referenceId is about 1% of runs. So a
 * migration of ten million records holds 17 MB of map and 13 MB of filters instead of a 400 MB
 * map. A run is written in the staging transaction that filled the map; staged_reference_spills
 * notes each run, and a map that holds more runs than the database (their transaction rolled
 * back) is read again.
 */
import type { Db } from '../store/database.js';
import { HashFilter } from './hash-filter.js';

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

/** Migrations whose rows are held in memory at once (a map of at most 17 MB and their runs' filters each). */
const MIGRATIONS_HELD = 4;

/** Records of a migration the map holds before they go to a run (a batch more still fits three quarters of 2²¹ slots). */
const HOT_RECORDS = 1_500_000;

/** Rows per multi-row insert of a run (4 parameters each). */
const RUN_INSERT_ROWS = 200;

/** A run is sorted a slice of the map at a time: 32 slices, a buffer of about 375 kB at 1,500,000 records. */
const SORT_SLICES = 32;

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
 * A hash's first slot is its top bits, so the slots are in hash order but within a cluster: a run
 * is written in hash order from one slice of slots at a time (`inHashOrder`).
 * Rowids past 2³² (four billion staged rows) turn the rowids into doubles (12 bytes a slot).
 */
class RowsByReference {
  /** hash30 + 1 of the slot's referenceId; 0: empty. */
  private hashes = new Int32Array(1024);
  private ids: Uint32Array | Float64Array = new Uint32Array(1024);
  /** 30 − log2(capacity): a hash's first slot is (hash30 >>> shift). */
  private shift = 20;
  private count = 0;

  /** Calls `test` on each candidate rowid of a referenceId's hash (hash30 + 1) until it returns true; whether one did. */
  find(h: number, test: (id: number) => boolean): boolean {
    const mask = this.hashes.length - 1;
    for (let slot = (h - 1) >>> this.shift; this.hashes[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.hashes[slot] === h && test(this.ids[slot]!)) return true;
    }
    return false;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Calls `each` on every entry (hash30 + 1, rowid) in hash order (a run is written so). Sorting
   * the whole table at once took a buffer of 8 bytes an entry (12 MB at 1,500,000) beside the
   * table. The entries whose first slot is in one slice of the table lie in that slice and in the
   * cluster running past its end (for the last slice, on from slot 0): they are sorted one slice
   * at a time in a buffer of the largest slice's size, the table read about once.
   */
  inHashOrder(each: (h: number, id: number) => void): void {
    const { hashes, ids, shift } = this;
    const capacity = hashes.length;
    const mask = capacity - 1;
    const slices = Math.min(SORT_SLICES, capacity);
    const width = capacity / slices;
    const sliceShift = shift + Math.log2(width);
    const sizes = new Int32Array(slices);
    for (let slot = 0; slot < capacity; slot++) if (hashes[slot] !== 0) sizes[(hashes[slot]! - 1) >>> sliceShift]!++;
    const buffer = new Float64Array(Math.max(0, ...sizes));
    for (let slice = 0; slice < slices; slice++) {
      const order = buffer.subarray(0, sizes[slice]);
      let n = 0;
      // hash30 + 1 (31 bits) × capacity + slot fits a double exactly (capacity ≤ 2²²): the typed array's own sort.
      for (let at = slice * width, end = at + width; ; at++) {
        const slot = at & mask;
        const h = hashes[slot]!;
        if (h === 0) {
          if (at >= end) break;
          continue;
        }
        if ((h - 1) >>> sliceShift === slice) order[n++] = h * capacity + slot;
      }
      order.sort();
      for (const v of order) {
        const slot = v % capacity;
        each(hashes[slot]!, ids[slot]!);
      }
    }
  }

  /** Forgets every entry and keeps the room (a map that filled once is about to fill again). */
  clear(): void {
    this.hashes.fill(0);
    this.count = 0;
  }

  /** Bytes of the typed arrays (for the tests of the bound). */
  get bytes(): number {
    return this.hashes.byteLength + this.ids.byteLength;
  }

  add(referenceId: string, id: number): void {
    this.addHashed(hash30(referenceId) + 1, id);
  }

  /** `add` of a hash already taken (hash30 + 1). */
  addHashed(h: number, id: number): void {
    if ((this.count + 1) * 4 > this.hashes.length * 3) this.grow(this.hashes.length * 2);
    if (id > 0xffffffff && this.ids instanceof Uint32Array) this.ids = Float64Array.from(this.ids);
    this.put(h, id);
  }

  private put(h: number, id: number): void {
    const mask = this.hashes.length - 1;
    let slot = (h - 1) >>> this.shift;
    for (; this.hashes[slot] !== 0; slot = (slot + 1) & mask) if (this.hashes[slot] === h && this.ids[slot] === id) return;
    this.hashes[slot] = h;
    this.ids[slot] = id;
    this.count++;
  }

  private grow(capacity: number): void {
    const { hashes, ids } = this;
    this.hashes = new Int32Array(capacity);
    this.ids = ids instanceof Uint32Array ? new Uint32Array(capacity) : new Float64Array(capacity);
    this.shift = 30 - Math.log2(capacity);
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
      CREATE TABLE IF NOT EXISTS staged_reference_runs (
        migration_no INTEGER NOT NULL,
        run INTEGER NOT NULL,
        hash INTEGER NOT NULL,
        id INTEGER NOT NULL,
        PRIMARY KEY (migration_no, run, hash, id)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS staged_reference_spills (
        migration_no INTEGER NOT NULL,
        run INTEGER NOT NULL,
        through_id INTEGER NOT NULL,
        records INTEGER NOT NULL,
        PRIMARY KEY (migration_no, run));
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

/** Where a migration's referenceIds are: the map of those in no run yet, and a filter per run (run n at n − 1). */
interface References {
  map: RowsByReference;
  runs: HashFilter[];
  /** The largest rowid in a run (0: none): every row after it is in the map. */
  through: number;
}

export class StagingStore {
  private readonly s;
  /** Where the referenceIds of the migrations in use are, by migration number (oldest use first). */
  private readonly held = new Map<number, References>();
  private readonly hotRecords: number;

  constructor(
    private readonly db: Db,
    /** The records a migration's map holds before they go to a run (the tests make it small). */
    options: { hotRecords?: number } = {},
  ) {
    this.hotRecords = options.hotRecords ?? HOT_RECORDS;
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
      /** The referenceIds of a migration with their rowids, a page at a time after a rowid (to fill the map). */
      referencesAfter: db.prepare<[number, number, number], { id: number; reference_id: string }>(
        'SELECT id, reference_id FROM staged_counterparties WHERE migration_no = ? AND id > ? ORDER BY id LIMIT ?',
      ),
      spills: db.prepare<[number], { run: number; through_id: number; records: number }>(
        'SELECT run, through_id, records FROM staged_reference_spills WHERE migration_no = ? ORDER BY run',
      ),
      lastRun: db.prepare<[number], number>('SELECT COALESCE(MAX(run), 0) FROM staged_reference_spills WHERE migration_no = ?').pluck(),
      addSpill: db.prepare<[number, number, number, number]>(
        'INSERT INTO staged_reference_spills (migration_no, run, through_id, records) VALUES (?, ?, ?, ?)',
      ),
      runHashes: db.prepare<[number, number], number>('SELECT hash FROM staged_reference_runs WHERE migration_no = ? AND run = ?').pluck(),
      inRun: db
        .prepare<[number, number, number], number>('SELECT id FROM staged_reference_runs WHERE migration_no = ? AND run = ? AND hash = ?')
        .pluck(),
      runInsertOne: db.prepare<[number, number, number, number]>(
        'INSERT INTO staged_reference_runs (migration_no, run, hash, id) VALUES (?, ?, ?, ?)',
      ),
      runInsertMany: db.prepare<unknown[]>(
        `INSERT INTO staged_reference_runs (migration_no, run, hash, id) VALUES ${Array<string>(RUN_INSERT_ROWS).fill('(?, ?, ?, ?)').join(', ')}`,
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

  /**
   * Where the migration's referenceIds are: read from the tables on first use after start, and
   * again when the database holds fewer runs than the memory (a run's transaction rolled back).
   */
  private references(migrationNo: number): References {
    let refs = this.held.get(migrationNo);
    if (refs && this.s.lastRun.get(migrationNo) === refs.runs.length) {
      this.held.delete(migrationNo); // most recently used last
    } else {
      this.held.delete(migrationNo);
      refs = this.load(migrationNo);
      if (this.held.size >= MIGRATIONS_HELD) this.held.delete(this.held.keys().next().value!);
    }
    this.held.set(migrationNo, refs);
    return refs;
  }

  private load(migrationNo: number): References {
    const refs: References = { map: new RowsByReference(), runs: [], through: 0 };
    for (const spill of this.s.spills.all(migrationNo)) {
      const filter = new HashFilter(spill.records);
      for (const h of this.s.runHashes.iterate(migrationNo, spill.run)) filter.add(h);
      refs.runs.push(filter);
      refs.through = spill.through_id;
    }
    // A page at a time, so a map that fills (a database from before runs) goes to a run between pages.
    for (let after = refs.through; ; ) {
      const page = this.s.referencesAfter.all(migrationNo, after, 100_000);
      if (page.length === 0) break;
      for (const r of page) refs.map.add(r.reference_id, r.id);
      after = page[page.length - 1]!.id;
      if (refs.map.size >= this.hotRecords) this.spill(migrationNo, refs);
    }
    return refs;
  }

  /** Moves the map's entries to a new run in the database, in hash order, and empties the map. */
  private spill(migrationNo: number, refs: References): void {
    const run = refs.runs.length + 1;
    const filter = new HashFilter(refs.map.size);
    let through = refs.through;
    this.db.transaction(() => {
      const params: number[] = [];
      refs.map.inHashOrder((h, id) => {
        filter.add(h);
        if (id > through) through = id;
        params.push(migrationNo, run, h, id);
        if (params.length === RUN_INSERT_ROWS * 4) {
          this.s.runInsertMany.run(params);
          params.length = 0;
        }
      });
      for (let i = 0; i < params.length; i += 4) this.s.runInsertOne.run(migrationNo, run, params[i + 2]!, params[i + 3]!);
      this.s.addSpill.run(migrationNo, run, through, refs.map.size);
    })();
    refs.runs.push(filter);
    refs.through = through;
    refs.map.clear();
  }

  /**
   * What a migration's referenceIds take in memory now (for the tests of the bound): the records
   * in the map and its bytes, the runs and their filters' bytes; undefined when not held.
   */
  memoryOf(migrationId: string): { records: number; mapBytes: number; runs: number; filterBytes: number } | undefined {
    const migrationNo = this.s.numberOf.get(migrationId);
    const refs = migrationNo === undefined ? undefined : this.held.get(migrationNo);
    if (!refs) return undefined;
    return {
      records: refs.map.size,
      mapBytes: refs.map.bytes,
      runs: refs.runs.length,
      filterBytes: refs.runs.reduce((n, f) => n + f.bytes, 0),
    };
  }

  /** Calls `test` on each candidate rowid of a referenceId (the map's, then each run's that may hold it) until it returns true. */
  private find(migrationNo: number, refs: References, referenceId: string, test: (id: number) => boolean): boolean {
    const h = hash30(referenceId) + 1;
    if (refs.map.find(h, test)) return true;
    for (let run = refs.runs.length; run > 0; run--) {
      if (!refs.runs[run - 1]!.mayHave(h)) continue;
      for (const id of this.s.inRun.all(migrationNo, run, h)) if (test(id)) return true;
    }
    return false;
  }

  /**
   * Stages records in order, each replacing the one with the same referenceId in place (inside the caller's transaction).
   * Returns how many were new to the migration.
   */
  upsertAll(migrationId: string, rows: readonly StagingRow[], stagedOn: string): number {
    const migrationNo = this.migrationNo(migrationId);
    const refs = this.references(migrationNo);
    if (refs.map.size >= this.hotRecords) this.spill(migrationNo, refs);
    const byReference = refs.map;
    // New records, inserted INSERT_ROWS to a statement; a referenceId twice among them keeps the
    // first one's place and takes the later content, as a replacement would.
    const fresh: StagingRow[] = [];
    const freshAt = new Map<string, number>();
    for (const r of rows) {
      if (
        this.find(
          migrationNo,
          refs,
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
    this.find(
      migrationNo,
      this.references(migrationNo),
      referenceId,
      (id) => (row = this.s.byId.get(id, migrationNo, referenceId)) !== undefined,
    );
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
      this.find(migrationNo, this.references(migrationNo), referenceId, (id) => this.s.delete.run(id, migrationNo, referenceId).changes > 0)
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
