/**
 * The set of legacy keys a pipeline's sources hold, with where each first appeared: what the
 * duplicate-key and missing-relation-target checks need. It is the one structure that grows with
 * the input, so it is kept bounded where a key pass comes first, and compact where none does.
 *
 * With a key pass (a mapping that makes relations): the keys it marks go to `MarkedKeys`, sorted
 * 53-bit fingerprints in a buffer of 8 MB, spilled to sorted scratch runs past a million keys and
 * merged into one scratch file (marked-keys.ts): flat memory whatever the export's size. Sealing
 * it also tells which fingerprints were marked more than once, and only those keys can be
 * duplicates: the second pass follows their first location (with the key itself, so two keys
 * sharing a fingerprint are told apart) and forgets every other key. The key pass marks every key
 * the second pass adds: both read the same rows (the second pass adds only rows that read).
 *
 * Without one (no relations to check): keys are added as rows come, into an open-addressing
 * table of 48-bit fingerprints (one 32-bit FNV-1a hash of `scope \0 key`, whose top bits also pick
 * the key's home slot, and 16 bits of an independent second one) in typed arrays, with its first
 * location (file index, line). Memory: 10 bytes a slot (12 once a key from a second file is
 * recorded: most pipelines read one file per source), the table kept at most half full, so
 * 10–24 bytes per distinct key: about 21 MB for 1,000,000 keys, 2.6 MB for 100,000 (a Map of
 * strings would take 4–5 times that). A lookup compares about two slots near the key's home,
 * each sharing its fingerprint with another key's with probability 2⁻⁴⁸: over the 3,000,000
 * lookups of a million keys, about 10⁻⁸. The effect would be a false duplicate report, never a
 * lost row.
 */
import { StagecoachError } from '../../contract/errors.js';
import { MarkedKeys } from './marked-keys.js';

export interface KeyLocation {
  fileIndex: number;
  line: number;
}

const EMPTY = 0;

export class KeyIndex {
  private capacity: number;
  /** 32 − log2(capacity): a fingerprint's top bits are its home slot. */
  private shift: number;
  /** The fingerprint's other 16 bits (the first hash's low bits). */
  private low: Uint16Array;
  /** The fingerprint's 32-bit hash, never 0; 0 marks an empty slot. */
  private h2: Int32Array;
  /** File index of each slot; not allocated while every recorded key came from file 0. */
  private files: Uint16Array | undefined;
  private lines: Uint32Array;
  private count = 0;
  /** The key pass's keys, once it marked any (the table is then not used). */
  private marked: MarkedKeys | undefined;
  /** After a key pass: the keys marked more than once, by fingerprint, each with its first location once added. */
  private readonly located = new Map<number, Array<{ scope: string; key: string; at: KeyLocation }>>();

