/**
 * The staging store finds a referenceId's row through a map held in memory, not a unique index
 * (src/service/migration/store-staging.ts). These tests hold it to what the index guaranteed: one
 * row per (migration, referenceId), a re-submission replaced in place, whatever happened before:
 * a rolled-back transaction, a deleted row, a restart, more migrations than the map holds.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/service/store/database.js';
import { createStagingTables, hash30, StagingStore, type StagingRow } from '../../src/service/migration/store-staging.js';

const M1 = '11111111-1111-4111-8111-111111111111';
const M2 = '22222222-2222-4222-8222-222222222222';
const ref = (n: number) => `00000000-0000-5000-8000-${String(n).padStart(12, '0')}`;
const row = (n: number, content = 'v1'): StagingRow => ({
  referenceId: ref(n),
  type: 'person',
  identity: null,
  data: JSON.stringify({ referenceId: ref(n), content }),
});
const NOW = '2026-11-23T00:00:00.000Z';

let dir: string;
let db: Db;
let store: StagingStore;

/** Every staged row of a migration in rowid order: [referenceId, content, rowid]. */
function rows(s: StagingStore, migrationId: string): Array<[string, string, number]> {
  return s.page(migrationId, 1_000_000, 0).map((r) => [r.reference_id, (JSON.parse(r.data) as { content: string }).content, r.id]);
}
const stage = (s: StagingStore, migrationId: string, batch: StagingRow[]) => db.transaction(() => s.upsertAll(migrationId, batch, NOW))();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'staging-store-'));
  db = openDatabase(dir);
  createStagingTables(db);
  store = new StagingStore(db);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('staging store without a unique index', () => {
  it('stages new records in order and replaces a re-submitted one in place, in the same batch or a later one', () => {
    // 250 rows: two whole multi-row inserts and 50 single ones; 7 appears twice (the later content wins, the first place stays).
    const first = Array.from({ length: 250 }, (_, i) => row(i));
    first.splice(120, 0, row(7, 'v2'));
    expect(stage(store, M1, first)).toBe(250);
    const staged = rows(store, M1);
    expect(staged.map((r) => r[0])).toEqual(Array.from({ length: 250 }, (_, i) => ref(i)));
    expect(staged[7]![1]).toBe('v2');
    expect(new Set(staged.map((r) => r[2])).size).toBe(250);

    // A later upload: 3 and 200 again (replaced where they are), 250 and 251 new.
    expect(stage(store, M1, [row(3, 'v3'), row(250), row(200, 'v3'), row(251)])).toBe(2);
    const after = rows(store, M1);
    expect(after).toHaveLength(252);
    expect(after[3]).toEqual([ref(3), 'v3', staged[3]![2]]);
    expect(after[200]).toEqual([ref(200), 'v3', staged[200]![2]]);
    expect(after.slice(250).map((r) => r[0])).toEqual([ref(250), ref(251)]);
    expect(store.count(M1)).toBe(252);
    expect(store.byRef(M1, ref(200))?.id).toBe(staged[200]![2]);
    expect(store.exists(M1, ref(252))).toBe(false);
  });

  it('keeps one row per referenceId after a transaction that rolled back', () => {
    stage(store, M1, [row(1), row(2)]);
    // A batch that fails after its inserts (as when staging closes under an upload): rolled back.
    expect(() =>
      db.transaction(() => {
        store.upsertAll(M1, [row(3), row(4), row(1, 'lost')], NOW);
        throw new Error('staging closed');
      })(),
    ).toThrow('staging closed');
    expect(rows(store, M1).map((r) => [r[0], r[1]])).toEqual([
      [ref(1), 'v1'],
      [ref(2), 'v1'],
    ]);
    expect(store.exists(M1, ref(3))).toBe(false);
    // The same records again, and another record that now takes the rowid 3 had for a moment.
    expect(stage(store, M1, [row(5), row(3), row(4), row(1, 'v2')])).toBe(3);
    expect(rows(store, M1).map((r) => [r[0], r[1]])).toEqual([
      [ref(1), 'v2'],
      [ref(2), 'v1'],
      [ref(5), 'v1'],
      [ref(3), 'v1'],
      [ref(4), 'v1'],
    ]);
    expect(store.byRef(M1, ref(3))).toMatchObject({ reference_id: ref(3) });
  });

  it('stages a deleted record again as a new row, once', () => {
    stage(store, M1, [row(1), row(2), row(3)]);
    expect(store.delete(M1, ref(2))).toBe(true);
    expect(store.delete(M1, ref(2))).toBe(false);
    expect(store.byRef(M1, ref(2))).toBeUndefined();
    expect(stage(store, M1, [row(2, 'back'), row(2, 'again')])).toBe(1);
    expect(rows(store, M1).map((r) => [r[0], r[1]])).toEqual([
      [ref(1), 'v1'],
      [ref(3), 'v1'],
      [ref(2), 'again'],
    ]);
  });

  it('finds what an earlier process staged (the map is read from the table), per migration', () => {
    stage(store, M1, [row(1), row(2)]);
    stage(store, M2, [row(1, 'm2')]);
    const restarted = new StagingStore(db);
    expect(restarted.byRef(M2, ref(1))).toMatchObject({ reference_id: ref(1) });
    expect(stage(restarted, M1, [row(2, 'v2'), row(3)])).toBe(1);
    expect(rows(restarted, M1).map((r) => [r[0], r[1]])).toEqual([
      [ref(1), 'v1'],
      [ref(2), 'v2'],
      [ref(3), 'v1'],
    ]);
    expect(rows(restarted, M2).map((r) => [r[0], r[1]])).toEqual([[ref(1), 'm2']]);
    expect(restarted.byRef(M1, ref(9))).toBeUndefined();
    expect(restarted.byRef('99999999-9999-4999-8999-999999999999', ref(1))).toBeUndefined();
  });

  it('reads a migration’s map again after more migrations than it holds were used', () => {
    const migrations = Array.from({ length: 7 }, (_, i) => `${String(i).repeat(8)}-0000-4000-8000-000000000000`);
    for (const [i, m] of migrations.entries()) stage(store, m, [row(1, `m${i}`), row(i + 2)]);
    for (const [i, m] of migrations.entries()) {
      expect(stage(store, m, [row(1, `again ${i}`), row(i + 2, 'again')])).toBe(0);
      expect(rows(store, m).map((r) => [r[0], r[1]])).toEqual([
        [ref(1), `again ${i}`],
        [ref(i + 2), 'again'],
      ]);
    }
  });

  it('keeps records apart whose referenceIds share the map’s hash', () => {
    // Two referenceIds with one hash, found by search (30 bits: a pair among a few 10,000 ids), and a third.
    const seen = new Map<number, number>();
    let pair: [number, number] | undefined;
    for (let n = 0; !pair; n++) {
      const h = hash30(ref(n));
      const earlier = seen.get(h);
      if (earlier !== undefined) pair = [earlier, n];
      seen.set(h, n);
    }
    const [a, c] = pair;
    const b = c + 1;
    expect(hash30(ref(a)) === hash30(ref(c)) && hash30(ref(b)) !== hash30(ref(a))).toBe(true);
    expect(stage(store, M1, [row(a), row(b)])).toBe(2);
    expect(stage(store, M1, [row(b, 'v2'), row(c), row(a, 'v2')])).toBe(1);
    expect(store.delete(M1, ref(a))).toBe(true);
    expect(rows(store, M1).map((r) => [r[0], r[1]])).toEqual([
      [ref(b), 'v2'],
      [ref(c), 'v1'],
    ]);
    expect(store.byRef(M1, ref(c))).toMatchObject({ reference_id: ref(c) });
    expect(store.exists(M1, ref(a))).toBe(false);
    expect(stage(store, M1, [row(a, 'v3')])).toBe(1);
    expect(rows(store, M1).map((r) => [r[0], r[1]])).toEqual([
      [ref(b), 'v2'],
      [ref(c), 'v1'],
      [ref(a), 'v3'],
    ]);
  });

  it('finds every record again after its map grew three quarters full several times, and past rowid 2³²', () => {
    // 6,000 records: the map grows from 1,024 slots to 8,192, each time at three quarters.
    const many = Array.from({ length: 6000 }, (_, i) => row(i));
    expect(stage(store, M1, many)).toBe(6000);
    expect(
      stage(
        store,
        M1,
        many.map((r, i) => (i % 3 === 0 ? row(i, 'v2') : r)),
      ),
    ).toBe(0);
    const staged = rows(store, M1);
    expect(staged.map((r) => r[0])).toEqual(many.map((r) => r.referenceId));
    expect(staged.filter((r) => r[1] === 'v2')).toHaveLength(2000);
    // A database whose rowids passed 2³²: the map's 32-bit rowids give way to doubles.
    db.prepare(
      "INSERT INTO staged_counterparties (id, migration_no, reference_id, type, data, staged_on) VALUES (?, 99, 'x', 'person', '{}', ?)",
    ).run(2 ** 32 + 5, NOW);
    expect(stage(store, M1, [row(6000), row(6001)])).toBe(2);
    expect(stage(store, M1, [row(6001, 'v2'), row(5, 'v3')])).toBe(0);
    const last = rows(store, M1).slice(-2);
    expect(last.map((r) => [r[0], r[1], r[2] > 2 ** 32])).toEqual([
      [ref(6000), 'v1', true],
      [ref(6001), 'v2', true],
    ]);
    expect(store.byRef(M1, ref(5))).toMatchObject({ reference_id: ref(5), data: JSON.stringify({ referenceId: ref(5), content: 'v3' }) });
  });
});

