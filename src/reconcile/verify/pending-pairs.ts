/**
 * The two sides of a record that `verify` sets side by side, met in one pass: the live record
 * (streamed from the platform) and the expected one (rebuilt from the export), each keyed by
 * referenceId. Whichever side comes first waits here for the other. The stream's order (the
 * platform's import order) and the export's order are close, so few wait at a time; at most
 * `bound` wait in memory, and the oldest of the fuller side go to a scratch table (their JSON)
 * when more would: memory stays bounded whatever the order, and only the overflow pays for the
 * round trip through the file.
 */
import type Database from 'better-sqlite3';

export type PairSide = 'live' | 'expected';

/** Spilled at once when the bound is passed: a quarter of it, so spills come in runs, not one by one. */
const SPILL_SHARE = 4;

export class PendingPairs<Live, Expected> {
  private readonly waiting: { live: Map<string, Live>; expected: Map<string, Expected> } = { live: new Map(), expected: new Map() };
  /** Records each side has had to put in the scratch table (for tests and the bench). */
  readonly spilled = { live: 0, expected: 0 };
  private readonly stmt: Record<
    PairSide,
    { put: Database.Statement<[string, string]>; take: Database.Statement<[string], { data: string }> }
  >;

  /**
   * @param db the scratch database (a table per side is made in it)
   * @param bound how many records may wait in memory, both sides together (at least 1)
   * @param onSpill told of each record put in the scratch table (the caller notes that it waits there)
   */
  constructor(
    private readonly db: Database.Database,
    readonly bound: number,
    private readonly onSpill: (side: PairSide, referenceId: string) => void = () => undefined,
  ) {
    if (!(bound >= 1)) throw new RangeError(`pending bound must be at least 1, got ${bound}`);
    const stmts = (side: PairSide) => {
      db.exec(`CREATE TABLE IF NOT EXISTS waiting_${side} (reference_id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID`);
      return {
        put: db.prepare<[string, string]>(`INSERT OR REPLACE INTO waiting_${side} (reference_id, data) VALUES (?, ?)`),
        take: db.prepare<[string], { data: string }>(`DELETE FROM waiting_${side} WHERE reference_id = ? RETURNING data`),
      };
    };
    this.stmt = { live: stmts('live'), expected: stmts('expected') };
  }

  /** The side's record waiting under this referenceId, taken out (from memory, else from the scratch table); undefined when none waits. */
  take<S extends PairSide>(side: S, referenceId: string): (S extends 'live' ? Live : Expected) | undefined {
    type T = S extends 'live' ? Live : Expected;
    const map = this.waiting[side] as Map<string, T>;
    const held = map.get(referenceId);
    if (held !== undefined) {
      map.delete(referenceId);
      return held;
    }
    if (this.spilled[side] === 0) return undefined;
    const row = this.stmt[side].take.get(referenceId);
    return row ? (JSON.parse(row.data) as T) : undefined;
  }

  /** Only what waits in memory (no look in the scratch table): the cheap first look of the common case. */
  takeInMemory<S extends PairSide>(side: S, referenceId: string): (S extends 'live' ? Live : Expected) | undefined {
    type T = S extends 'live' ? Live : Expected;
    const map = this.waiting[side] as Map<string, T>;
    const held = map.get(referenceId);
    if (held !== undefined) map.delete(referenceId);
    return held;
  }

  /** Whether the side's record of this referenceId waits in memory. */
  hasInMemory(side: PairSide, referenceId: string): boolean {
    return this.waiting[side].has(referenceId);
  }

  /** Sets the record down to wait for its other side (a later one of the same referenceId replaces it). */
  put<S extends PairSide>(side: S, referenceId: string, record: S extends 'live' ? Live : Expected): void {
    const map = this.waiting[side] as Map<string, typeof record>;
    map.delete(referenceId); // so that a replaced one counts as the youngest
    map.set(referenceId, record);
    if (this.waiting.live.size + this.waiting.expected.size > this.bound) this.spill();
  }

  /** How many wait in memory, per side. */
  get inMemory(): { live: number; expected: number } {
    return { live: this.waiting.live.size, expected: this.waiting.expected.size };
  }

  /** The oldest of the side with more waiting go to the scratch table (a Map iterates in insertion order). */
  private spill(): void {
    const side: PairSide = this.waiting.live.size >= this.waiting.expected.size ? 'live' : 'expected';
    const map = this.waiting[side] as Map<string, unknown>;
    let n = Math.max(1, Math.floor(this.bound / SPILL_SHARE));
    for (const [referenceId, record] of map) {
      if (n-- === 0) break;
      this.stmt[side].put.run(referenceId, JSON.stringify(record));
      map.delete(referenceId);
      this.spilled[side]++;
      this.onSpill(side, referenceId);
    }
  }

  /** Every record of the side still waiting (in memory, then in the scratch table), taken out as they come. */
  *remaining<S extends PairSide>(side: S): Generator<[string, S extends 'live' ? Live : Expected]> {
    type T = S extends 'live' ? Live : Expected;
    const map = this.waiting[side] as Map<string, T>;
    for (const [referenceId, record] of map) {
      map.delete(referenceId);
      yield [referenceId, record];
    }
    if (this.spilled[side] === 0) return;
    // A thousand at a time, each page taken out whole: the caller runs statements between records.
    const page = this.db.prepare<[], { reference_id: string; data: string }>(
      `DELETE FROM waiting_${side} WHERE reference_id IN (SELECT reference_id FROM waiting_${side} LIMIT 1000) RETURNING reference_id, data`,
    );
    for (let rows = page.all(); rows.length > 0; rows = page.all()) for (const r of rows) yield [r.reference_id, JSON.parse(r.data) as T];
  }
}
