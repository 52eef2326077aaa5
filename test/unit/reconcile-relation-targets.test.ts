import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, type Ledger, type LedgerRecordInput } from '../../src/ledger/index.js';
import { validateStep, type ChainClient } from '../../src/reconcile/chain.js';
import { writeCorrections } from '../../src/reconcile/corrections.js';
import { tempDir } from '../support/service.js';

const M = '44444444-4444-4444-8444-444444444444';
const ref = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function rec(n: number, file: string, line: number, entityType = 'person'): LedgerRecordInput {
  return {
    legacyKey: String(n),
    referenceId: ref(n),
    entityType,
    contentHash: `h${n}`,
    provenance: { source: file.replace(/\..*/, ''), file, line, byteOffset: 0, rowHash: `r${n}` },
  };
}

/**
 * Persons 1001–1003 staged; organisation 2001 refused by validation and removed from staging;
 * organisation 2002 rejected before upload. 1001 points at 2001, 1002 at 2002, 1003 at a
 * referenceId no row holds.
 */
function setup(): { ledger: Ledger; client: ChainClient } {
  const dir = tempDir('stagecoach-relations-');
  dirs.push(dir);
  const ledger = openLedger(join(dir, 'ledger.db'));
  ledgers.push(ledger);
  const { run, scope } = ledger.startRun({ pipeline: 'crm', component: 'Counterparties', pipelineFile: 'p.yaml', pipelineHash: 'h' });
  ledger.setRunMigration(run.id, M);
  const records = [
    rec(1001, 'klanten.csv', 2),
    rec(1002, 'klanten.csv', 3),
    rec(1003, 'klanten.csv', 4),
    rec(2001, 'bedrijven.json', 7, 'organisation'),
  ];
  const batch = ledger.beginBatch(run.id, scope, ledger.migrationNo(M), records, 400);
  ledger.finishBatch(
    scope,
    batch,
    records.map((r) => ({ legacyKey: r.legacyKey, state: 'staged' as const })),
  );
  ledger.recordRejects(run.id, scope, [
    {
      legacyKey: '2002',
      referenceId: ref(2002),
      errors: [{ stage: 'mapping', field: 'cocNumber', code: 'MISSING_REQUIRED_FIELD', message: 'cocNumber: missing' }],
      provenance: rec(2002, 'bedrijven.json', 9).provenance,
    },
  ]);
  const refused = [{ stage: 'validation' as const, field: 'countryOfIncorporation', code: 'UNKNOWN_CODE', message: 'UNKNOWN_CODE' }];
  ledger.markValidated(M, [{ referenceId: ref(2001), field: 'countryOfIncorporation', message: 'UNKNOWN_CODE' }]);
  ledger.removals.intend(M, [{ referenceId: ref(2001), lastBatch: batch, errors: refused }]);
  ledger.removals.confirm(M, ref(2001));

  const relationsOf: Record<string, Array<{ type: string; to: string }>> = {
    [ref(1001)]: [{ type: 'DIRECTOR_OF', to: ref(2001) }],
    [ref(1002)]: [
      { type: 'EMPLOYEE_OF', to: ref(2001) },
      { type: 'DIRECTOR_OF', to: ref(2002) },
    ],
    [ref(1003)]: [{ type: 'DIRECTOR_OF', to: ref(9999) }],
  };
  const errors = [
    { component: 'Counterparties', referenceId: ref(1001), field: 'relations.0.to', message: 'RELATION_TARGET_MISSING' },
    { component: 'Counterparties', referenceId: ref(1002), field: 'relations.1.to', message: 'RELATION_TARGET_MISSING' },
    { component: 'Counterparties', referenceId: ref(1003), field: 'relations.0.to', message: 'RELATION_TARGET_MISSING' },
  ];
  const client = {
    migrations: {
      getStaged: async (_m: string, r: string) => (relationsOf[r] ? { referenceId: r, relations: relationsOf[r] } : undefined),
      deleteStaged: async () => undefined,
    },
    jobs: {
      validateStaging: async () => ref(7777),
      waitFor: async () => ({ referenceId: ref(7777), jobType: 'ValidateStaging', isValid: false, errors }),
    },
  } as unknown as ChainClient;
  return { ledger, client };
}

describe('RELATION_TARGET_MISSING from validation', () => {
  it("names the record's row and key, the target's legacy key, row and fate, and what to do", async () => {
    const { ledger, client } = setup();
    const v = await validateStep(client, ledger, M);
    const todo = 'fix that row first (it is in the corrections file with its own error), or correct or empty this key';
    expect(v.errors.map((e) => e.message)).toEqual([
      `record 1001 (klanten.csv:2): relations.0.to (DIRECTOR_OF) points at legacy key 2001 (bedrijven.json:7), refused by validation (UNKNOWN_CODE) and removed from staging — ${todo}`,
      `record 1002 (klanten.csv:3): relations.1.to (DIRECTOR_OF) points at legacy key 2002 (bedrijven.json:9), refused before upload (MISSING_REQUIRED_FIELD) — ${todo}`,
      `record 1003 (klanten.csv:4): relations.0.to (DIRECTOR_OF) points at referenceId ${ref(9999)}, which no row of the pipelines in this ledger holds — correct the key this row points at, or empty it`,
    ]);
    // the ledger keeps the same messages under the code, for the report and the corrections file
    const invalid = [...ledger.records({ states: ['invalid'] })];
    expect(invalid.map((r) => [r.legacyKey, r.errors.map((e) => [e.code, e.message])])).toEqual([
      ['1001', [['RELATION_TARGET_MISSING', v.errors[0]!.message]]],
      ['1002', [['RELATION_TARGET_MISSING', v.errors[1]!.message]]],
      ['1003', [['RELATION_TARGET_MISSING', v.errors[2]!.message]]],
      ['2001', [['UNKNOWN_CODE', 'UNKNOWN_CODE']]],
    ]);
  });

  it('writes that message into the corrections file once, without a second piece of advice', async () => {
    const { ledger, client } = setup();
    await validateStep(client, ledger, M);
    const dir = tempDir('stagecoach-relations-out-');
    dirs.push(dir);
    writeFileSync(join(dir, 'klanten.csv'), 'nr;naam\n1001;A\n1002;B\n1003;C\n');
    const offsets: Record<number, number> = { 2: 8, 3: 15, 4: 22 };
    const refused = [...ledger.refused()]
      .filter((r) => r.provenance.file === 'klanten.csv')
      .map((r) => ({ ...r, provenance: { ...r.provenance, byteOffset: offsets[r.provenance.line]! } }));
    const sources = [{ name: 'klanten', format: 'csv' as const, encoding: 'utf-8' as const, csv: { delimiter: ';' } }];
    const files = await writeCorrections(refused, sources, join(dir, 'out'), dir);
    const text = readFileSync(files[0]!.file, 'utf8');
    expect(text).toContain('points at legacy key 2001 (bedrijven.json:7)');
    expect(text.match(/ — /g)?.length).toBe(3);
  });
});
