/**
 * A batch's ledger records as columns, for the trip to the ledger writer's thread. Cloning 2,000
 * small objects with nested provenance cost the sending thread 1.4–2.2 µs a record; as columns
 * (the strings back to back with their lengths, numbers in typed arrays that are handed over,
 * the few distinct source/file/type triples once) it is 0.6–0.8 µs, packing included (50 batches
 * of 2,000, four rounds). The sending thread is the run's busiest.
 */
import type { LedgerRecordInput } from './types.js';

export interface RecordPack {
  n: number;
  /** legacyKey, referenceId, contentHash and rowHash of every record, back to back. */
  text: string;
  /** The lengths of those four strings, per record. */
  lengths: Uint32Array;
  lines: Float64Array;
  byteOffsets: Float64Array;
  /** The distinct [source, file, entityType] of the batch, and each record's index into them. */
  origins: [string, string, string | undefined][];
  originOf: Uint32Array;
}

/**
 * @example const pack = packRecords(batch.records); port.postMessage(pack, packTransferables(pack));
 *          unpackRecords(pack) // equal to batch.records
 */
export function packRecords(records: readonly LedgerRecordInput[]): RecordPack {
  const n = records.length;
  const lengths = new Uint32Array(n * 4);
  const lines = new Float64Array(n);
  const byteOffsets = new Float64Array(n);
  const originOf = new Uint32Array(n);
  const origins: RecordPack['origins'] = [];
  const originIndex = new Map<string, number>();
  let text = '';
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    const p = r.provenance;
    text += r.legacyKey + r.referenceId + r.contentHash + p.rowHash;
    lengths[i * 4] = r.legacyKey.length;
    lengths[i * 4 + 1] = r.referenceId.length;
    lengths[i * 4 + 2] = r.contentHash.length;
    lengths[i * 4 + 3] = p.rowHash.length;
    lines[i] = p.line;
    byteOffsets[i] = p.byteOffset;
    // JSON of the triple: a key no two different triples share, whatever their characters.
    const key = JSON.stringify([p.source, p.file, r.entityType ?? null]);
    let o = originIndex.get(key);
    if (o === undefined) {
      o = origins.push([p.source, p.file, r.entityType]) - 1;
      originIndex.set(key, o);
    }
    originOf[i] = o;
  }
  return { n, text, lengths, lines, byteOffsets, origins, originOf };
}

/** The typed arrays of a pack, to hand over without copying. */
export function packTransferables(pack: RecordPack): ArrayBuffer[] {
  return [pack.lengths, pack.lines, pack.byteOffsets, pack.originOf].map((a) => a.buffer as ArrayBuffer);
}

export function unpackRecords(pack: RecordPack): LedgerRecordInput[] {
  const out: LedgerRecordInput[] = new Array(pack.n);
  const { text, lengths } = pack;
  let at = 0;
  const next = (len: number) => text.slice(at, (at += len));
  for (let i = 0; i < pack.n; i++) {
    const legacyKey = next(lengths[i * 4]!);
    const referenceId = next(lengths[i * 4 + 1]!);
    const contentHash = next(lengths[i * 4 + 2]!);
    const rowHash = next(lengths[i * 4 + 3]!);
    const [source, file, entityType] = pack.origins[pack.originOf[i]!]!;
    out[i] = { legacyKey, referenceId, entityType, contentHash, provenance: { source, file, line: pack.lines[i]!, byteOffset: pack.byteOffsets[i]!, rowHash } };
  }
  return out;
}
