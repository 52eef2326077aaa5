import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { openLedger, type Ledger, type LedgerRecordInput, type Scope } from '../../src/ledger/index.js';
import { openLedgerDb } from '../../src/ledger/schema.js';
import { RECORD_STATE_CODES } from '../../src/ledger/compact.js';
import { runChain, settleRemovals, type ChainClient } from '../../src/reconcile/chain.js';
import { StagecoachError } from '../../src/contract/errors.js';
import { tempDir } from '../support/service.js';

const MIGRATION = '11111111-1111-4111-8111-111111111111';
const OTHER_MIGRATION = '22222222-2222-4222-8222-222222222222';

/** A second connection to a ledger file, for what no caller may do: look at or change the tables directly. */
function beside<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Every table of the current layout (schema.ts), in name order. */
const TABLES = [
  'batch_ends',
  'batches',
  'canceled_migrations',
  'earlier_imports',
  'entity_types',
  'jobs',
  'log_cursor',
  'migrations',
  'record_files',
  'record_history',
  'record_rows',
  'run_mappings',
  'run_sources',
  'runs',
  'scopes',
  'source_tallies',
  'staging_removals',
  'written_files',
];

function rec(n: number, hash = `h${n}`): LedgerRecordInput {
  return {
    legacyKey: `K${String(n).padStart(4, '0')}`,
    referenceId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    entityType: 'person',
    contentHash: hash,
    provenance: { source: 'persons', file: 'samples/persons.csv', line: n + 1, byteOffset: n * 100, rowHash: `row${n}` },
  };
}

