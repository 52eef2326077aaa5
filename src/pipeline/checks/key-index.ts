/**
 * The set of legacy keys a pipeline's sources hold, with where each first appeared: what the
 * duplicate-key and missing-relation-target checks need. Kept compact on purpose, because it
 * is the one structure that grows with the input: a key is stored as a 64-bit fingerprint (two
 * independent 32-bit FNV-1a hashes of `scope \0 key`) in an open-addressing table of typed
 * arrays, with its first location (file index, line). Memory: 12 bytes a slot (14 once a key
 * from a second file is recorded: most pipelines read one file per source), the table kept at
 * most half full, so 12–28 bytes per distinct key: about 25 MB for 1,000,000 keys, 3 MB for
 * 100,000 (a Map of strings would take 3–4 times that). Two different keys share a
 * fingerprint with probability about n²/2⁶⁵ (3·10⁻⁸ for a million keys); the effect would be a
 * false duplicate report, never a lost row.
 */

export interface KeyLocation {
  fileIndex: number;
  line: number;
}

const EMPTY = 0;

export class KeyIndex {
  private capacity: number;
  private h1: Int32Array;
  private h2: Int32Array;
  /** File index of each slot; not allocated while every recorded key came from file 0. */
  private files: Uint16Array | undefined;
  private lines: Uint32Array;
  private count = 0;

  constructor(expected = 1024) {
    this.capacity = 1 << Math.max(10, Math.ceil(Math.log2(expected * 2)));
    this.h1 = new Int32Array(this.capacity);
    this.h2 = new Int32Array(this.capacity);
    this.lines = new Uint32Array(this.capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held by the table (for the documented bound). */
  get bytes(): number {
    return this.capacity * (this.files ? 14 : 12);
  }

  /**
   * Records a row's key at its location; returns where the key was first recorded when another
   * row holds it (a duplicate). A key the key pass only marked is recorded here for the first time.
   * @example index.add('klant', '1001', 0, 2) // undefined (first)
   *          index.add('klant', '1001', 0, 9) // { fileIndex: 0, line: 2 }
   */
  add(scope: string, key: string, fileIndex: number, line: number): KeyLocation | undefined {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const [a, b] = fingerprint(scope, key);
    const slot = this.find(a, b);
    if (this.h2[slot] !== EMPTY) {
      if (this.lines[slot] !== 0) return { fileIndex: this.files?.[slot] ?? 0, line: this.lines[slot]! };
    } else {
      this.h1[slot] = a;
      this.h2[slot] = b;
      this.count++;
    }
    if (fileIndex !== 0) this.files ??= new Uint16Array(this.capacity);
    if (this.files) this.files[slot] = fileIndex;
    this.lines[slot] = line;
    return undefined;
  }

  /** Marks a key as held by some row, location unknown yet (the key pass; lines are 1-based). */
  mark(scope: string, key: string): void {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const [a, b] = fingerprint(scope, key);
    const slot = this.find(a, b);
    if (this.h2[slot] !== EMPTY) return;
    this.h1[slot] = a;
    this.h2[slot] = b;
    this.lines[slot] = 0;
    this.count++;
  }

  /** Where a key was first seen, if any source holds it. */
  get(scope: string, key: string): KeyLocation | undefined {
    const [a, b] = fingerprint(scope, key);
    const slot = this.find(a, b);
    return this.h2[slot] === EMPTY ? undefined : { fileIndex: this.files?.[slot] ?? 0, line: this.lines[slot]! };
  }

  has(scope: string, key: string): boolean {
    const [a, b] = fingerprint(scope, key);
    return this.h2[this.find(a, b)] !== EMPTY;
  }

  private find(a: number, b: number): number {
    const mask = this.capacity - 1;
    let slot = a & mask;
    while (this.h2[slot] !== EMPTY && (this.h1[slot] !== a || this.h2[slot] !== b)) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { h1, h2, files, lines, capacity } = this;
    this.capacity = capacity * 2;
    this.h1 = new Int32Array(this.capacity);
    this.h2 = new Int32Array(this.capacity);
    this.files = files ? new Uint16Array(this.capacity) : undefined;
    this.lines = new Uint32Array(this.capacity);
    for (let i = 0; i < capacity; i++) {
      if (h2[i] === EMPTY) continue;
      const slot = this.find(h1[i]!, h2[i]!);
      this.h1[slot] = h1[i]!;
      this.h2[slot] = h2[i]!;
      if (this.files) this.files[slot] = files![i]!;
      this.lines[slot] = lines[i]!;
    }
  }
}

const pair: [number, number] = [0, 0];

/** Two FNV-1a variants over the UTF-16 code units; the second is never 0 (0 marks an empty slot). */
function fingerprint(scope: string, key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < scope.length; i++) {
    const c = scope.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a = Math.imul(a ^ 0, 0x01000193);
  b = Math.imul(b, 0x5bd1e995);
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 13;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  pair[0] = a;
  pair[1] = b === 0 ? 1 : b;
  return pair;
}
