import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
// The worker thread runs compiled JavaScript: this test uses the build in dist/ (npm test builds first).
import { openLedger, openLedgerWriter, type Ledger, type LedgerRecordInput } from '../../dist/src/ledger/index.js';
import { tempDir } from '../support/service.js';

const MIGRATION = '11111111-1111-4111-8111-111111111111';

function rec(n: number): LedgerRecordInput {
  return {
    legacyKey: `K${String(n).padStart(4, '0')}`,
    referenceId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    entityType: 'person',
    contentHash: `h${n}`,
    provenance: { source: 'persons', file: 'persons.csv', line: n + 1, byteOffset: n * 100, rowHash: `row${n}` },
  };
}

describe('ledger writes on a worker thread', () => {
  let dir: string;
  let ledger: Ledger;
  beforeEach(() => {
    dir = tempDir('stagecoach-writer-');
    ledger = openLedger(join(dir, 'ledger.db'));
  });
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies the writes in order, each committed when its promise resolves', async () => {
    const { run, scope } = ledger.startRun({ pipeline: 'p', component: 'Counterparties', pipelineFile: 'p.yaml', pipelineHash: 'h' });
    const mig = ledger.migrationNo(MIGRATION);
    const writer = openLedgerWriter(ledger, { thread: 'worker' });
    expect(writer.thread).toBe('worker');
    const batch = await writer.beginBatch(run.id, scope, mig, [rec(1), rec(2), rec(3)], 300);
    // Visible to the main thread's own connection as soon as the promise resolved.
    expect(ledger.counts('p')).toMatchObject({ in_flight: 3 });
    void writer.recordRejects(run.id, scope, [
      {
        legacyKey: 'K0009',
        referenceId: undefined,
        errors: [{ stage: 'check', field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'm' }],
        provenance: rec(9).provenance,
      },
    ]);
    await writer.finishBatch(scope, batch, [
      {
        legacyKey: 'K0002',
        state: 'failed',
        errors: [
          {
            stage: 'staging',
            field: 'initials',
            code: 'MISSING_REQUIRED_FIELD',
            message: 'staging refused initials: MISSING_REQUIRED_FIELD',
          },
        ],
      },
    ]);
    await writer.close();
    expect([...ledger.records()].map((r) => [r.legacyKey, r.state])).toEqual([
      ['K0001', 'staged'],
      ['K0002', 'failed'],
      ['K0003', 'staged'],
      ['K0009', 'rejected'],
    ]);
    expect(ledger.batch(batch)!.state).toBe('done');
  });

  it('reports a write that failed, from the call and again from close()', async () => {
    const { run, scope } = ledger.startRun({ pipeline: 'p', component: 'Counterparties', pipelineFile: 'p.yaml', pipelineHash: 'h' });
    const writer = openLedgerWriter(ledger, { thread: 'worker' });
    const batch = await writer.beginBatch(run.id, scope, 1, [rec(1), rec(2)], 200);
    const bogus = { legacyKey: 'K0001', state: 'lost' as 'failed' };
    await expect(writer.finishBatch(scope, batch, [bogus])).rejects.toThrow(
      new RegExp(`ledger ${ledger.file}: CHECK constraint failed: state IN`),
    );
    await expect(writer.close()).rejects.toThrow('CHECK constraint failed');
    // The failed transaction left nothing behind: both records are still in flight.
    expect([...ledger.records()].map((r) => r.state)).toEqual(['in_flight', 'in_flight']);
  });

  it("carries every field of a batch's records to the worker and back", async () => {
    const { run, scope } = ledger.startRun({ pipeline: 'p', component: 'Counterparties', pipelineFile: 'p.yaml', pipelineHash: 'h' });
    const writer = openLedgerWriter(ledger, { thread: 'worker' });
    const records: LedgerRecordInput[] = [
      rec(1),
      {
        ...rec(2),
        legacyKey: 'Ü-ĳ 𝒜',
        entityType: undefined,
        provenance: { source: 'organisaties', file: 'dir/organisaties.json', line: 70000, byteOffset: 2 ** 40, rowHash: '' },
      },
      { ...rec(3), legacyKey: '', contentHash: 'x'.repeat(32) },
    ];
    await writer.beginBatch(run.id, scope, 1, records, 300);
    await writer.recordUnsent(run.id, scope, 1, [rec(4)], 100);
    await writer.close();
    const back = [...ledger.records()].map((r) => ({
      legacyKey: r.legacyKey,
      referenceId: r.referenceId,
      entityType: r.entityType,
      contentHash: r.contentHash,
      provenance: r.provenance,
      state: r.state,
    }));
    const expected = [...records, rec(4)].map((r, i) => ({
      ...r,
      entityType: r.entityType ?? null,
      state: i < 3 ? 'in_flight' : 'mapped',
    }));
    const byLine = (a: { provenance?: { line: number } | undefined }, b: { provenance?: { line: number } | undefined }) =>
      (a.provenance?.line ?? 0) - (b.provenance?.line ?? 0);
    expect(back.sort(byLine)).toEqual(expected.sort(byLine));
  });
});