describe('ledger transitions', () => {
  let dir: string;
  let ledger: Ledger;
  let scope: Scope;
  let runId: number;
  let mig: number;

  beforeEach(() => {
    dir = tempDir('stagecoach-ledger-');
    ledger = openLedger(join(dir, '.stagecoach', 'ledger.db'));
    const started = ledger.startRun({
      pipeline: 'crm',
      component: 'Counterparties',
      pipelineFile: 'pipelines/crm.yaml',
      pipelineHash: 'abc',
    });
    scope = started.scope;
    runId = started.run.id;
    mig = ledger.migrationNo(MIGRATION);
    ledger.setRunMigration(runId, MIGRATION);
  });
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the file in WAL mode with the raised checkpoint, the schema version and every table', () => {
    const db = openLedgerDb(join(dir, 'fresh.db'));
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(100000);
      expect(db.pragma('user_version', { simple: true })).toBe(4);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()).toEqual(TABLES);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'view'").pluck().all()).toEqual(['records']);
    } finally {
      db.close();
    }
  });

  it('moves a batch of records to in_flight before the upload and to staged or failed with the results', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2), rec(3)], 300);
    expect(ledger.batch(batch)).toMatchObject({ run: runId, state: 'in_flight', records: 3, bytes: 300, attempts: 1, error: null });
    expect(ledger.counts('crm')).toMatchObject({ in_flight: 3, staged: 0 });

    ledger.finishBatch(scope, batch, [
      { legacyKey: 'K0001', state: 'staged' },
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
      { legacyKey: 'K0003', state: 'staged' },
    ]);
    expect(ledger.batch(batch)!.state).toBe('done');
    const rows = [...ledger.records({ pipeline: 'crm' })];
    expect(rows.map((r) => [r.legacyKey, r.state, r.attempts, r.migrationId, r.lastBatch])).toEqual([
      ['K0001', 'staged', 1, MIGRATION, batch],
      ['K0002', 'failed', 1, MIGRATION, batch],
      ['K0003', 'staged', 1, MIGRATION, batch],
    ]);
    expect(rows[1]!.errors).toEqual([
      { stage: 'staging', field: 'initials', code: 'MISSING_REQUIRED_FIELD', message: 'staging refused initials: MISSING_REQUIRED_FIELD' },
    ]);
    expect(rows[0]!.provenance).toEqual({ source: 'persons', file: 'samples/persons.csv', line: 2, byteOffset: 100, rowHash: 'row1' });
  });

  it('counts a record settled only when staged in the same migration with the same content hash', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2)], 200);
    expect(ledger.isSettled(scope, mig, 'K0001', 'h1')).toBe(false); // in flight: not settled
    ledger.finishBatch(scope, batch, [
      { legacyKey: 'K0001', state: 'staged' },
      { legacyKey: 'K0002', state: 'failed', errors: [] },
    ]);
    expect(ledger.isSettled(scope, mig, 'K0001', 'h1')).toBe(true);
    expect(ledger.isSettled(scope, mig, 'K0001', 'changed')).toBe(false);
    expect(ledger.isSettled(scope, ledger.migrationNo(OTHER_MIGRATION), 'K0001', 'h1')).toBe(false);
    expect(ledger.isSettled(scope, mig, 'K0002', 'h2')).toBe(false); // failed: sent again
    expect(ledger.isSettled(scope, mig, 'K9999', 'h1')).toBe(false);
  });

  it('finds the settled records of a group in one go, and knows when nothing is settled yet', () => {
    expect(ledger.hasSettled(scope, mig)).toBe(false);
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2), rec(3)], 300);
    expect(ledger.hasSettled(scope, mig)).toBe(false);
    ledger.finishBatch(scope, batch, [
      { legacyKey: 'K0001', state: 'staged' },
      { legacyKey: 'K0002', state: 'staged' },
      { legacyKey: 'K0003', state: 'failed', errors: [] },
    ]);
    expect(ledger.hasSettled(scope, mig)).toBe(true);
    expect(ledger.hasSettled(scope, ledger.migrationNo(OTHER_MIGRATION))).toBe(false);
    const keys = ledger.settledKeys(scope, mig, [
      { legacyKey: 'K0001', contentHash: 'h1' },
      { legacyKey: 'K0002', contentHash: 'changed' },
      { legacyKey: 'K0003', contentHash: 'h3' },
      { legacyKey: 'K0004', contentHash: 'h4' },
    ]);
    expect([...keys]).toEqual(['K0001']);
  });

  it('counts attempts across sends and clears old errors when a record is sent again', () => {
    const first = ledger.beginBatch(runId, scope, mig, [rec(1)], 100);
    ledger.finishBatch(scope, first, [
      { legacyKey: 'K0001', state: 'failed', errors: [{ stage: 'staging', field: 'surname', code: 'INVALID_FIELD_VALUE', message: 'x' }] },
    ]);
    const second = ledger.beginBatch(runId, scope, mig, [rec(1, 'h1-fixed')], 100);
    const [row] = [...ledger.records()];
    expect(row).toMatchObject({ state: 'in_flight', attempts: 2, errors: [], contentHash: 'h1-fixed', lastBatch: second });
  });

  it('writes a big batch in multi-row statements with the same effect as one by one', () => {
    // 250 records: two statements of 100, then 50 one by one; the second send updates them all.
    const all = Array.from({ length: 250 }, (_, i) => rec(i + 1));
    ledger.beginBatch(runId, scope, mig, all, 25_000);
    const again = ledger.beginBatch(
      runId,
      scope,
      mig,
      all.map((r, i) => (i % 3 === 0 ? { ...r, contentHash: `${r.contentHash}-new` } : r)),
      25_000,
    );
    const rows = [...ledger.records()];
    expect(rows).toHaveLength(250);
    expect(rows.every((r) => r.state === 'in_flight' && r.attempts === 2 && r.lastBatch === again)).toBe(true);
    expect(rows.map((r) => [r.legacyKey, r.contentHash, r.provenance.line])).toEqual(
      all.map((r, i) => [r.legacyKey, i % 3 === 0 ? `h${i + 1}-new` : `h${i + 1}`, i + 2]),
    );
  });

  it('ignores a late result of a batch whose record was sent again in a newer batch', () => {
    const first = ledger.beginBatch(runId, scope, mig, [rec(1)], 100);
    const second = ledger.beginBatch(runId, scope, mig, [rec(1, 'h1b')], 100);
    ledger.finishBatch(scope, first, [{ legacyKey: 'K0001', state: 'failed', errors: [] }]);
    expect([...ledger.records()][0]).toMatchObject({ state: 'in_flight', lastBatch: second });
    ledger.finishBatch(scope, second, [{ legacyKey: 'K0001', state: 'staged' }]);
    expect([...ledger.records()][0]!.state).toBe('staged');
  });

  it('keeps the records of a failed upload in_flight so the next run sends them again', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2)], 200);
    ledger.failBatch(batch, 'SERVICE_UNAVAILABLE: the service answered 503 after 6 retries');
    expect(ledger.batch(batch)).toMatchObject({ state: 'failed', error: 'SERVICE_UNAVAILABLE: the service answered 503 after 6 retries' });
    expect(ledger.counts('crm')).toMatchObject({ in_flight: 2 });
    expect(ledger.isSettled(scope, mig, 'K0001', 'h1')).toBe(false);
  });

  it('keeps records built into a batch that was never sent as mapped, under a building batch', () => {
    const batch = ledger.recordUnsent(runId, scope, mig, [rec(1), rec(2)], 200)!;
    expect(ledger.batch(batch)).toMatchObject({ state: 'building', attempts: 0, sentAt: null });
    expect([...ledger.records()].map((r) => [r.state, r.attempts])).toEqual([
      ['mapped', 0],
      ['mapped', 0],
    ]);
    expect(ledger.recordUnsent(runId, scope, mig, [], 0)).toBeUndefined();
  });

  it('stores rejected rows by legacy key, or by file:line when they have none, with every error', () => {
    ledger.recordRejects(runId, scope, [
      {
        legacyKey: 'K0007',
        referenceId: undefined,
        errors: [
          {
            stage: 'mapping',
            field: 'dateOfBirth',
            code: 'INVALID_FIELD_VALUE',
            message: 'expected a date dd-mm-yyyy, got "31-02-1980"',
            value: '31-02-1980',
          },
        ],
        provenance: rec(7).provenance,
      },
      {
        legacyKey: undefined,
        referenceId: undefined,
        errors: [{ stage: 'source', field: '', code: 'SOURCE_ROW_INVALID', message: 'expected 15 columns, got 14' }],
        provenance: { source: 'persons', file: 'samples/persons.csv', line: 42, byteOffset: 4000, rowHash: 'r42' },
      },
    ]);
    const rows = [...ledger.refused({ pipeline: 'crm' })];
    expect(rows).toEqual([
      {
        source: 'persons',
        provenance: { file: 'samples/persons.csv', line: 8, byteOffset: 700 },
        origin: { file: 'samples/persons.csv', line: 8 },
        errors: [
          { field: 'dateOfBirth', code: 'INVALID_FIELD_VALUE', message: 'expected a date dd-mm-yyyy, got "31-02-1980"', stage: 'mapping' },
        ],
      },
      {
        source: 'persons',
        provenance: { file: 'samples/persons.csv', line: 42, byteOffset: 4000 },
        origin: { file: 'samples/persons.csv', line: 42 },
        errors: [{ field: '', code: 'SOURCE_ROW_INVALID', message: 'expected 15 columns, got 14', stage: 'source' }],
      },
    ]);
    const records = [...ledger.records({ states: ['rejected'] })];
    expect(records.map((r) => r.legacyKey)).toEqual(['K0007', undefined]);
    expect(records[0]!.errors[0]!.value).toBe('31-02-1980');
  });

  it('turns a rejected record into an in-flight one when a later run maps it', () => {
    ledger.recordRejects(runId, scope, [
      {
        legacyKey: 'K0001',
        referenceId: undefined,
        errors: [{ stage: 'check', field: 'initials', code: 'MISSING_REQUIRED_FIELD', message: 'm' }],
        provenance: rec(1).provenance,
      },
    ]);
    ledger.beginBatch(runId, scope, mig, [rec(1)], 100);
    expect([...ledger.records()].map((r) => [r.legacyKey, r.state, r.errors])).toEqual([['K0001', 'in_flight', []]]);
  });

  it("keeps a refused record's story when a later run reads it again from another row, and only then", () => {
    const refusal = (n: number) => ({
      legacyKey: rec(n).legacyKey,
      referenceId: undefined,
      errors: [{ stage: 'check' as const, field: 'initials', code: 'MISSING_REQUIRED_FIELD', message: 'm' }],
      provenance: rec(n).provenance,
    });
    ledger.recordRejects(runId, scope, [refusal(1), refusal(2)]);
    ledger.finishRun(runId, 'completed');
    expect(ledger.stories.of('crm', 10)).toEqual({ total: 0, stories: [] });

    const run2 = ledger.startRun({ pipeline: 'crm', component: 'Counterparties', pipelineFile: 'pipelines/crm.yaml', pipelineHash: 'abc' })
      .run.id;
    ledger.recordRejects(run2, scope, [refusal(2)]); // the same row, still refused: no story
    const fixed = { ...rec(1), provenance: { ...rec(1).provenance, file: 'fixed.corrections.csv', line: 3, rowHash: 'fixed' } };
    const batch = ledger.beginBatch(run2, scope, mig, [fixed], 100);
    ledger.finishBatch(scope, batch, [{ legacyKey: 'K0001', state: 'staged' }]);
    expect(ledger.stories.of('crm', 10)).toEqual({
      total: 1,
      stories: [
        {
          component: 'Counterparties',
          legacyKey: 'K0001',
          steps: [
            { state: 'rejected', run: runId, file: 'samples/persons.csv', line: 2, codes: ['MISSING_REQUIRED_FIELD'] },
            { state: 'staged', run: run2, file: 'fixed.corrections.csv', line: 3, codes: [] },
          ],
        },
      ],
    });
    expect(ledger.stories.of('other-pipeline', 10).total).toBe(0);
  });

  it('writes a batch all or nothing: a record that cannot be stored leaves neither batch nor records', () => {
    const broken = { ...rec(2), provenance: { ...rec(2).provenance, line: null as unknown as number } };
    expect(() => ledger.beginBatch(runId, scope, mig, [rec(1), broken], 200)).toThrow(/NOT NULL constraint failed: record_rows.line/);
    expect([...ledger.records()]).toEqual([]);
    expect(ledger.batches(runId)).toEqual([]);
  });

  it('refuses a record state outside the closed union', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1)], 100);
    expect(() => ledger.finishBatch(scope, batch, [{ legacyKey: 'K0001', state: 'done' as 'staged' }])).toThrow(/CHECK constraint failed/);
    expect([...ledger.records()][0]!.state).toBe('in_flight');
  });

  it('marks the records a validation names invalid, and those it no longer names staged again', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2), rec(3)], 300);
    ledger.finishBatch(
      scope,
      batch,
      ['K0001', 'K0002', 'K0003'].map((k) => ({ legacyKey: k, state: 'staged' as const })),
    );
    expect(
      ledger.markValidated(MIGRATION, [{ referenceId: rec(2).referenceId, field: 'relations.0.to', message: 'RELATION_TARGET_MISSING' }]),
    ).toEqual({ invalid: 1, cleared: 0 });
    expect([...ledger.records({ states: ['invalid'] })].map((r) => [r.legacyKey, r.errors])).toEqual([
      ['K0002', [{ stage: 'validation', field: 'relations.0.to', code: 'RELATION_TARGET_MISSING', message: 'RELATION_TARGET_MISSING' }]],
    ]);
    expect(ledger.markValidated(MIGRATION, [])).toEqual({ invalid: 0, cleared: 1 });
    expect(ledger.counts('crm')).toMatchObject({ staged: 3, invalid: 0 });
    expect(ledger.markImported(MIGRATION)).toBe(3);
    expect(ledger.counts('crm')).toMatchObject({ staged: 0, imported: 3 });
  });

  it('keeps a record imported by two migrations in turn when a third run writes it, and verify finds its live import', () => {
    const THIRD = '33333333-3333-4333-8333-333333333333';
    const importInto = (migrationId: string, run: number) => {
      const batch = ledger.beginBatch(run, scope, ledger.migrationNo(migrationId), [rec(1)], 100);
      ledger.finishBatch(scope, batch, [{ legacyKey: 'K0001', state: 'staged' }]);
      return ledger.markImported(migrationId);
    };
    const nextRun = (migrationId: string) => {
      ledger.finishRun(runId, 'completed');
      runId = ledger.startRun({ pipeline: 'crm', component: 'Counterparties', pipelineFile: 'pipelines/crm.yaml', pipelineHash: 'abc' }).run
        .id;
      ledger.setRunMigration(runId, migrationId);
      return runId;
    };
    expect(importInto(MIGRATION, runId)).toBe(1);
    const second = nextRun(OTHER_MIGRATION);
    expect(importInto(OTHER_MIGRATION, second)).toBe(1);
    // The third run stages it into a third migration (it failed here on earlier_imports' key).
    const third = nextRun(THIRD);
    const batch = ledger.beginBatch(third, scope, ledger.migrationNo(THIRD), [rec(1, 'h1-third')], 100);
    ledger.finishBatch(scope, batch, [{ legacyKey: 'K0001', state: 'failed' }]);
    expect(beside(ledger.file, (db) => db.prepare('SELECT count(*) FROM earlier_imports').pluck().get())).toBe(1);
    // Not imported by the third: live on the platform from the second, as the second run sent it.
    expect([...ledger.liveImportsInOrder('crm')]).toEqual([
      {
        imported: true,
        pipeline: 'crm',
        referenceId: rec(1).referenceId,
        file: 'samples/persons.csv',
        line: 2,
        legacyKey: 'K0001',
        contentHash: 'h1',
        run: second,
        migrationId: OTHER_MIGRATION,
      },
    ]);
    expect(ledger.liveImportSourcesOf('crm')).toEqual([{ run: second, file: 'samples/persons.csv' }]);
  });

  it('writes a removal from staging as an intent (removing) first, then confirms it (removed); only confirmed ones count', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2)], 200);
    ledger.finishBatch(scope, batch, [
      { legacyKey: 'K0001', state: 'staged' },
      { legacyKey: 'K0002', state: 'staged' },
    ]);
    const errors = [{ stage: 'validation' as const, field: 'nationalities.0', code: 'UNKNOWN_CODE', message: 'UNKNOWN_CODE' }];
    ledger.markValidated(MIGRATION, [{ referenceId: rec(1).referenceId, field: 'nationalities.0', message: 'UNKNOWN_CODE' }]);
    ledger.removals.intend(MIGRATION, [{ referenceId: rec(1).referenceId, lastBatch: batch, errors }]);
    expect(ledger.removals.pending(MIGRATION)).toEqual([{ referenceId: rec(1).referenceId, state: 'removing', errors, applies: true }]);
    expect(ledger.removals.active(MIGRATION).size).toBe(0);
    ledger.removals.confirm(MIGRATION, rec(1).referenceId);
    expect(ledger.removals.pending(MIGRATION)).toEqual([]);
    expect([...ledger.removals.active(MIGRATION)]).toEqual([[rec(1).referenceId, errors]]);
    expect(() => beside(ledger.file, (db) => db.prepare(`UPDATE staging_removals SET state = 'gone'`).run())).toThrow(
      /CHECK constraint failed/,
    );
  });

  it('finds records by referenceId and groups them into facts for the report', () => {
    const batch = ledger.beginBatch(runId, scope, mig, [rec(1), rec(2)], 200);
    ledger.finishBatch(scope, batch, [
      { legacyKey: 'K0001', state: 'staged' },
      {
        legacyKey: 'K0002',
        state: 'failed',
        errors: [{ stage: 'staging', field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'm' }],
      },
    ]);
    ledger.recordRejects(runId, scope, [
      {
        legacyKey: undefined,
        referenceId: undefined,
        errors: [{ stage: 'source', field: '', code: 'SOURCE_ROW_INVALID', message: 'm' }],
        provenance: rec(9).provenance,
      },
    ]);
    expect(ledger.recordsByReferenceIds([rec(2).referenceId, 'not-there']).map((r) => r.legacyKey)).toEqual(['K0002']);
    const group = { pipeline: 'crm', component: 'Counterparties', source: 'persons', importedEarlierIn: null };
    expect(ledger.facts({ pipeline: 'crm' })).toEqual([
      { ...group, entityType: null, state: 'rejected', code: 'SOURCE_ROW_INVALID', migrationId: null, count: 1 },
      { ...group, entityType: 'person', state: 'failed', code: 'MISSING_REQUIRED_FIELD', migrationId: MIGRATION, count: 1 },
      { ...group, entityType: 'person', state: 'staged', code: null, migrationId: MIGRATION, count: 1 },
    ]);
    // What the report counts without reading the records: the staged one; the two refused it reads one by one.
    expect(ledger.facts({ pipeline: 'crm', countedOnly: true })).toEqual([
      { ...group, entityType: 'person', state: 'staged', code: null, migrationId: MIGRATION, count: 1 },
    ]);
    expect([...ledger.records({ pipeline: 'crm', oneByOne: true })].map((r) => r.state).sort()).toEqual(['failed', 'rejected']);
  });
});

