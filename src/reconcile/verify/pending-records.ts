/**
 * What `verify` knows so far of the records it has met only some sides of, keyed by referenceId:
 * the ledger's import of the record, the record rebuilt from the export, the live record the
 * platform streamed. The three come in nearly the same order (the export's), so a record waits
 * here only until its last side comes, and few wait at a time. At most `bound` records wait in
 * memory; when more would, the oldest quarter go to a scratch table (their JSON): memory stays
 * bounded whatever the order, and only the overflow pays for the round trip through the file.
 */
import type Database from 'better-sqlite3';

/** Spilled at once when the bound is passed: a quarter of it, so spills come in runs, not one by one. */
const SPILL_SHARE = 4;

export class PendingRecords<T> {
  private readonly waiting = new Map<string, T>();
  /** Records put in the scratch table so far (for tests and the bench). */
  spilled = 0;
  /** Records in the scratch table now: while none, a record missing in memory is missing. */
  private inTable = 0;
  private readonly putStmt: Database.Statement<[string, string]>;
  private readonly takeStmt: Database.Statement<[string], { data: string }>;

  /**
   * @param db the scratch database (a table is made in it)
   * @param bound how many records may wait in memory (at least 1)
   */
  constructor(
    private readonly db: Database.Database,
    readonly bound: number,
  ) {
    if (!(bound >= 1)) throw new RangeError(`pending bound must be at least 1, got ${bound}`);
    db.exec('CREATE TABLE IF NOT EXISTS waiting (reference_id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID');
    this.putStmt = db.prepare<[string, string]>('INSERT OR REPLACE INTO waiting (reference_id, data) VALUES (?, ?)');
    this.takeStmt = db.prepare<[string], { data: string }>('DELETE FROM waiting WHERE reference_id = ? RETURNING data');
  }

  /** The record waiting under this referenceId, taken out (from memory, else from the scratch table); undefined when none waits. */
  take(referenceId: string): T | undefined {
    const held = this.waiting.get(referenceId);
    if (held !== undefined) {
      this.waiting.delete(referenceId);
      return held;
    }
    if (this.inTable === 0) return undefined;
    const row = this.takeStmt.get(referenceId);
    if (!row) return undefined;
    this.inTable--;
    return JSON.parse(row.data) as T;
  }

  /** Sets the record down to wait (as the youngest; one already waiting under the referenceId is replaced). */
  put(referenceId: string, record: T): void {
    this.waiting.delete(referenceId);
    this.waiting.set(referenceId, record);
    if (this.waiting.size > this.bound) this.spill();
  }

  /** How many wait in memory. */
  get inMemory(): number {
    return this.waiting.size;
  }

  /** The oldest go to the scratch table (a Map iterates in insertion order). */
  private spill(): void {
    let n = Math.max(1, Math.floor(this.bound / SPILL_SHARE));
    for (const [referenceId, record] of this.waiting) {
      if (n-- === 0) break;
      this.putStmt.run(referenceId, JSON.stringify(record));
      this.inTable++;
      this.waiting.delete(referenceId);
      this.spilled++;
    }
  }

  /** Every record still waiting (in memory, then in the scratch table), taken out as they come. */
  *remaining(): Generator<[string, T]> {
    for (const [referenceId, record] of this.waiting) {
      this.waiting.delete(referenceId);
      yield [referenceId, record];
    }
    if (this.inTable === 0) return;
    // A thousand at a time, each page taken out whole: the caller runs statements between records.
    const page = this.db.prepare<[], { reference_id: string; data: string }>(
      'DELETE FROM waiting WHERE reference_id IN (SELECT reference_id FROM waiting LIMIT 1000) RETURNING reference_id, data',
    );
    for (let rows = page.all(); rows.length > 0; rows = page.all()) {
      this.inTable -= rows.length;
      for (const r of rows) yield [r.reference_id, JSON.parse(r.data) as T];
    }
  }
}
