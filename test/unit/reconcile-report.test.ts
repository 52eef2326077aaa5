import { describe, expect, it } from 'vitest';
import { buildReport, countsByType, parseTolerance, type ReconcileInput } from '../../src/reconcile/report-model.js';
import { group, input } from '../cases/reconcile/report-input.js';

describe('reconciliation report model', () => {
  it('balances when every gap is explained and the platform agrees with the ledger', () => {
    const report = buildReport(input());
    expect(report.balanced).toBe(true);
    expect(report.problems).toEqual([]);
    const g = report.groups[0]!;
    expect(g.steps).toEqual({ sourceRows: 10, mapped: 7, staged: 7, valid: 6, imported: 6 });
    expect(g.gaps.map((x) => [x.from, x.to, x.difference, x.unaccounted])).toEqual([
      ['sourceRows', 'mapped', 3, 0],
      ['mapped', 'staged', 0, 0],
      ['staged', 'valid', 1, 0],
      ['valid', 'imported', 0, 0],
    ]);
    expect(g.gaps[0]!.explained).toEqual([
      { stage: 'mapping', code: 'MISSING_REQUIRED_FIELD', label: 'MISSING_REQUIRED_FIELD', count: 2, accounted: true },
      { stage: 'mapping', code: 'DUPLICATE_LEGACY_KEY', label: 'DUPLICATE_LEGACY_KEY', count: 1, accounted: true },
    ]);
    expect(g.expectedOnPlatform).toBe(6);
    expect(g.platform).toEqual([
      { measure: 'staged', source: 'counts job', ledger: 6, platform: 6, difference: 0, allowed: 0, ok: true },
      { measure: 'imported', source: 'counts job', ledger: 6, platform: 6, difference: 0, allowed: 0, ok: true },
    ]);
    expect(report.totals).toEqual({
      sourceRows: 10,
      mapped: 7,
      staged: 7,
      valid: 6,
      imported: 6,
      unaccounted: 0,
      removedFromStaging: 1,
      inOtherMigrations: 0,
    });
  });

  it('does not balance when the platform imported fewer than the ledger says, and names the difference', () => {
    const report = buildReport(
      input({
        platform: {
          migration: [{ component: 'Counterparties', numberOfStagedEntities: 6, numberOfImportedEntities: 5 }],
          counts: { staged: { person: 6 }, imported: { person: 5 } },
        },
      }),
    );
    expect(report.balanced).toBe(false);
    expect(report.problems).toEqual([
      'Counterparties / person: the platform (counts job) reports 5 imported, the ledger 6 (difference -1, tolerance 0)',
      'Counterparties: the platform (migration) reports 5 imported, the ledger 6 (difference -1, tolerance 0)',
    ]);
  });

  it('flags rows the sources read but the ledger never recorded as unaccounted', () => {
    const report = buildReport(input({ groups: [group({ sourceRowsRead: 12 })] }));
    expect(report.balanced).toBe(false);
    expect(report.groups[0]!.gaps[0]).toMatchObject({ difference: 5, unaccounted: 2, ok: false });
    expect(report.problems).toEqual([
      'Counterparties / person: 2 record(s) between "Source rows" and "Mapped" are unaccounted (tolerance 0)',
    ]);
    expect(report.totals.unaccounted).toBe(2);
  });

  it('shows in-flight and unsent records as reasons that do not account for them', () => {
    const report = buildReport(
      input({
        groups: [group({ inFlight: 2, notSent: 1 })],
        platform: { migration: [{ component: 'Counterparties', numberOfStagedEntities: 6, numberOfImportedEntities: 6 }] },
      }),
    );
    const staging = report.groups[0]!.gaps[1]!;
    expect(staging).toMatchObject({ difference: 3, unaccounted: 3, ok: false });
    expect(staging.explained.map((e) => [e.code, e.count, e.accounted])).toEqual([
      ['NOT_SENT', 1, false],
      ['IN_FLIGHT', 2, false],
    ]);
    expect(report.balanced).toBe(false);
  });

  it('accepts unaccounted records within an absolute or a percentage tolerance', () => {
    const facts = { groups: [group({ sourceRowsRead: 12 })] };
    expect(buildReport(input({ ...facts, tolerance: parseTolerance('2') })).balanced).toBe(true);
    expect(buildReport(input({ ...facts, tolerance: parseTolerance('1') })).balanced).toBe(false);
    // 20% of 12 source rows is 2.4, so 2 records may be unaccounted
    expect(buildReport(input({ ...facts, tolerance: parseTolerance('20%') })).balanced).toBe(true);
    expect(buildReport(input({ ...facts, tolerance: parseTolerance('10%') })).balanced).toBe(false);
  });

  it('explains staged records by the job that has not finished yet', () => {
    const staged = { groups: [group({ staged: 6, imported: 0, invalid: {}, removedFromStaging: 0 })], platform: {} };
    const reason = (jobs: ReconcileInput['jobs']) =>
      buildReport(input({ ...staged, jobs })).groups[0]!.gaps[3]!.explained.map((e) => [e.code, e.accounted]);
    expect(reason({ validation: 'not-run', import: 'not-run', counts: 'not-run' })).toEqual([['AWAITING_VALIDATION', true]]);
    expect(reason({ validation: 'invalid', import: 'not-run', counts: 'not-run' })).toEqual([['IMPORT_BLOCKED', true]]);
    expect(reason({ validation: 'valid', import: 'running', counts: 'not-run' })).toEqual([['AWAITING_IMPORT', true]]);
    expect(reason({ validation: 'valid', import: 'done', counts: 'not-run' })).toEqual([['NOT_IMPORTED', false]]);
  });

  it('explains a partial import by the import job errors of the component', () => {
    const report = buildReport(
      input({
        groups: [group({ staged: 2, imported: 4 })],
        platform: {
          migration: [{ component: 'Counterparties', numberOfStagedEntities: 6, numberOfImportedEntities: 4 }],
          importErrors: [{ component: 'Counterparties', message: 'IMPORT_FAILED: 2 of 6 records could not be imported' }],
        },
      }),
    );
    expect(report.groups[0]!.gaps[3]!.explained).toEqual([
      {
        stage: 'import',
        code: 'IMPORT_FAILED',
        label: 'not imported: IMPORT_FAILED: 2 of 6 records could not be imported',
        count: 2,
        accounted: true,
      },
    ]);
    expect(report.components[0]!.importErrors).toEqual([
      { component: 'Counterparties', message: 'IMPORT_FAILED: 2 of 6 records could not be imported' },
    ]);
    expect(report.balanced).toBe(true);
  });

  it('flags an entity type the platform counts but the ledger has no record of', () => {
    const report = buildReport(input({ platform: { counts: { staged: { person: 6, organisation: 3 }, imported: { person: 6 } } } }));
    expect(report.problems).toEqual([
      'organisation: the platform (counts job) reports 3 record(s) of an entity type the ledger has none of',
    ]);
  });
});

