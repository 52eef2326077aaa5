/**
 * The records of a batch, packed into one buffer as they are added instead of kept as objects.
 *
 * A batch's records live from the moment the batcher takes them until their upload is settled,
 * long enough for V8 to move every one of them (two objects and five strings, about 330 bytes)
 * into its old generation, where the dead ones waited for a full collection: a 1,000,000-person
 * run promoted 340 MB that way, and the old generation swung between 25 and 65 MB. Packed, a
 * batch is one buffer, the objects are made only while the ledger writes them (on its own
 * thread, where they die young) or while a refused record is reported.
 *
 * The buffer is shared memory (a SharedArrayBuffer), so a batch's records reach the ledger's
 * worker thread without a copy (`toWire`). Copied, every batch's records (up to 1 MB) were a new
 * ArrayBuffer on the worker, promoted to its old generation while the batch was written and
 * freed only at its next full collection, which V8 sets off after about 64 MB of them: at
 * 1,000,000 persons the worker held 0–60 MB of dead copies, and the C allocator kept what was
 * freed (docs/performance.md). Shared, the worker reads the batcher's own buffer, which the
 * batcher writes over only once the batch is settled, long after the worker read it.
 *
 * Layout, per record: the record's length (u32) and then its fields, strings as a u32 byte
 * length (0xffffffff for undefined) and UTF-8, numbers as f64:
 *   referenceId, legacyKey, entityType, contentHash, source, file, line, byteOffset, rowHash.
 */
import type { LedgerRecordInput } from './types.js';

const UNDEFINED = 0xffffffff;
/** A buffer's first size; it doubles as records arrive. */
const FIRST_BYTES = 64 * 1024;

/** Records as the ledger takes them for a batch: objects, or packed. */
export type RecordList = readonly LedgerRecordInput[] | PackedRecords;

/** How packed records travel to the ledger's worker thread (a class does not survive `postMessage`). */
export interface PackedRecordsWire {
  packedRecords: Uint8Array;
  length: number;
}

export class PackedRecords implements Iterable<LedgerRecordInput> {
  private buf: Buffer;
  private used = 0;
  private count = 0;

  /** `buffer`: room to write into (a recycled one); it grows when too small. */
  constructor(buffer?: Buffer) {
    this.buf = buffer ?? Buffer.alloc(0);
  }

  /** From the wire form (on the ledger's thread). */
  static fromWire(wire: PackedRecordsWire): PackedRecords {
    const p = new PackedRecords(Buffer.from(wire.packedRecords.buffer, wire.packedRecords.byteOffset, wire.packedRecords.byteLength));
    p.used = wire.packedRecords.byteLength;
    p.count = wire.length;
    return p;
  }

  /** Whether a value is the wire form of packed records. */
  static isWire(value: unknown): value is PackedRecordsWire {
    return typeof value === 'object' && value !== null && (value as PackedRecordsWire).packedRecords instanceof Uint8Array;
  }

  /** @example const p = PackedRecords.of([record]); p.length // 1 */
  static of(records: Iterable<LedgerRecordInput>): PackedRecords {
    const p = new PackedRecords();
    for (const r of records) p.push(r);
    return p;
  }

  get length(): number {
    return this.count;
  }

  /** The buffer written into, whole (to be reused once nothing reads these records any more). */
  get buffer(): Buffer {
    return this.buf;
  }

  /**
   * The records as they travel to another thread: a view of the bytes written. The buffer is
   * shared, so `postMessage` hands over the view, not a copy: write no more records into it until
   * the receiving thread is done with them.
   */
  toWire(): PackedRecordsWire {
    return { packedRecords: this.buf.subarray(0, this.used), length: this.count };
  }

  push(r: LedgerRecordInput): void {
    const p = r.provenance;
    const strings =
      r.referenceId.length +
      r.legacyKey.length +
      (r.entityType?.length ?? 0) +
      r.contentHash.length +
      p.source.length +
      p.file.length +
      p.rowHash.length;
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    const most = 4 + 7 * 4 + 3 * strings + 2 * 8;
    if (this.used + most > this.buf.length) this.grow(this.used + most);
    const start = this.used;
    let at = start + 4;
    at = this.putString(at, r.referenceId);
    at = this.putString(at, r.legacyKey);
    at = this.putString(at, r.entityType);
    at = this.putString(at, r.contentHash);
    at = this.putString(at, p.source);
    at = this.putString(at, p.file);
    at = this.buf.writeDoubleLE(p.line, at);
    at = this.buf.writeDoubleLE(p.byteOffset, at);
    at = this.putString(at, p.rowHash);
    this.buf.writeUInt32LE(at - start, start);
    this.used = at;
    this.count++;
  }

  *[Symbol.iterator](): Iterator<LedgerRecordInput> {
    for (const c of this.cursors()) {
      const referenceId = c.string()!;
      const legacyKey = c.string()!;
      const entityType = c.string();
      const contentHash = c.string()!;
      const source = c.string()!;
      const file = c.string()!;
      const line = c.number();
      const byteOffset = c.number();
      const rowHash = c.string()!;
      yield { legacyKey, referenceId, entityType, contentHash, provenance: { source, file, line, byteOffset, rowHash } };
    }
  }

  /**
   * Each record's referenceId and legacy key, in order, without the rest (what matching staging
   * results needs). Return false from `fn` to stop.
   */
  forEachIdentity(fn: (referenceId: string, legacyKey: string, index: number) => boolean | void): void {
    let index = 0;
    for (const c of this.cursors()) {
      const referenceId = c.string()!;
      if (fn(referenceId, c.string()!, index++) === false) return;
    }
  }

  /** Each record's referenceId, in order, one a step (for checking staging results as they are read). */
  *referenceIds(): Generator<string, void, undefined> {
    for (const c of this.cursors()) yield c.string()!;
  }

  /** A cursor at each record's first field, in order; each record's length prefix finds the next. */
  private *cursors(): Generator<Cursor> {
    let at = 0;
    for (let i = 0; i < this.count; i++) {
      const next = at + this.buf.readUInt32LE(at);
      yield new Cursor(this.buf, at + 4);
      at = next;
    }
  }

  private putString(at: number, s: string | undefined): number {
    if (s === undefined) return this.buf.writeUInt32LE(UNDEFINED, at);
    const n = this.buf.write(s, at + 4);
    this.buf.writeUInt32LE(n, at);
    return at + 4 + n;
  }

  private grow(needed: number): void {
    let size = Math.max(this.buf.length * 2, FIRST_BYTES);
    while (size < needed) size *= 2;
    const bigger = Buffer.from(new SharedArrayBuffer(size));
    this.buf.copy(bigger, 0, 0, this.used);
    this.buf = bigger;
  }
}

/** Reads the fields of one record in order. */
class Cursor {
  constructor(
    private readonly buf: Buffer,
    private at: number,
  ) {}

  string(): string | undefined {
    const n = this.buf.readUInt32LE(this.at);
    this.at += 4;
    if (n === UNDEFINED) return undefined;
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }

  number(): number {
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }
}
