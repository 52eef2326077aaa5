import { describe, expect, it } from 'vitest';
import { MessageChannel } from 'node:worker_threads';
import { PackedRecords, type LedgerRecordInput } from '../../src/ledger/index.js';
import { Batcher, prepareRecord } from '../../src/pipeline/batcher/index.js';

function record(n: number, over: Partial<LedgerRecordInput> = {}): LedgerRecordInput {
  return {
    legacyKey: `K${n}`,
    referenceId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    entityType: 'person',
    contentHash: `h${n}`.padEnd(32, '0'),
    provenance: { source: 'klanten', file: 'klanten.csv', line: n + 1, byteOffset: n * 130, rowHash: `r${n}` },
    ...over,
  };
}

describe('packed records', () => {
  it('give back every field as it went in, through growth and the wire form', () => {
    const odd: LedgerRecordInput[] = [
      record(1, { legacyKey: 'Boër;"x"\n€𝄞', entityType: undefined }),
      record(2, { legacyKey: '', provenance: { source: 's', file: 'ö/ü.csv', line: 2 ** 40, byteOffset: 2 ** 52 + 2, rowHash: '' } }),
    ];
    const many = Array.from({ length: 3000 }, (_, i) => record(i + 3));
    const packed = PackedRecords.of([...odd, ...many]);
    expect(packed.length).toBe(3002);
    expect([...packed]).toEqual([...odd, ...many]);
    const wire = structuredClone(packed.toWire());
    expect([...PackedRecords.fromWire(wire)]).toEqual([...odd, ...many]);
    expect(PackedRecords.isWire(wire)).toBe(true);
    expect(PackedRecords.isWire({ packedRecords: 'no', length: 1 })).toBe(false);
  });

  it('reach another thread as shared memory, not a copy', async () => {
    const packed = PackedRecords.of([record(1), record(2)]);
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<unknown>((resolve) => port2.once('message', resolve));
    port1.postMessage(packed.toWire());
    const wire = await received;
    port1.close();
    expect(PackedRecords.isWire(wire)).toBe(true);
    const bytes = (wire as { packedRecords: Uint8Array }).packedRecords;
    expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    // The receiver reads the sender's bytes: a change on one side shows on the other.
    const at = bytes.byteOffset + 8;
    bytes[8] = 0x7a;
    expect(packed.buffer[at]).toBe(0x7a);
    expect([...PackedRecords.fromWire(wire as never)][0]!.referenceId.startsWith('z')).toBe(true);
  });

  it('walk referenceIds and legacy keys in order, and stop when asked', () => {
    const packed = PackedRecords.of([record(1), record(2), record(3)]);
    const seen: string[] = [];
    packed.forEachIdentity((ref, key, i) => {
      seen.push(`${i}:${key}:${ref.slice(-2)}`);
      return i < 1;
    });
    expect(seen).toEqual(['0:K1:01', '1:K2:02']);
  });

  it('write over a recycled buffer without touching records still held elsewhere', () => {
    const b = new Batcher({ maxRecords: 2, maxBytes: 1 << 20, format: 'json-seq' });
    const item = (n: number) =>
      prepareRecord({
        legacyKey: `K${n}`,
        referenceId: record(n).referenceId,
        record: { type: 'person', n } as { type?: unknown },
        provenance: record(n).provenance,
      });
    b.add(item(1));
    const first = b.add(item(2))!;
    const firstBody = first.body;
    const firstKeys = [...first.records].map((r) => r.legacyKey);
    b.recycle(first);
    b.add(item(3));
    const second = b.add(item(4))!;
    // The settled batch's buffers were reused for the next one…
    expect(second.payload.buffer).toBe(first.payload.buffer);
    expect(second.records.buffer).toBe(first.records.buffer);
    expect([...second.records].map((r) => r.legacyKey)).toEqual(['K3', 'K4']);
    expect(second.body).not.toBe(firstBody);
    expect(firstKeys).toEqual(['K1', 'K2']);
    // …and a batch not recycled keeps its own.
    b.add(item(5));
    const third = b.flush()!;
    expect(third.payload.buffer).not.toBe(second.payload.buffer);
    expect([...third.records].map((r) => r.legacyKey)).toEqual(['K5']);
    expect([...second.records].map((r) => r.legacyKey)).toEqual(['K3', 'K4']);
  });
});
