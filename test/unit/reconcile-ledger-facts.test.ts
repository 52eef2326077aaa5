import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { gatherLedgerFacts } from '../../src/reconcile/ledger-facts.js';
import type { RecordError } from '../../src/ledger/index.js';
import { buildReport } from '../../src/reconcile/report-model.js';
import { tempDir } from '../support/service.js';

const M = '33333333-3333-4333-8333-333333333333';
const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ref = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A removal from staging carried out: the intent, then the platform's answer. */
function removed(ledger: Ledger, referenceId: string, lastBatch: number, errors: RecordError[]): void {
  ledger.removals.intend(M, [{ referenceId, lastBatch, errors }]);
  ledger.removals.confirm(M, referenceId);
}

/** A ledger with five persons staged in migration M and one row rejected before mapping. */
function stagedLedger(): Ledger {
  const dir = tempDir('stagecoach-facts-');
  dirs.push(dir);
  const ledger = openLedger(join(dir, 'ledger.db'));
  ledgers.push(ledger);
  const { run, scope } = ledger.startRun({
    pipeline: 'people',
    component: 'Counterparties',
    pipelineFile: 'people.yaml',
    pipelineHash: 'h',
  });
  ledger.setRunMigration(run.id, M);
  const no = ledger.migrationNo(M);
  const records = [1, 2, 3, 4, 5].map((n) => ({
    legacyKey: String(n),
    referenceId: ref(n),
    entityType: 'person',
    contentHash: `c${n}`,
    provenance: { source: 'people', file: 'people.csv', line: n + 1, byteOffset: n * 10, rowHash: `r${n}` },
  }));
  const batch = ledger.beginBatch(run.id, scope, no, records, 100);
  ledger.finishBatch(
    scope,
    batch,
    records.map((r) => ({ legacyKey: r.legacyKey, state: 'staged' as const })),
  );
  ledger.recordRejects(run.id, scope, [
    {
      legacyKey: undefined,
      referenceId: undefined,
      errors: [{ stage: 'source', field: '', code: 'SOURCE_ROW_INVALID', message: 'one column too few' }],
      provenance: { source: 'people', file: 'people.csv', line: 8, byteOffset: 70, rowHash: 'r7' },
    },
  ]);
  return ledger;
}

