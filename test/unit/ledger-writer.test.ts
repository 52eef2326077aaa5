import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
// The worker thread runs compiled JavaScript: this test uses the build in dist/ (npm test builds first).
import { openLedger, openLedgerWriter, type Ledger, type LedgerRecordInput } from '../../dist/src/ledger/index.js';
import { packRecords, packTransferables, unpackRecords } from '../../dist/src/ledger/record-pack.js';
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
    void writer.recordRejects(run.id, scope, [{ legacyKey: 'K0009', referenceId: undefined, errors: [{ stage: 'check', field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'm' }], provenance: rec(9).provenance }]);
    await writer.finishBatch(scope, batch, [{ legacyKey: 'K0002', state: 'failed', errors: [{ stage: 'staging', field: 'initials', code: 'MISSING_REQUIRED_FIELD', message: 'staging refused initials: MISSING_REQUIRED_FIELD' }] }]);
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
    const broken = { legacyKey: 'K0001', referenceId: undefined, errors: [], provenance: { ...rec(1).provenance, line: null as unknown as number } };
    await expect(writer.recordRejects(run.id, scope, [broken])).rejects.toThrow(`ledger ${ledger.file}: NOT NULL constraint failed: records.line`);
    await expect(writer.close()).rejects.toThrow('NOT NULL constraint failed: records.line');
    expect([...ledger.records()]).toEqual([]);
  });
});

describe('records packed as columns for the writer thread', () => {
  it('unpack to exactly the records packed, whatever their strings hold', () => {
    const records: LedgerRecordInput[] = [
      rec(1),
      { ...rec(2), legacyKey: 'K\n2;"quoted"', entityType: undefined },
      { ...rec(3), legacyKey: '', contentHash: '', provenance: { source: 'other', file: 'dir/b\u00eb.csv', line: 7, byteOffset: 2 ** 40, rowHash: '' } },
      { ...rec(4), legacyKey: 'Zoë 🚲', entityType: 'organisation' },
      rec(5),
    ];
    const pack = packRecords(records);
    expect(pack.origins).toHaveLength(4); // persons.csv person, persons.csv (no type), other bë.csv, persons.csv organisation
    // As the writer receives it: through a real structured clone, the typed arrays handed over.
    const received = structuredClone(pack, { transfer: packTransferables(pack) });
    expect(unpackRecords(received)).toEqual(records);
    expect(unpackRecords(received).map((r) => Object.keys(r))).toEqual(records.map((r) => Object.keys(r)));
    expect(unpackRecords(packRecords([]))).toEqual([]);
  });
});
