/**
 * The skip-unchanged stage (src/pipeline/runner/skip-unchanged.ts): on a first run in a migration
 * every record passes at once without a lookup; later, records are looked up in groups, those
 * settled with the same content are dropped, and the rest come out in order.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, type Ledger, type LedgerRecordInput, type Scope } from '../../src/ledger/index.js';
import type { BatchItem } from '../../src/pipeline/batcher/index.js';
import { SkipUnchanged } from '../../src/pipeline/runner/skip-unchanged.js';
import { tempDir } from '../support/service.js';

const MIGRATION = '11111111-1111-4111-8111-111111111111';

function item(n: number, hash = `h${n}`): BatchItem {
  const record: LedgerRecordInput = {
    legacyKey: `K${String(n).padStart(4, '0')}`,
    referenceId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    entityType: 'person',
    contentHash: hash,
    provenance: { source: 'persons', file: 'persons.csv', line: n + 1, byteOffset: n * 100, rowHash: `row${n}` },
  };
  return { record, frame: `{"n":${n}}\n`, bytes: 9 };
}

describe('skip-unchanged', () => {
  let dir: string;
  let ledger: Ledger;
  let scope: Scope;
  let runId: number;
  let mig: number;
  beforeEach(() => {
    dir = tempDir('stagecoach-skip-');
    ledger = openLedger(join(dir, 'ledger.db'));
    const started = ledger.startRun({ pipeline: 'crm', component: 'Counterparties', pipelineFile: 'crm.yaml', pipelineHash: 'abc' });
    scope = started.scope;
    runId = started.run.id;
    mig = ledger.migrationNo(MIGRATION);
  });
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes every record at once on a first run in the migration, looking nothing up', () => {
    const skip = new SkipUnchanged(ledger, scope, mig);
    const passed = [1, 2, 3].flatMap((n) => skip.take(item(n)));
    expect(passed.map((i) => i.record.legacyKey)).toEqual(['K0001', 'K0002', 'K0003']);
    expect(skip.flush()).toEqual([]);
    expect(skip.report).toEqual({ lookedUp: 0, skipped: 0 });
  });

  it('drops the records settled with the same content, in groups, and passes the rest in order', () => {
    const staged = ledger.beginBatch(runId, scope, mig, [item(2).record, item(4).record, item(600).record], 27);
    ledger.finishBatch(scope, staged, []);
    const skip = new SkipUnchanged(ledger, scope, mig);
    const passed: string[] = [];
    // 2 and 600 unchanged; 4 changed since it was staged.
    for (let n = 1; n <= 700; n++) for (const i of skip.take(item(n, n === 4 ? 'changed' : `h${n}`))) passed.push(i.record.legacyKey);
    expect(passed).toHaveLength(500 - 1); // the first group of 500, less K0002
    for (const i of skip.flush()) passed.push(i.record.legacyKey);
    expect(passed).toHaveLength(700 - 2);
    expect(passed).not.toContain('K0002');
    expect(passed).not.toContain('K0600');
    expect(passed).toContain('K0004');
    expect(passed).toEqual([...passed].sort());
    expect(skip.report).toEqual({ lookedUp: 700, skipped: 2 });
  });
});