describe('ledger facts for the report', () => {
  it('shows a partial import: failed records keep their import error, the rest are imported', () => {
    const ledger = stagedLedger();
    ledger.markValidated(M, [{ referenceId: ref(5), field: 'nationalities.0', message: 'UNKNOWN_CODE' }]);
    ledger.jobs.started(M, 'validate-staging', 'v1');
    ledger.jobs.finished('v1', 'done', { referenceId: ref(90), jobType: 'ValidateStaging', isValid: false, errors: [] });
    removed(ledger, ref(5), 1, [{ stage: 'validation', field: 'nationalities.0', code: 'UNKNOWN_CODE', message: 'UNKNOWN_CODE' }]);
    const importErrors = [
      { component: 'Counterparties', referenceId: ref(4), message: 'IMPORT_FAILED: counterparty 4: relation target gone' },
    ];
    expect(ledger.markImportOutcome(M, importErrors)).toEqual({ imported: 3, failed: 1 });
    ledger.jobs.started(M, 'import', 'i1');
    ledger.jobs.finished('i1', 'done', {
      referenceId: ref(91),
      jobType: 'Import',
      status: 'Completed',
      numberOfStagedEntities: 4,
      numberOfImportedEntities: 3,
      errors: importErrors,
    });

    const facts = gatherLedgerFacts(ledger, M);
    expect(facts.groups).toEqual([
      {
        component: 'Counterparties',
        entityType: 'person',
        notSent: 0,
        inFlight: 0,
        rejected: { SOURCE_ROW_INVALID: 1 },
        refusedByStaging: {},
        staged: 1,
        invalid: { UNKNOWN_CODE: 1 },
        imported: 3,
        removedFromStaging: 1,
        inOtherMigrations: 0,
      },
    ]);
    expect(facts.jobs).toEqual({ validation: 'invalid', import: 'done', counts: 'not-run' });
    expect(
      facts.errorCodes
        .map((e) => [e.stage, e.code, e.records, `${e.examples[0]!.file}:${e.examples[0]!.line}`])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
    ).toEqual([
      ['import', 'IMPORT_FAILED', 1, 'people.csv:5'],
      ['source', 'SOURCE_ROW_INVALID', 1, 'people.csv:8'],
      ['validation', 'UNKNOWN_CODE', 1, 'people.csv:6'],
    ]);
    const report = buildReport({
      run: { id: '1', pipeline: 'people', migrationId: M },
      generatedAt: '2026-01-01T00:00:00.000Z',
      groups: facts.groups,
      jobs: facts.jobs,
      platform: { ...facts.platform, migration: [{ component: 'Counterparties', numberOfStagedEntities: 4, numberOfImportedEntities: 3 }] },
      errorCodes: facts.errorCodes,
      tolerance: { kind: 'absolute', value: 0 },
    });
    expect(report.balanced).toBe(true);
    expect(report.groups[0]!.steps).toEqual({ sourceRows: 6, mapped: 5, staged: 5, valid: 4, imported: 3 });
    expect(report.groups[0]!.gaps[3]!.explained.map((e) => [e.code, e.count])).toEqual([['IMPORT_FAILED', 1]]);
  });

  it('keeps counting for a completed migration what it imported when a later run sends the records into another one (issue 40)', () => {
    const ledger = stagedLedger();
    expect(ledger.markImported(M)).toBe(5);
    const before = gatherLedgerFacts(ledger, M).groups[0]!;
    expect([before.imported, before.inOtherMigrations]).toEqual([5, 0]);
    // A re-run after the migration completed: two of the records go into a new migration.
    const M2 = '44444444-4444-4444-8444-444444444444';
    const { run, scope } = ledger.startRun({
      pipeline: 'people',
      component: 'Counterparties',
      pipelineFile: 'people.yaml',
      pipelineHash: 'h',
    });
    ledger.setRunMigration(run.id, M2);
    const again = [1, 2].map((n) => ({
      legacyKey: String(n),
      referenceId: ref(n),
      entityType: 'person',
      contentHash: `c${n}`,
      provenance: { source: 'people', file: 'people.csv', line: n + 1, byteOffset: n * 10, rowHash: `r${n}` },
    }));
    const batch = ledger.beginBatch(run.id, scope, ledger.migrationNo(M2), again, 100);
    ledger.finishBatch(
      scope,
      batch,
      again.map((r) => ({ legacyKey: r.legacyKey, state: 'staged' as const })),
    );
    // The platform still counts the five imported in M: so does M's report.
    const after = gatherLedgerFacts(ledger, M).groups[0]!;
    expect([after.imported, after.inOtherMigrations, after.staged]).toEqual([5, 0, 0]);
    // And the new migration's report sees the two staged there, the three others held by M.
    const other = gatherLedgerFacts(ledger, M2).groups[0]!;
    expect([other.staged, other.imported, other.inOtherMigrations]).toEqual([2, 0, 3]);
  });

  it('lets a removal lapse once the record is sent again', () => {
    const ledger = stagedLedger();
    ledger.markValidated(M, [{ referenceId: ref(5), field: 'nationalities.0', message: 'UNKNOWN_CODE' }]);
    removed(ledger, ref(5), 1, []);
    expect([...ledger.removals.active(M).keys()]).toEqual([ref(5)]);
    const { run, scope } = ledger.startRun({
      pipeline: 'people',
      component: 'Counterparties',
      pipelineFile: 'people.yaml',
      pipelineHash: 'h',
    });
    const record = {
      legacyKey: '5',
      referenceId: ref(5),
      entityType: 'person',
      contentHash: 'fixed',
      provenance: { source: 'c', file: 'fixed.csv', line: 2, byteOffset: 0, rowHash: 'x' },
    };
    const batch = ledger.beginBatch(run.id, scope, ledger.migrationNo(M), [record], 10);
    ledger.finishBatch(scope, batch, [{ legacyKey: '5', state: 'staged' }]);
    expect(ledger.removals.active(M).size).toBe(0);
  });
});
