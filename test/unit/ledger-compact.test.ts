import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import {
  hexFromText,
  hexText,
  hexValue,
  RECORD_STATE_CODES,
  stateFromText,
  stateText,
  timeFromText,
  timeText,
  uuidFromText,
  uuidText,
  uuidValue,
} from '../../src/ledger/compact.js';
import { RECORD_STATES } from '../../src/ledger/types.js';

/** One SQL expression of `x` evaluated on a value. */
function sql(expr: (col: string) => string, value: unknown): unknown {
  const db = new Database(':memory:');
  try {
    return db
      .prepare(`SELECT ${expr('x')} AS v FROM (SELECT ? AS x)`)
      .pluck()
      .get(value);
  } finally {
    db.close();
  }
}

describe('compact record values (ledger schema 4)', () => {
  it('stores a lower-case UUID as 16 bytes, in JavaScript and SQL alike, and any other referenceId as its text', () => {
    const id = '50144fb4-ce6d-5977-92dd-32c1b4cb6538';
    expect(uuidValue(id)).toEqual(Buffer.from('50144fb4ce6d597792dd32c1b4cb6538', 'hex'));
    expect(sql(uuidFromText, id)).toEqual(uuidValue(id));
    expect(sql(uuidText, uuidValue(id))).toBe(id);
    for (const other of [id.toUpperCase(), 'CRM-100001', '', `${id} `])
      expect([uuidValue(other), sql(uuidFromText, other), sql(uuidText, other)]).toEqual([other, other, other]);
    expect(uuidValue(null)).toBeNull();
  });

  it('stores lower-case hex as its bytes, in JavaScript and SQL alike, and any other hash as its text', () => {
    const hash = 'bc3d7da5194d2d38a23665605a135ecd';
    expect(hexValue(hash)).toEqual(Buffer.from(hash, 'hex'));
    expect(sql(hexFromText, hash)).toEqual(hexValue(hash));
    expect(sql(hexText, hexValue(hash))).toBe(hash);
    for (const other of ['h1', 'BC3D', 'abc', '', 'row1'])
      expect([hexValue(other), sql(hexFromText, other), sql(hexText, other)]).toEqual([other, other, other]);
  });

  it('stores a time as milliseconds only when it reads back as the same text', () => {
    for (const iso of ['2026-11-27T13:04:28.521Z', '2026-01-01T00:00:00.007Z', '2026-02-28T23:59:59.000Z']) {
      const ms = Date.parse(iso);
      expect(sql(timeFromText, iso)).toBe(ms);
      // As the column holds it: an integer (a JavaScript number binds as a real; the column's INTEGER affinity stores it as an integer).
      expect(sql(timeText, BigInt(ms))).toBe(iso);
    }
    for (const other of ['then', '2026-11-27T13:04:28Z', '2026-11-27 13:04:28.521', '2026-11-27T13:04:28.5210Z'])
      expect([sql(timeFromText, other), sql(timeText, other)]).toEqual([other, other]);
  });

  it('numbers every record state once, and reads each number back as its state', () => {
    expect(Object.keys(RECORD_STATE_CODES).sort()).toEqual([...RECORD_STATES].sort());
    expect(new Set(Object.values(RECORD_STATE_CODES)).size).toBe(RECORD_STATES.length);
    for (const state of RECORD_STATES) {
      expect(sql(stateFromText, state)).toBe(RECORD_STATE_CODES[state]);
      expect(sql(stateText, RECORD_STATE_CODES[state])).toBe(state);
    }
  });
});
