/**
 * A small seeded generator (mulberry32) for fault decisions: the same seed gives the same
 * numbers on every machine, which Math.random cannot.
 */
export interface Random {
  /** The next number in [0, 1). */
  next(): number;
}

/**
 * @example const r = createRandom(1); r.next(); // 0.6270739405881613, always
 */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return {
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
