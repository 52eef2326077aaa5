import { describe, expect, it } from 'vitest';
import { Batcher, batches, prepareRecord, type Batch, type BatchItem } from '../../src/pipeline/batcher/index.js';
import { createFrameDecoder, type Frame } from '../../src/codec/index.js';

/** Test records carry only the fields a test looks at. */
type PartialRecord = { type?: unknown };

function item(n: number, surname = `Jansen${n}`): BatchItem {
  const referenceId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return prepareRecord({
    legacyKey: `K${n}`,
    referenceId,
    record: { referenceId, type: 'person', initials: 'J.', surname } as PartialRecord,
    provenance: { source: 'persons', file: 'persons.csv', line: n + 1, byteOffset: n * 50, rowHash: `r${n}` },
  });
}

function decode(body: string): Frame[] {
  const frames: Frame[] = [];
  const d = createFrameDecoder('json-seq', (f) => frames.push(f));
  d.write(Buffer.from(body));
  d.end();
  return frames;
}

describe('json-seq batches', () => {
  it('frames each record as RS + JSON + LF and hashes the frame', () => {
    const a = item(1);
    expect(a.frame).toBe(
      '\x1e{"referenceId":"00000000-0000-4000-8000-000000000001","type":"person","initials":"J.","surname":"Jansen1"}\n',
    );
    expect(a.bytes).toBe(Buffer.byteLength(a.frame));
    expect(a.record.contentHash).toMatch(/^[0-9a-f]{32}$/);
    expect(item(1).record.contentHash).toBe(a.record.contentHash);
    expect(item(1, 'Jansen-changed').record.contentHash).not.toBe(a.record.contentHash);
    expect(a.record).toMatchObject({ legacyKey: 'K1', referenceId: '00000000-0000-4000-8000-000000000001', entityType: 'person' });
  });

  it('closes a batch at the record bound, in order, and flushes the rest', () => {
    const b = new Batcher({ maxRecords: 3, maxBytes: 1 << 20, format: 'json-seq' });
    const closed: Batch[] = [];
    for (let n = 1; n <= 7; n++) {
      const c = b.add(item(n));
      if (c) closed.push(c);
    }
    const last = b.flush();
    if (last) closed.push(last);
    expect(closed.map((c) => [c.seq, [...c.records].map((r) => r.legacyKey)])).toEqual([
      [1, ['K1', 'K2', 'K3']],
      [2, ['K4', 'K5', 'K6']],
      [3, ['K7']],
    ]);
    expect(b.flush()).toBeUndefined();
    const frames = decode(closed[0]!.body);
    expect(frames.map((f) => (f.kind === 'record' ? (f.value as { surname: string }).surname : f.kind))).toEqual([
      'Jansen1',
      'Jansen2',
      'Jansen3',
    ]);
    expect(closed[0]!.bytes).toBe(Buffer.byteLength(closed[0]!.body));
  });

  it('never lets a batch pass the byte bound, except a single record larger than it', () => {
    const one = item(1).bytes; // every item here has the same length
    const b = new Batcher({ maxRecords: 1000, maxBytes: one * 2 + 5, format: 'json-seq' });
    const sizes: number[] = [];
    for (let n = 1; n <= 5; n++) {
      const c = b.add(item(n));
      if (c) sizes.push(c.records.length);
    }
    sizes.push(b.flush()!.records.length);
    expect(sizes).toEqual([2, 2, 1]);

    const tiny = new Batcher({ maxRecords: 1000, maxBytes: 10, format: 'json-seq' });
    expect(tiny.add(item(1))).toBeUndefined();
    const alone = tiny.add(item(2))!;
    expect([...alone.records].map((r) => r.legacyKey)).toEqual(['K1']);
    expect(alone.bytes).toBe(one);
  });

  it('writes text and byte frames into one body as they come, and a closed body stays as it was', () => {
    const b = new Batcher({ maxRecords: 2000, maxBytes: 1 << 20, format: 'json-seq' });
    const items: BatchItem[] = [];
    for (let n = 1; n <= 1500; n++) {
      const it = item(n, `Łukasz-Müller-${'x'.repeat(n % 90)}`);
      // every other frame as UTF-8 bytes, as a parallel reader hands them over
      items.push(n % 2 === 0 ? { ...it, frame: Buffer.from(it.frame as string) } : it);
    }
    for (const it of items) expect(b.add(it)).toBeUndefined();
    const first = b.flush()!;
    const expected = Buffer.concat(items.map((it) => (typeof it.frame === 'string' ? Buffer.from(it.frame) : it.frame)));
    expect(expected.length).toBeGreaterThan(128 * 1024); // the body grew more than once
    expect(first.bytes).toBe(expected.length);
    expect(first.payload.equals(expected)).toBe(true);
    b.add(item(9999, 'Overwriter'));
    b.flush();
    expect(first.payload.equals(expected)).toBe(true);
    expect(decode(first.body)).toHaveLength(1500);
  });

  it('hands back the records of the open batch when a run stops before sending it', () => {
    const b = new Batcher({ maxRecords: 10, maxBytes: 1 << 20, format: 'json-seq' });
    b.add(item(1));
    b.add(item(2));
    const pending = b.takePending();
    expect([...pending.records].map((r) => r.legacyKey)).toEqual(['K1', 'K2']);
    expect(pending.bytes).toBe(item(1).bytes * 2);
    expect(b.pending).toBe(0);
    expect(b.flush()).toBeUndefined();
  });

  it('pulls the source only as far as the batch being built', async () => {
    let pulled = 0;
    async function* source() {
      for (let n = 1; n <= 10; n++) {
        pulled++;
        yield item(n);
      }
    }
    const it = batches(source(), { maxRecords: 4, maxBytes: 1 << 20, format: 'json-seq' });
    const first = await it.next();
    expect((first.value as Batch).records).toHaveLength(4);
    expect(pulled).toBe(4);
    const rest: number[] = [];
    for await (const batch of it) rest.push(batch.records.length);
    expect(rest).toEqual([4, 2]);
    expect(pulled).toBe(10);
  });

  it('refuses bounds below one record or one byte', () => {
    expect(() => new Batcher({ maxRecords: 0, maxBytes: 10, format: 'json-seq' })).toThrow(
      'batch limits must be at least 1 record and 1 byte, got 0 records and 10 bytes',
    );
  });

  it('frames JSON Lines when asked', () => {
    const referenceId = '00000000-0000-4000-8000-000000000009';
    const a = prepareRecord(
      {
        legacyKey: 'K9',
        referenceId,
        record: { referenceId, type: 'organisation' } as PartialRecord,
        provenance: { source: 's', file: 'f', line: 1, byteOffset: 0, rowHash: 'r' },
      },
      'jsonl',
    );
    expect(a.frame).toBe(`{"referenceId":"${referenceId}","type":"organisation"}\n`);
  });
});
