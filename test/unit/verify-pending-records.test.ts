/**
 * PendingRecords (src/reconcile/verify/pending-records.ts): at most `bound` records wait in
 * memory, the oldest go to the scratch table, and every record put is taken back exactly once,
 * from memory or from the table, whatever the bound.
 */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { PendingRecords } from '../../src/reconcile/verify/pending-records.js';

interface Rec {
  id: string;
  n: number;
  tags: string[];
}

describe('PendingRecords', () => {
  it('keeps at most the bound in memory and spills the oldest, a quarter of the bound at a time', () => {
    const db = new Database(':memory:');
    const pending = new PendingRecords<Rec>(db, 8);
    for (let i = 0; i < 9; i++) pending.put(`R${i}`, { id: `R${i}`, n: i, tags: i % 2 ? ['a'] : [] });
    // The ninth passed the bound: a quarter of it (2), the oldest, went to the table.
    expect(pending.inMemory).toBe(7);
    expect(pending.spilled).toBe(2);
    expect(db.prepare('SELECT reference_id FROM waiting ORDER BY reference_id').pluck().all()).toEqual(['R0', 'R1']);
    expect(pending.take('R1')).toEqual({ id: 'R1', n: 1, tags: ['a'] });
    expect(pending.take('R1')).toBeUndefined();
    expect(pending.take('R5')).toEqual({ id: 'R5', n: 5, tags: ['a'] });
    expect(pending.take('nobody')).toBeUndefined();
    // Put back, a record is the youngest: the next spill takes the others first.
    pending.put('R2', { id: 'R2', n: 20, tags: [] });
    expect([...pending.remaining()].map(([id, r]) => `${id}:${r.n}`)).toEqual(['R3:3', 'R4:4', 'R6:6', 'R7:7', 'R8:8', 'R2:20', 'R0:0']);
    expect([...pending.remaining()]).toEqual([]);
    db.close();
  });

  it('gives back every record put exactly once, whatever the bound', () => {
    for (const bound of [1, 3, 50, 1000]) {
      const db = new Database(':memory:');
      const pending = new PendingRecords<Rec>(db, bound);
      const got = new Map<string, number>();
      // Two sides of each record come, the second out of order by up to 7 places.
      const ids = Array.from({ length: 300 }, (_, i) => `r${i}`);
      const late = [...ids].sort((a, b) => (Number(a.slice(1)) % 7) - (Number(b.slice(1)) % 7));
      const meet = (id: string, n: number) => {
        if (pending.take(id)) got.set(id, (got.get(id) ?? 0) + 1);
        else pending.put(id, { id, n, tags: [] });
      };
      for (let i = 0; i < ids.length; i++) {
        meet(ids[i]!, i);
        meet(late[i]!, i);
      }
      expect([...pending.remaining()], `bound ${bound}`).toEqual([]);
      expect(got.size, `bound ${bound}`).toBe(300);
      expect(
        [...got.values()].every((n) => n === 1),
        `bound ${bound}`,
      ).toBe(true);
      if (bound < 50) expect(pending.spilled, `bound ${bound}`).toBeGreaterThan(0);
      if (bound === 1000) expect(pending.spilled, `bound ${bound}`).toBe(0);
      db.close();
    }
  });

  it('refuses a bound below one', () => {
    expect(() => new PendingRecords(new Database(':memory:'), 0)).toThrow('pending bound must be at least 1, got 0');
  });
});
