/** Report-model inputs shared by the reconciliation unit tests: one small, fully explained chain. */
import type { GroupFacts, ReconcileInput } from '../../../src/reconcile/report-model.js';

export function group(over: Partial<GroupFacts> = {}): GroupFacts {
  return {
    component: 'Counterparties',
    entityType: 'person',
    notSent: 0,
    inFlight: 0,
    rejected: { MISSING_REQUIRED_FIELD: 2, DUPLICATE_LEGACY_KEY: 1 },
    refusedByStaging: {},
    staged: 0,
    invalid: { UNKNOWN_CODE: 1 },
    imported: 6,
    removedFromStaging: 1,
    ...over,
  };
}

export function input(over: Partial<ReconcileInput> = {}): ReconcileInput {
  return {
    run: { id: 'run-1', pipeline: 'crm-persons', migrationId: '7f1c2a4e-0000-4000-8000-000000000001' },
    generatedAt: '2026-01-02T03:04:05.000Z',
    groups: [group()],
    jobs: { validation: 'valid', import: 'done', counts: 'done' },
    platform: {
      migration: [{ component: 'Counterparties', numberOfStagedEntities: 6, numberOfImportedEntities: 6 }],
      counts: { staged: { person: 6 }, imported: { person: 6 } },
      importErrors: [],
    },
    errorCodes: [],
    tolerance: { kind: 'absolute', value: 0 },
    ...over,
  };
}