describe('tolerance option', () => {
  it('reads counts and percentages and refuses anything else with the value it got', () => {
    expect(parseTolerance(undefined)).toEqual({ kind: 'absolute', value: 0 });
    expect(parseTolerance('3')).toEqual({ kind: 'absolute', value: 3 });
    expect(parseTolerance('0.5%')).toEqual({ kind: 'percent', value: 0.5 });
    expect(() => parseTolerance('1.5')).toThrow('Invalid tolerance: a count is a whole number, got `1.5`');
    expect(() => parseTolerance('five')).toThrow('Invalid tolerance: expected a count such as 3 or a percentage such as 0.5%, got `five`');
    expect(() => parseTolerance('150%')).toThrow('Invalid tolerance: a percentage is at most 100%, got `150%`');
  });
});

describe('counts job table', () => {
  it('reads the TotalEntity table by its headers when it is the only table', () => {
    expect(
      countsByType({
        counts: [
          {
            type: 'TotalEntity',
            headers: ['Count', 'EntityType'],
            stagedRows: [
              ['3', 'person'],
              ['2', 'organisation'],
            ],
            importedRows: [['3', 'person']],
          },
        ],
      }),
    ).toEqual({
      staged: { person: 3, organisation: 2 },
      imported: { person: 3 },
      totals: { person: { staged: 3, imported: 3 }, organisation: { staged: 2, imported: 0 } },
    });
  });

  it('takes entity types from the per-entity tables and per-component totals from TotalEntity', () => {
    const counts = countsByType({
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [['Counterparty', '7']],
          importedRows: [['Counterparty', '6']],
        },
        {
          type: 'Counterparty',
          headers: ['Type', 'Count'],
          stagedRows: [
            ['person', '7'],
            ['organisation', '0'],
          ],
          importedRows: [
            ['person', '6'],
            ['organisation', '0'],
          ],
        },
      ],
    });
    expect(counts).toEqual({
      staged: { person: 7, organisation: 0 },
      imported: { person: 6, organisation: 0 },
      totals: { Counterparty: { staged: 7, imported: 6 } },
    });
    const report = buildReport(input({ platform: { counts } }));
    expect(report.components[0]!.platform).toEqual([
      { measure: 'staged', source: 'counts job total', ledger: 6, platform: 7, difference: 1, allowed: 0, ok: false },
      { measure: 'imported', source: 'counts job total', ledger: 6, platform: 6, difference: 0, allowed: 0, ok: true },
    ]);
  });

  // A platform that answers the counts job with only the TotalEntity table (the spec's example).
  it('says "not reported" for a type the platform did not count, and balances on the totals it gave', () => {
    const counts = countsByType({
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [['Counterparty', '6']],
          importedRows: [['Counterparty', '6']],
        },
      ],
    });
    const report = buildReport(input({ platform: { counts } }));
    expect(report.groups[0]!.platform).toEqual([
      { measure: 'staged', source: 'counts job', ledger: 6, platform: null, difference: null, allowed: 0, ok: true },
      { measure: 'imported', source: 'counts job', ledger: 6, platform: null, difference: null, allowed: 0, ok: true },
    ]);
    expect(report.components[0]!.platform).toEqual([
      { measure: 'staged', source: 'counts job total', ledger: 6, platform: 6, difference: 0, allowed: 0, ok: true },
      { measure: 'imported', source: 'counts job total', ledger: 6, platform: 6, difference: 0, allowed: 0, ok: true },
    ]);
    expect(report.problems).toEqual([]);
    expect(report.balanced).toBe(true);
    // …and a wrong total still shows.
    const wrong = countsByType({
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [['Counterparty', '5']],
          importedRows: [['Counterparty', '6']],
        },
      ],
    });
    expect(buildReport(input({ platform: { counts: wrong } })).problems).toEqual([
      'Counterparties: the platform (counts job total) reports 5 staged, the ledger 6 (difference -1, tolerance 0)',
    ]);
  });

  // A platform that answers with more: zero rows for the components not migrated, one more table.
  it('takes zeros for other components as agreement and shows an unknown table without comparing it', () => {
    const counts = countsByType({
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [
            ['Counterparty', '6'],
            ['Collateral', '0'],
            ['FinancingSolution', '0'],
          ],
          importedRows: [
            ['Counterparty', '6'],
            ['Collateral', '0'],
            ['FinancingSolution', '0'],
          ],
        },
        { type: 'Counterparty', headers: ['Type', 'Count'], stagedRows: [['person', '6']], importedRows: [['person', '6']] },
        { type: 'Address', headers: ['AddressType', 'Count'], stagedRows: [['main', '5500']], importedRows: [['main', '5500']] },
      ],
    });
    expect(counts.otherTables).toEqual([{ type: 'Address', staged: { main: 5500 }, imported: { main: 5500 } }]);
    const report = buildReport(input({ platform: { counts } }));
    expect(report.problems).toEqual([]);
    expect(report.balanced).toBe(true);
    expect(report.otherCountTables).toEqual([{ type: 'Address', staged: { main: 5500 }, imported: { main: 5500 } }]);
    // A component the ledger has nothing of, reported with records, still does not balance.
    const more = countsByType({
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [
            ['Counterparty', '6'],
            ['Collateral', '3'],
          ],
          importedRows: [],
        },
        { type: 'Counterparty', headers: ['Type', 'Count'], stagedRows: [['person', '6']], importedRows: [['person', '6']] },
      ],
    });
    expect(buildReport(input({ platform: { counts: more } })).problems).toContain(
      'Collateral: the platform (counts job) reports 3 record(s) of an entity type the ledger has none of',
    );
  });
});