describe('ledger runs', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = tempDir('stagecoach-ledger-');
    file = join(dir, 'ledger.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const input = { pipeline: 'crm', component: 'Counterparties', pipelineFile: 'pipelines/crm.yaml', pipelineHash: 'abc' };

  it('marks a run whose process died as crashed, fails its open batches and keeps its records in_flight', () => {
    const ledger = openLedger(file);
    const { run, scope } = ledger.startRun(input);
    const mig = ledger.migrationNo(MIGRATION);
    const batch = ledger.beginBatch(run.id, scope, mig, [rec(1)], 100);
    ledger.close(); // the process "dies" here: no finishRun

    const again = openLedger(file);
    const second = again.startRun(input);
    expect(second.crashed.map((r) => [r.id, r.status])).toEqual([[run.id, 'crashed']]);
    expect(again.run(run.id)!.status).toBe('crashed');
    expect(again.batch(batch)).toMatchObject({ state: 'failed', error: 'the run ended before the results came back' });
    expect(again.counts('crm')).toMatchObject({ in_flight: 1 });
    expect(second.run).toMatchObject({ id: run.id + 1, status: 'running', pid: process.pid, pipeline: 'crm', component: 'Counterparties' });
    again.close();
  });

  it('refuses to start while another live process runs the same pipeline', () => {
    const ledger = openLedger(file);
    const { run } = ledger.startRun(input);
    beside(file, (db) => db.prepare('UPDATE runs SET pid = ? WHERE id = ?').run(process.ppid, run.id)); // a live process that is not us
    expect(() => ledger.startRun(input)).toThrow(
      `pipeline crm is already running in process ${process.ppid} (run ${run.id}, started ${run.startedAt}) on the ledger ${file}; wait for it or stop it first`,
    );
    ledger.close();
  });

  it('holds a run lock the operating system releases when the process dies: refused while a live process runs, taken at once after SIGKILL', async () => {
    const { spawn } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    // The child runs the ledger's TypeScript through tsx (a dev dependency), not a build in dist/.
    const ledgerModule = fileURLToPath(new URL('../../src/ledger/index.ts', import.meta.url));
    const script = `const { openLedger } = await import(${JSON.stringify(ledgerModule)});
      openLedger(${JSON.stringify(file)}).startRun(${JSON.stringify(input)});
      process.stdout.write('started\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const ledger = openLedger(file);
    try {
      expect(() => ledger.startRun(input)).toThrow(`pipeline crm is already running in process ${child.pid} (run 1,`);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      // The lock went with the process, reaped or not, and whatever now has its pid (here a live
      // process, as after a supervisor's restart or a container whose pid 1 does not reap): the
      // run it left is recovered as crashed.
      beside(file, (db) => db.prepare('UPDATE runs SET pid = ? WHERE id = 1').run(process.ppid));
      const { crashed } = ledger.startRun(input);
      expect(crashed.map((r) => [r.id, r.status])).toEqual([[1, 'crashed']]);
    } finally {
      ledger.close();
    }
  });

  it('clears keyless rejects when a full run starts, since the run reports them afresh, but not for a corrections run', () => {
    const ledger = openLedger(file);
    const { run, scope } = ledger.startRun(input);
    ledger.recordRejects(run.id, scope, [
      {
        legacyKey: undefined,
        referenceId: undefined,
        errors: [{ stage: 'source', field: '', code: 'SOURCE_ROW_INVALID', message: 'm' }],
        provenance: rec(3).provenance,
      },
      {
        legacyKey: 'K0004',
        referenceId: undefined,
        errors: [{ stage: 'check', field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'm' }],
        provenance: rec(4).provenance,
      },
    ]);
    ledger.finishRun(run.id, 'completed', { rowsRead: 2 });
    const corrections = ledger.startRun({ ...input, readsEverything: false });
    expect([...ledger.records()].map((r) => r.legacyKey)).toEqual(['K0004', undefined]); // a corrections run reads only some rows
    ledger.finishRun(corrections.run.id, 'completed');
    ledger.startRun(input);
    expect([...ledger.records()].map((r) => r.legacyKey)).toEqual(['K0004']);
    expect(ledger.run(run.id)).toMatchObject({ status: 'completed', report: { rowsRead: 2 } });
    ledger.close();
  });

  it('reports status per pipeline with counts per state, the last run and the last batch', () => {
    const ledger = openLedger(file);
    const { run, scope } = ledger.startRun(input);
    ledger.setRunMigration(run.id, MIGRATION);
    const mig = ledger.migrationNo(MIGRATION);
    const b = ledger.beginBatch(run.id, scope, mig, [rec(1), rec(2)], 200);
    ledger.finishBatch(scope, b, [
      { legacyKey: 'K0001', state: 'staged' },
      { legacyKey: 'K0002', state: 'failed', errors: [{ stage: 'staging', field: '', code: 'NO_STAGING_RESULT', message: 'm' }] },
    ]);
    ledger.finishRun(run.id, 'completed');
    const [status] = ledger.status();
    expect(status).toMatchObject({
      pipeline: 'crm',
      component: 'Counterparties',
      records: 2,
      byState: { mapped: 0, rejected: 0, in_flight: 0, staged: 1, failed: 1, invalid: 0, imported: 0 },
      lastRun: { id: run.id, status: 'completed', migrationId: MIGRATION },
      lastBatch: { id: b, state: 'done', records: 2 },
    });
    ledger.close();
    const readonly = openLedger(file, { readonly: true });
    expect(readonly.status()[0]!.records).toBe(2);
    expect(() => readonly.startRun(input)).toThrow(`the ledger ${file} was opened read-only`);
    readonly.close();
  });

  it('keeps jobs per migration so a crash resumes the same job, and a log cursor that never moves back', () => {
    const ledger = openLedger(file);
    ledger.jobs.started(MIGRATION, 'validate-staging', 'job-1');
    expect(ledger.jobs.latest(MIGRATION, 'validate-staging')).toMatchObject({
      migrationId: MIGRATION,
      kind: 'validate-staging',
      jobId: 'job-1',
      state: 'running',
    });
    ledger.jobs.finished('job-1', 'done', { jobType: 'ValidateStaging', isValid: true, errors: [] });
    ledger.jobs.started(MIGRATION, 'import', 'job-2');
    expect(ledger.jobs.list(MIGRATION).map((j) => [j.kind, j.jobId, j.state, j.result])).toEqual([
      ['validate-staging', 'job-1', 'done', { jobType: 'ValidateStaging', isValid: true, errors: [] }],
      ['import', 'job-2', 'running', undefined],
    ]);
    expect(ledger.jobs.latest(MIGRATION, 'counts')).toBeUndefined();

    expect(ledger.logCursor(MIGRATION)).toBeUndefined();
    ledger.setLogCursor(MIGRATION, 40);
    ledger.setLogCursor(MIGRATION, 12);
    expect(ledger.logCursor(MIGRATION)).toBe(40);
    ledger.close();
  });
});

/**
 * A fake platform for the chain: staging is a set of referenceIds; validation refuses the
 * records of `refused` still staged. `killAfterDelete`: the process dies right after that many
 * DELETEs were carried out by the platform, before their answer reached the ledger.
 */
function fakePlatform(
  staged: Set<string>,
  refused: ReadonlySet<string>,
  killAfterDelete = Number.POSITIVE_INFINITY,
  importStatus = 'Completed',
) {
  let deletes = 0;
  let job = 0;
  const results = new Map<string, unknown>();
  const start = (kind: string) => async () => {
    const id = `00000000-0000-4000-9000-${String(++job).padStart(12, '0')}`;
    const errors = [...refused]
      .filter((r) => staged.has(r))
      .map((referenceId) => ({ referenceId, field: 'nationalities.0', message: 'UNKNOWN_CODE' }));
    const n = staged.size;
    results.set(
      id,
      kind === 'validate'
        ? { referenceId: id, jobType: 'ValidateStaging', isValid: errors.length === 0, errors }
        : kind === 'import'
          ? {
              referenceId: id,
              jobType: 'Import',
              status: importStatus,
              numberOfStagedEntities: n,
              numberOfImportedEntities: /^(completed|succeeded)$/i.test(importStatus) ? n : 0,
              errors: [],
            }
          : { referenceId: id, jobType: 'Counts', counts: [] },
    );
    return id;
  };
  const client = {
    migrations: {
      async getStaged(_m: string, referenceId: string) {
        return staged.has(referenceId) ? { referenceId } : undefined;
      },
      async deleteStaged(_m: string, referenceId: string) {
        if (!staged.delete(referenceId)) throw new StagecoachError('NOT_FOUND', `not staged: ${referenceId}`);
        if (++deletes >= killAfterDelete) throw new Error('killed after the DELETE, before the ledger heard of it');
      },
    },
    jobs: {
      validateStaging: start('validate'),
      import: start('import'),
      counts: start('counts'),
      waitFor: async (id: string) => results.get(id),
    },
  } as unknown as ChainClient;
  return client;
}

describe('removing invalid records from staging (--drop-invalid)', () => {
  let dir: string;
  let ledger: Ledger;
  const refs = (ns: number[]) => ns.map((n) => rec(n).referenceId);

  /** Ten records staged in MIGRATION; the platform's staging holds the same ten. */
  function setup(): Set<string> {
    dir = tempDir('stagecoach-removals-');
    ledger = openLedger(join(dir, 'ledger.db'));
    const { run, scope } = ledger.startRun({ pipeline: 'crm', component: 'Counterparties', pipelineFile: 'p.yaml', pipelineHash: 'h' });
    ledger.setRunMigration(run.id, MIGRATION);
    const all = Array.from({ length: 10 }, (_, i) => rec(i + 1));
    const batch = ledger.beginBatch(run.id, scope, ledger.migrationNo(MIGRATION), all, 1000);
    ledger.finishBatch(
      scope,
      batch,
      all.map((r) => ({ legacyKey: r.legacyKey, state: 'staged' as const })),
    );
    ledger.finishRun(run.id, 'completed');
    return new Set(refs([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
  }
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drops the same records whether or not a kill lands between a DELETE and the ledger write, and never calls a deleted record imported', async () => {
    const staged = setup();
    const refused = new Set(refs([3, 5, 8]));
    // the kill lands right after the platform carried out the first DELETE
    await expect(runChain(fakePlatform(staged, refused, 1), ledger, MIGRATION, { dropInvalid: true })).rejects.toThrow(/killed/);
    expect(staged.has(rec(3).referenceId)).toBe(false);
    expect(
      ledger.removals
        .pending(MIGRATION)
        .map((p) => p.referenceId)
        .sort(),
    ).toEqual(refs([3, 5, 8]).sort());

    const events: unknown[] = [];
    const outcome = await runChain(fakePlatform(staged, refused), ledger, MIGRATION, { dropInvalid: true, onEvent: (e) => events.push(e) });
    expect(outcome.status).toBe('imported');
    expect(events).toContainEqual({ type: 'settled', removed: 3, void: 0 });
    expect(ledger.removals.pending(MIGRATION)).toEqual([]);
    expect([...ledger.removals.active(MIGRATION).keys()].sort()).toEqual(refs([3, 5, 8]).sort());
    // the ledger and the platform agree: the seven left imported, the three refused invalid and gone
    expect(ledger.counts('crm')).toMatchObject({ imported: 7, invalid: 3, staged: 0 });
    expect(staged.size).toBe(7);
  });

  it.each(['Failed', 'Canceled'])('leaves the records unimported when the platform ends the import %s, and says so', async (status) => {
    const staged = setup();
    const run = runChain(fakePlatform(staged, new Set(), Number.POSITIVE_INFINITY, status), ledger, MIGRATION, { dropInvalid: true });
    await expect(run).rejects.toThrow(
      new RegExp(
        `^The import job \\S+ of migration ${MIGRATION} ended with status "${status}", expected Completed: the platform imported 0 of 10 staged record\\(s\\); the ledger does not mark the records imported`,
      ),
    );
    expect(ledger.counts('crm')).toMatchObject({ imported: 0 });
  });

  it('reads Succeeded as an import that ran to its end', async () => {
    const staged = setup();
    const outcome = await runChain(fakePlatform(staged, new Set(), Number.POSITIVE_INFINITY, 'Succeeded'), ledger, MIGRATION, {
      dropInvalid: true,
    });
    expect(outcome.status).toBe('imported');
    expect(ledger.counts('crm')).toMatchObject({ imported: 10, staged: 0 });
  });

  it('settles an intent by asking the platform: deletes a record still staged, confirms one already gone, drops one sent again', async () => {
    const staged = setup();
    const errors = [{ stage: 'validation' as const, field: 'x', code: 'UNKNOWN_CODE', message: 'UNKNOWN_CODE' }];
    ledger.removals.intend(MIGRATION, [
      { referenceId: rec(1).referenceId, lastBatch: 1, errors },
      { referenceId: rec(2).referenceId, lastBatch: 1, errors },
      { referenceId: rec(4).referenceId, lastBatch: 0, errors }, // its record is in batch 1 now: sent again since
    ]);
    staged.delete(rec(2).referenceId); // the DELETE of 2 reached the platform before the kill
    const settled = await settleRemovals(fakePlatform(staged, new Set()), ledger, MIGRATION);
    expect(settled).toEqual({ removed: 2, void: 1 });
    expect([...staged].sort()).toEqual(refs([3, 4, 5, 6, 7, 8, 9, 10]).sort());
    expect([...ledger.removals.active(MIGRATION).keys()].sort()).toEqual(refs([1, 2]).sort());
    expect(ledger.removals.pending(MIGRATION)).toEqual([]);
  });
});

describe("corrections in a record's life", () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = tempDir('stagecoach-ledger-');
    file = join(dir, 'ledger.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const input = { pipeline: 'crm', component: 'Counterparties', pipelineFile: 'pipelines/crm.yaml', pipelineHash: 'abc' };
  const EXPORT = 'samples/klanten.csv';
  const refusal = (legacyKey: string | undefined, line: number, rowHash: string, code = 'INVALID_FIELD_VALUE') => ({
    legacyKey,
    referenceId: undefined,
    errors: [{ stage: 'mapping' as const, field: 'f', code, message: 'm' }],
    provenance: { source: 'klanten', file: EXPORT, line, byteOffset: line * 100, rowHash },
  });
  const corrected = (legacyKey: string, file: string, line: number, rowHash = `c${line}`): LedgerRecordInput => ({
    legacyKey,
    referenceId: `00000000-0000-4000-8000-${legacyKey.padStart(12, '0')}`,
    entityType: 'person',
    contentHash: `content-${legacyKey}-${rowHash}`,
    provenance: { source: 'klanten', file, line, byteOffset: 0, rowHash },
  });
  const stage = (ledger: Ledger, runId: number, scope: Scope, records: LedgerRecordInput[]) => {
    const mig = ledger.migrationNo(MIGRATION);
    const batch = ledger.beginBatch(runId, scope, mig, records, 100);
    ledger.finishBatch(scope, batch, []);
  };
  const rows = (ledger: Ledger) =>
    [...ledger.records()].map((r) => [r.legacyKey ?? `${r.provenance.file}:${r.provenance.line}`, r.state, r.origin?.line ?? null]);

  it('a corrected record keeps the export row it replaced until a newer version of that row is written, in any migration', () => {
    const ledger = openLedger(file);
    const first = ledger.startRun(input);
    ledger.recordRejects(first.run.id, first.scope, [refusal('100155', 158, 'h158')]);
    ledger.finishRun(first.run.id, 'completed');

    const fix = ledger.startRun({ ...input, readsEverything: false });
    ledger.claimCorrections(fix.scope, [{ keyed: 1, legacyKey: '100155', origin: { file: EXPORT, line: 158 } }]);
    stage(ledger, fix.run.id, fix.scope, [corrected('100155', 'fixed.csv', 2)]);
    ledger.finishRun(fix.run.id, 'completed');
    expect([...ledger.records()][0]).toMatchObject({
      state: 'staged',
      provenance: { file: 'fixed.csv', line: 2 },
      origin: { file: EXPORT, line: 158, rowHash: 'h158' },
    });
    // Kept for a run into its migration and into a new one (the last completed or canceled) alike.
    expect(ledger.correctedOrigins(fix.scope)).toEqual(new Set([`${EXPORT}\u0000h158`]));

    // A newer correction keeps the origin; the export's row once changed (a write from the export) ends it.
    const again = ledger.startRun({ ...input, readsEverything: false });
    ledger.claimCorrections(again.scope, [{ keyed: 1, legacyKey: '100155', origin: { file: EXPORT, line: 158 } }]);
    stage(ledger, again.run.id, again.scope, [corrected('100155', 'fixed-2.csv', 5)]);
    ledger.finishRun(again.run.id, 'completed');
    expect(rows(ledger)).toEqual([['100155', 'staged', 158]]);
    const plain = ledger.startRun(input);
    stage(ledger, plain.run.id, plain.scope, [corrected('100155', EXPORT, 158, 'h158-fixed')]);
    expect([...ledger.records()][0]!.origin).toBeUndefined();
    expect(ledger.correctedOrigins(plain.scope).size).toBe(0);
    ledger.close();
  });

  it('re-keys a refused row a correction gave a key, once, with its story; keeps it through a full run; never re-keys a record the platform holds or onto a key that is taken', () => {
    const ledger = openLedger(file);
    const first = ledger.startRun(input);
    ledger.recordRejects(first.run.id, first.scope, [
      refusal(undefined, 136, 'h136', 'SOURCE_ROW_INVALID'),
      refusal(undefined, 91, 'h91', 'DUPLICATE_LEGACY_KEY'),
      refusal('100044', 46, 'h46'),
    ]);
    stage(ledger, first.run.id, first.scope, [corrected('100081', EXPORT, 84, 'h84')]);
    ledger.finishRun(first.run.id, 'completed');
    const fix = ledger.startRun({ ...input, readsEverything: false });
    ledger.claimCorrections(fix.scope, [
      { keyed: 1, legacyKey: '100133', origin: { file: EXPORT, line: 136 } },
      { keyed: 1, legacyKey: '100081', origin: { file: EXPORT, line: 91 } }, // the key the staged row at line 84 holds
    ]);
    stage(ledger, fix.run.id, fix.scope, [corrected('100133', 'fixed.csv', 2)]);
    ledger.finishRun(fix.run.id, 'completed');
    expect(rows(ledger)).toEqual([
      ['100044', 'rejected', null],
      ['100081', 'staged', null],
      ['100133', 'staged', 136],
      [`${EXPORT}:91`, 'rejected', null],
    ]);
    expect(ledger.stories.of('crm', 10).stories).toEqual([
      {
        component: 'Counterparties',
        legacyKey: '100133',
        steps: [
          { state: 'rejected', run: first.run.id, file: EXPORT, line: 136, codes: ['SOURCE_ROW_INVALID'], formerKey: `${EXPORT}:136` },
          { state: 'staged', run: fix.run.id, file: 'fixed.csv', line: 2, codes: [] },
        ],
      },
    ]);
    // A full run clears the keyless rejects it reports afresh, not the ones a correction read.
    const plain = ledger.startRun(input);
    expect(rows(ledger).map((r) => r[0])).toEqual(['100044', '100081', '100133']);
    ledger.finishRun(plain.run.id, 'completed');

    // Invalid on the platform: the record keeps its key (and referenceId); the new key is a record of its own.
    const v = ledger.startRun({ ...input, readsEverything: false });
    beside(file, (db) => db.prepare("UPDATE record_rows SET state = ? WHERE legacy_key = '100044'").run(RECORD_STATE_CODES.invalid));
    ledger.claimCorrections(v.scope, [{ keyed: 1, legacyKey: '100999', origin: { file: EXPORT, line: 46 } }]);
    expect(rows(ledger)).toContainEqual(['100044', 'invalid', null]);
    expect(rows(ledger).map((r) => r[0])).not.toContain('100999');
    ledger.close();
  });

  it('upgrades a ledger of version 1 in place: the columns added, the records kept, the story trigger carrying the former key', () => {
    const v1 = new Database(file);
    v1.exec(`
      CREATE TABLE scopes (id INTEGER PRIMARY KEY, pipeline TEXT NOT NULL, component TEXT NOT NULL, UNIQUE (pipeline, component));
      INSERT INTO scopes VALUES (1, 'crm', 'Counterparties');
      CREATE TABLE migrations (id INTEGER PRIMARY KEY, reference_id TEXT NOT NULL UNIQUE);
      CREATE TABLE records (scope INTEGER NOT NULL, keyed INTEGER NOT NULL, legacy_key TEXT NOT NULL, reference_id TEXT, entity_type TEXT,
        state TEXT NOT NULL, content_hash TEXT, migration INTEGER, last_batch INTEGER, last_run INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        errors TEXT, source TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL, byte_offset INTEGER NOT NULL, row_hash TEXT NOT NULL,
        updated_at TEXT NOT NULL, PRIMARY KEY (scope, keyed, legacy_key)) WITHOUT ROWID;
      CREATE TABLE record_history (scope INTEGER NOT NULL, keyed INTEGER NOT NULL, legacy_key TEXT NOT NULL, state TEXT NOT NULL, errors TEXT,
        run INTEGER NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL, next_run INTEGER NOT NULL, next_file TEXT NOT NULL,
        next_line INTEGER NOT NULL, at TEXT NOT NULL);
      CREATE TRIGGER record_refusal_kept AFTER UPDATE OF last_run ON records
        WHEN OLD.state IN ('rejected', 'invalid', 'failed') AND NEW.last_run <> OLD.last_run
          AND (NEW.state <> OLD.state OR NEW.row_hash <> OLD.row_hash OR NEW.file <> OLD.file)
      BEGIN
        INSERT INTO record_history (scope, keyed, legacy_key, state, errors, run, file, line, next_run, next_file, next_line, at)
        VALUES (OLD.scope, OLD.keyed, OLD.legacy_key, OLD.state, OLD.errors, OLD.last_run, OLD.file, OLD.line, NEW.last_run, NEW.file, NEW.line, NEW.updated_at);
      END;
      INSERT INTO records (scope, keyed, legacy_key, state, last_run, errors, source, file, line, byte_offset, row_hash, updated_at)
        VALUES (1, 0, '${EXPORT}:136', 'rejected', 1, '[{"stage":"source","field":"","code":"SOURCE_ROW_INVALID","message":"m"}]', 'klanten', '${EXPORT}', 136, 0, 'h136', 'then');
      PRAGMA user_version = 1;`);
    v1.close();
    // Read-only, it reads as it is (nothing is written to it).
    const readOnly = openLedger(file, { readonly: true });
    expect([...readOnly.records()].map((r) => [r.provenance.line, r.origin])).toEqual([[136, undefined]]);
    readOnly.close();

    const ledger = openLedger(file);
    expect(beside(file, (db) => db.pragma('user_version', { simple: true }))).toBe(4);
    // The record was refused by a run of version 1 (run 1 here); this is a later one.
    ledger.finishRun(ledger.startRun({ ...input, readsEverything: false }).run.id, 'completed');
    const { run, scope } = ledger.startRun({ ...input, readsEverything: false });
    expect(scope.id).toBe(1);
    ledger.claimCorrections(scope, [{ keyed: 1, legacyKey: '100133', origin: { file: EXPORT, line: 136 } }]);
    stage(ledger, run.id, scope, [corrected('100133', 'fixed.csv', 2)]);
    expect(rows(ledger)).toEqual([['100133', 'staged', 136]]);
    expect(ledger.stories.of('crm', 10).stories[0]!.steps[0]!.formerKey).toBe(`${EXPORT}:136`);
    ledger.close();
  });
});
