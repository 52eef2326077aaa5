/**
 * PendingPairs (src/reconcile/verify/pending-pairs.ts): at most `bound` records wait in memory,
 * the oldest of the fuller side go to the scratch table, and every record put is taken back
 * exactly once, from memory or from the table, whatever the bound.
 */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { PendingPairs, type PairSide } from '../../src/reconcile/verify/pending-pairs.js';

interface Rec {
  id: string;
  n: number;
  tags: string[];
}

describe('PendingPairs', () => {
  it('keeps at most the bound in memory, spills the oldest of the fuller side and says which', () => {
    const db = new Database(':memory:');
    const told: Array<[PairSide, string]> = [];
    const pairs = new PendingPairs<Rec, Rec>(db, 8, (side, id) => told.push([side, id]));
    for (let i = 0; i < 6; i++) pairs.put('live', `L${i}`, { id: `L${i}`, n: i, tags: ['a'] });
    for (let i = 0; i < 3; i++) pairs.put('expected', `E${i}`, { id: `E${i}`, n: i, tags: [] });
    // The ninth passed the bound: a quarter of it (2), the oldest of the live side, went out.
    expect(told).toEqual([
      ['live', 'L0'],
      ['live', 'L1'],
    ]);
    expect(pairs.inMemory).toEqual({ live: 4, expected: 3 });
    expect(pairs.spilled).toEqual({ live: 2, expected: 0 });
    expect(pairs.hasInMemory('live', 'L0')).toBe(false);
    expect(pairs.takeInMemory('live', 'L0')).toBeUndefined();
    expect(pairs.take('live', 'L0')).toEqual({ id: 'L0', n: 0, tags: ['a'] });
    expect(pairs.take('live', 'L0')).toBeUndefined();
    expect(pairs.take('live', 'L5')).toEqual({ id: 'L5', n: 5, tags: ['a'] });
    expect(pairs.take('expected', 'nobody')).toBeUndefined();
    expect([...pairs.remaining('live')].map(([id]) => id)).toEqual(['L2', 'L3', 'L4', 'L1']);
    expect([...pairs.remaining('live')]).toEqual([]);
    db.close();
  });

  it('gives back every record put exactly once, whatever the bound', () => {
    for (const bound of [1, 3, 50, 1000]) {
      const db = new Database(':memory:');
      const pairs = new PendingPairs<Rec, Rec>(db, bound);
      const got = new Map<string, number>();
      // Live records come ahead of the expected ones, out of order by up to 7 places.
      const ids = Array.from({ length: 300 }, (_, i) => `r${i}`);
      const late = [...ids].sort((a, b) => (Number(a.slice(1)) % 7) - (Number(b.slice(1)) % 7));
      for (let i = 0; i < ids.length; i++) {
        const live = ids[i]!;
        const expected = pairs.take('expected', live);
        if (expected) got.set(live, (got.get(live) ?? 0) + 1);
        else pairs.put('live', live, { id: live, n: i, tags: [] });
        const want = late[i]!;
        const held = pairs.take('live', want);
        if (held) got.set(want, (got.get(want) ?? 0) + 1);
        else pairs.put('expected', want, { id: want, n: i, tags: [] });
      }
      expect([...pairs.remaining('live')], `bound ${bound}`).toEqual([]);
      expect([...pairs.remaining('expected')], `bound ${bound}`).toEqual([]);
      expect(got.size, `bound ${bound}`).toBe(300);
      expect(
        [...got.values()].every((n) => n === 1),
        `bound ${bound}`,
      ).toBe(true);
      if (bound < 50) expect(pairs.spilled.live + pairs.spilled.expected, `bound ${bound}`).toBeGreaterThan(0);
      db.close();
    }
  });

  it('refuses a bound below one', () => {
    expect(() => new PendingPairs(new Database(':memory:'), 0)).toThrow('pending bound must be at least 1, got 0');
  });
});