describe('staging store past its map’s bound (referenceIds moved to runs in the database)', () => {
  const runs = (migrationNo = 1) =>
    db.prepare('SELECT COUNT(*) FROM staged_reference_spills WHERE migration_no = ?').pluck().get(migrationNo);
  const batches = (from: number, to: number, content = 'v1', size = 100) =>
    Array.from({ length: Math.ceil((to - from) / size) }, (_, b) =>
      Array.from({ length: Math.min(size, to - from - b * size) }, (_, i) => row(from + b * size + i, content)),
    );

  it('replaces, finds and deletes records in runs as in the map, after a restart too', () => {
    const small = new StagingStore(db, { hotRecords: 50 });
    for (const b of batches(0, 1000)) stage(small, M1, b);
    expect(runs()).toBeGreaterThanOrEqual(9);
    // Every third record again with new content, and 20 new ones: replaced in place, none twice.
    const again = Array.from({ length: 334 }, (_, i) => row(i * 3, 'v2')).concat(Array.from({ length: 20 }, (_, i) => row(1000 + i)));
    expect(stage(small, M1, again.slice(0, 200)) + stage(small, M1, again.slice(200))).toBe(20);
    const staged = rows(small, M1);
    expect(staged.map((r) => r[0])).toEqual(Array.from({ length: 1020 }, (_, i) => ref(i)));
    expect(staged.map((r) => r[1])).toEqual(Array.from({ length: 1020 }, (_, i) => (i < 1000 && i % 3 === 0 ? 'v2' : 'v1')));
    expect(small.delete(M1, ref(7))).toBe(true);
    expect([small.exists(M1, ref(7)), small.exists(M1, ref(8)), small.exists(M1, ref(5000))]).toEqual([false, true, false]);
    const restarted = new StagingStore(db, { hotRecords: 50 });
    expect(restarted.byRef(M1, ref(9))).toMatchObject({
      reference_id: ref(9),
      data: JSON.stringify({ referenceId: ref(9), content: 'v2' }),
    });
    expect(stage(restarted, M1, [row(7, 'back'), row(8, 'v3'), row(1019, 'v3')])).toBe(1);
    const after = rows(restarted, M1);
    expect(after).toHaveLength(1020);
    expect(after.slice(-1)).toEqual([[ref(7), 'back', after[after.length - 1]![2]]]);
    expect(after.filter((r) => r[1] === 'v3').map((r) => r[0])).toEqual([ref(8), ref(1019)]);
  });

  it('reads the map again when the transaction that wrote a run rolled back', () => {
    const small = new StagingStore(db, { hotRecords: 50 });
    for (const b of batches(0, 60)) stage(small, M1, b);
    expect(runs()).toBe(0);
    expect(() =>
      db.transaction(() => {
        small.upsertAll(M1, [row(60), row(3, 'lost')], NOW); // the map holds 60: its entries go to run 1 first
        throw new Error('staging closed');
      })(),
    ).toThrow('staging closed');
    expect(runs()).toBe(0);
    expect(stage(small, M1, [row(3, 'v2'), row(59, 'v2'), row(60)])).toBe(1);
    const staged = rows(small, M1);
    expect(staged.map((r) => r[0])).toEqual(Array.from({ length: 61 }, (_, i) => ref(i)));
    expect(staged.filter((r) => r[1] === 'v2').map((r) => r[0])).toEqual([ref(3), ref(59)]);
    expect(runs()).toBe(1);
  });

  it('keeps the map at the size of its first fill and 1.25 bytes a record of filter, every record in the map or in exactly one run', () => {
    // 3,000 records fit 4,096 slots at three quarters with a batch of 50 more: the map never grows past them.
    const small = new StagingStore(db, { hotRecords: 3000 });
    const sizes: number[] = [];
    for (const b of batches(0, 20_000, 'v1', 50)) {
      stage(small, M1, b);
      const held = small.memoryOf(M1)!;
      expect(held.records).toBeLessThanOrEqual(3050);
      sizes.push(held.mapBytes);
    }
    expect(Math.max(...sizes)).toBe(4096 * 8);
    expect(sizes.slice(sizes.indexOf(4096 * 8))).toEqual(sizes.slice(sizes.indexOf(4096 * 8)).map(() => 4096 * 8));
    const held = small.memoryOf(M1)!;
    expect(held.runs).toBe(6);
    expect(held.runs).toBe(runs());
    const spilled = db.prepare('SELECT SUM(records) FROM staged_reference_spills WHERE migration_no = 1').pluck().get() as number;
    expect(spilled + held.records).toBe(20_000);
    expect(held.filterBytes).toBeLessThanOrEqual(spilled * 1.25 + held.runs * 4);
    // Each staged record's (hash, rowid) is in exactly one run or, past the last run, in the map.
    const inRuns = db
      .prepare<[], { hash: number; id: number; n: number }>(
        'SELECT hash, id, COUNT(*) AS n FROM staged_reference_runs WHERE migration_no = 1 GROUP BY hash, id ORDER BY id',
      )
      .all();
    const through = db.prepare('SELECT MAX(through_id) FROM staged_reference_spills WHERE migration_no = 1').pluck().get() as number;
    const staged = rows(small, M1);
    expect(inRuns).toEqual(staged.filter((r) => r[2] <= through).map((r) => ({ hash: hash30(r[0]) + 1, id: r[2], n: 1 })));
    expect(staged.filter((r) => r[2] > through)).toHaveLength(held.records);
    // Re-submitted, from every run and the map: replaced in place, none added.
    expect(
      stage(
        small,
        M1,
        Array.from({ length: 40 }, (_, i) => row(i * 499, 'v2')),
      ),
    ).toBe(0);
    expect(
      rows(small, M1)
        .filter((r) => r[1] === 'v2')
        .map((r) => r[0]),
    ).toEqual(Array.from({ length: 40 }, (_, i) => ref(i * 499)));
  });

  it('moves a database’s staged records into runs as it reads them, when they are more than the map holds', () => {
    for (const b of batches(0, 300)) stage(store, M1, b);
    expect(runs()).toBe(0);
    const small = new StagingStore(db, { hotRecords: 50 });
    expect(stage(small, M1, [row(0, 'v2'), row(299, 'v2'), row(300)])).toBe(1);
    expect(runs()).toBe(1);
    expect(
      rows(small, M1)
        .filter((r) => r[1] === 'v2')
        .map((r) => r[0]),
    ).toEqual([ref(0), ref(299)]);
    expect(small.count(M1)).toBe(301);
  });
});
