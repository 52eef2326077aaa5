/**
 * A Bloom filter over 30-bit hashes: whether a hash may be among those added (never a false
 * "no"; a false "maybe" about 1% of the time). 10 bits and 7 probes an entry: 1.25 bytes a
 * staged record, where staging keeps the referenceIds of records it moved out of memory
 * (store-staging.ts), so a referenceId seen for the first time (nearly every one) costs no read.
 */
const BITS_PER_ENTRY = 10;
const PROBES = 7;

export class HashFilter {
  private readonly words: Int32Array;
  private readonly bits: number;

  constructor(entries: number) {
    this.bits = Math.max(64, entries * BITS_PER_ENTRY);
    this.words = new Int32Array(Math.ceil(this.bits / 32));
  }

  /** The filter's size in memory. */
  get bytes(): number {
    return this.words.byteLength;
  }

  add(hash: number): void {
    const step = second(hash);
    for (let i = 0, at = hash % this.bits; i < PROBES; i++, at = (at + step) % this.bits) this.words[at >>> 5]! |= 1 << (at & 31);
  }

  mayHave(hash: number): boolean {
    const step = second(hash);
    for (let i = 0, at = hash % this.bits; i < PROBES; i++, at = (at + step) % this.bits) {
      if ((this.words[at >>> 5]! & (1 << (at & 31))) === 0) return false;
    }
    return true;
  }
}

/** The probes' stride, from the hash's bits mixed again (odd, never 0). */
function second(hash: number): number {
  let h = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  h ^= h >>> 13;
  return (h | 1) >>> 0;
}