  constructor(
    expected = 1024,
    /** The marked keys' buffer and block lengths (the tests make them small). */
    private readonly markedLengths: { run?: number; block?: number } = {},
  ) {
    const bits = Math.max(10, Math.ceil(Math.log2(expected * 2)));
    this.capacity = 2 ** bits;
    this.shift = 32 - bits;
    this.low = new Uint16Array(this.capacity);
    this.h2 = new Int32Array(this.capacity);
    this.lines = new Uint32Array(this.capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held by the table (for the documented bound). */
  get bytes(): number {
    return this.capacity * (this.files ? 12 : 10);
  }

  /**
   * Records a row's key at its location; returns where the key was first recorded when another
   * row holds it (a duplicate). A key the key pass only marked is recorded here for the first time.
   * @example index.add('klant', '1001', 0, 2) // undefined (first)
   *          index.add('klant', '1001', 0, 9) // { fileIndex: 0, line: 2 }
   */
  add(scope: string, key: string, fileIndex: number, line: number): KeyLocation | undefined {
    if (this.marked) return this.addMarked(scope, key, { fileIndex, line });
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const [a, b] = fingerprint(scope, key);
    const slot = this.find(a, b);
    if (this.h2[slot] !== EMPTY) {
      if (this.lines[slot] !== 0) return { fileIndex: this.files?.[slot] ?? 0, line: this.lines[slot]! };
    } else {
      this.low[slot] = a;
      this.h2[slot] = b;
      this.count++;
    }
    if (fileIndex !== 0) this.files ??= new Uint16Array(this.capacity);
    if (this.files) this.files[slot] = fileIndex;
    this.lines[slot] = line;
    return undefined;
  }

  /**
   * Marks a key as held by some row, location unknown yet (the key pass, before any `add`; lines
   * are 1-based, so a marked key's location reads as line 0).
   */
  mark(scope: string, key: string): void {
    if (this.count > 0) throw new StagecoachError('INTERNAL_ERROR', 'a key was marked after keys were added');
    this.marked ??= new MarkedKeys(this.markedLengths.run, this.markedLengths.block);
    this.marked.add(fingerprint53(scope, key));
  }

  /** Where a key was first seen, if any source holds it (line 0: marked, not added yet). */
  get(scope: string, key: string): KeyLocation | undefined {
    if (this.marked) {
      const fp = fingerprint53(scope, key);
      const first = this.sealedMarks().repeated.has(fp) ? this.firstOf(fp, scope, key) : undefined;
      return first ?? (this.marked.has(fp) ? { fileIndex: 0, line: 0 } : undefined);
    }
    const [a, b] = fingerprint(scope, key);
    const slot = this.find(a, b);
    return this.h2[slot] === EMPTY ? undefined : { fileIndex: this.files?.[slot] ?? 0, line: this.lines[slot]! };
  }

  has(scope: string, key: string): boolean {
    if (this.marked) return this.sealedMarks().has(fingerprint53(scope, key));
    const [a, b] = fingerprint(scope, key);
    return this.h2[this.find(a, b)] !== EMPTY;
  }

  /** Whether the marked keys went to scratch files (for the tests of the bound). */
  get spilled(): boolean {
    return this.marked?.spilled ?? false;
  }

  /** Removes the marked keys' scratch files (the index answers nothing after this). */
  close(): void {
    this.marked?.close();
  }

  /** `add` after a key pass: only a key marked more than once can be a duplicate, so only those are followed. */
  private addMarked(scope: string, key: string, at: KeyLocation): KeyLocation | undefined {
    const fp = fingerprint53(scope, key);
    if (!this.sealedMarks().repeated.has(fp)) return undefined;
    const first = this.firstOf(fp, scope, key);
    if (first) return first;
    const sharing = this.located.get(fp);
    if (sharing) sharing.push({ scope, key, at });
    else this.located.set(fp, [{ scope, key, at }]);
    return undefined;
  }

  private firstOf(fp: number, scope: string, key: string): KeyLocation | undefined {
    return this.located.get(fp)?.find((e) => e.key === key && e.scope === scope)?.at;
  }

  private sealedMarks(): MarkedKeys {
    this.marked!.seal();
    return this.marked!;
  }

  private find(a: number, b: number): number {
    const mask = this.capacity - 1;
    let slot = b >>> this.shift;
    while (this.h2[slot] !== EMPTY && (this.h2[slot] !== b || this.low[slot] !== a)) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { low, h2, files, lines, capacity } = this;
    this.capacity = capacity * 2;
    this.shift--;
    this.low = new Uint16Array(this.capacity);
    this.h2 = new Int32Array(this.capacity);
    this.files = files ? new Uint16Array(this.capacity) : undefined;
    this.lines = new Uint32Array(this.capacity);
    for (let i = 0; i < capacity; i++) {
      if (h2[i] === EMPTY) continue;
      const slot = this.find(low[i]!, h2[i]!);
      this.low[slot] = low[i]!;
      this.h2[slot] = h2[i]!;
      if (this.files) this.files[slot] = files![i]!;
      this.lines[slot] = lines[i]!;
    }
  }
}

const pair: [number, number] = [0, 0];

/**
 * Two FNV-1a variants over the UTF-16 code units: 16 bits of the first, and the second whole
 * (never 0: 0 marks an empty slot; its top bits are the home slot).
 */
function fingerprint(scope: string, key: string): [number, number] {
  hashPair(scope, key);
  pair[0] &= 0xffff;
  if (pair[1] === 0) pair[1] = 1;
  return pair;
}

/**
 * The marked keys' fingerprint: the second hash whole and 21 bits of the first, 53 bits, exact in
 * a double. A key no source holds shares one with some held key, and is taken for present by
 * `has`, with probability about 10⁻⁹ a lookup among ten million keys; two held keys sharing one
 * are never taken for duplicates (`addMarked` compares the keys themselves).
 */
function fingerprint53(scope: string, key: string): number {
  hashPair(scope, key);
  return (pair[1] >>> 0) * 0x200000 + (pair[0] & 0x1fffff);
}

/** Both hashes, whole, into `pair`. */
function hashPair(scope: string, key: string): void {
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
  pair[1] = b;
}
