import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/pipeline/batcher/index.js';
import { fieldChanges, ImpactTally, type HeldRecord, type HeldRecords } from '../../src/pipeline/checks/plan-impact.js';
import type { FrontRow } from '../../src/pipeline/types.js';

const origin = (line: number) => ({ source: 'klanten', provenance: { file: 'klanten.csv', line, byteOffset: 0, hash: '' } });
const mapped = (key: string, surname: string, line: number): FrontRow => ({
  kind: 'mapped',
  component: 'Counterparties',
  legacyKey: key,
  referenceId: `id-${key}`,
  record: { referenceId: `id-${key}`, type: 'person', initials: 'J.', surname } as never,
  row: origin(line),
});
const rejected = (key: string, code: string, line: number): FrontRow => ({
  kind: 'rejected',
  component: 'Counterparties',
  legacyKey: key,
  reasons: [{ field: 'surname', code, message: `surname: ${code}` }],
  row: origin(line),
});
const hashOf = (r: FrontRow) => encodeRecord((r as Extract<FrontRow, { kind: 'mapped' }>).record!, 'json-seq').contentHash;

describe('plan --ledger: what a run would send', () => {
  it('sorts each record by what the ledger holds of its key, as a run skips unchanged records', () => {
    const rows = [
      mapped('1', 'Jansen', 2), // staged with this content
      mapped('2', 'Pietersen', 3), // staged with other content
      mapped('3', 'Smit', 4), // not in the ledger
      mapped('4', 'Bakker', 5), // refused before
      mapped('5', 'Visser', 6), // staged in an earlier migration only
      rejected('6', 'INVALID_FIELD_VALUE', 7), // staged, now refused
      rejected('1', 'DUPLICATE_LEGACY_KEY', 8), // a duplicate of key 1: not the ledger's record
    ];
    const held = new Map<string, HeldRecord>([
      ['1', { state: 'staged', settled: true, contentHash: hashOf(rows[0]!), errors: [], lastRun: 1 }],
      ['2', { state: 'imported', settled: true, contentHash: hashOf(mapped('2', 'Pieterse', 3)), errors: [], lastRun: 1 }],
      [
        '4',
        {
          state: 'rejected',
          settled: false,
          contentHash: null,
          errors: [{ field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'surname: required' }],
          lastRun: 1,
        },
      ],
      ['5', { state: 'staged', settled: false, contentHash: hashOf(rows[4]!), errors: [], lastRun: 1 }],
      ['6', { state: 'staged', settled: true, contentHash: 'x', errors: [], lastRun: 1 }],
    ]);
    const asked: string[][] = [];
    const ledger: HeldRecords = { migration: { id: 'm-1' }, lookup: (keys) => (asked.push([...keys]), held), mappingsOf: () => undefined };
    const tally = new ImpactTally(ledger, 'ledger.db');
    for (const r of rows) tally.take(r);
    const impact = tally.finish();
    expect(impact).toMatchObject({
      ledger: 'ledger.db',
      migrationId: 'm-1',
      changed: 1,
      unchanged: 1,
      new: 1,
      again: 2,
      nowRefused: 1,
      toSend: 4,
    });
    expect(asked).toEqual([['1', '2', '3', '4', '5', '6']]);
    expect(impact.examples.map((x) => [x.kind, x.legacyKey, x.line])).toEqual([
      ['changed', '2', 3],
      ['again', '4', 5],
      ['again', '5', 6],
      ['nowRefused', '6', 7],
    ]);
    expect(impact.examples[0]).toMatchObject({
      before: { state: 'imported', contentKept: false },
      after: { record: { surname: 'Pietersen' } },
    });
    expect(impact.examples[1]!.before.reasons).toEqual([
      { field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'surname: required' },
    ]);
    expect(impact.examples[3]!.after).toEqual({
      reasons: [{ field: 'surname', code: 'INVALID_FIELD_VALUE', message: 'surname: INVALID_FIELD_VALUE' }],
    });
  });

  it('takes the hash and the record of a row a worker framed for upload (parallel reading)', () => {
    const record = { referenceId: 'id-9', type: 'person', initials: 'J.', surname: 'Jansen' };
    const encoded = encodeRecord(record, 'json-seq');
    const framed: FrontRow = {
      kind: 'mapped',
      component: 'Counterparties',
      legacyKey: '9',
      referenceId: 'id-9',
      encoded: { ...encoded, frame: Buffer.from(encoded.frame) },
      row: origin(2),
    };
    const ledger = (hash: string): HeldRecords => ({
      migration: { id: 'm-1' },
      lookup: () => new Map([['9', { state: 'staged', settled: true, contentHash: hash, errors: [], lastRun: 1 }]]),
      mappingsOf: () => undefined,
    });
    const same = new ImpactTally(ledger(encoded.contentHash), 'ledger.db');
    same.take(framed);
    expect(same.finish()).toMatchObject({ unchanged: 1, changed: 0, toSend: 0 });
    const other = new ImpactTally(ledger('0'.repeat(32)), 'ledger.db');
    other.take(framed);
    const impact = other.finish();
    expect(impact).toMatchObject({ unchanged: 0, changed: 1, toSend: 1 });
    expect(impact.examples[0]!.after.record).toEqual(record);
  });

  it('lists the fields whose values differ, as the contract names them, absent on one side as absent', () => {
    expect(
      fieldChanges(
        { surname: 'Jansen', surnamePrefix: 'van', addresses: [{ postalCode: '1234 AB' }], nationalities: ['NL'] },
        { surname: 'Jansen', surnamePrefix: 'VAN', addresses: [{ postalCode: '1234AB' }], nationalities: ['NL', 'BE'] },
      ),
    ).toEqual([
      { field: 'addresses[0].postalCode', before: '1234 AB', after: '1234AB' },
      { field: 'nationalities[1]', after: 'BE' },
      { field: 'surnamePrefix', before: 'van', after: 'VAN' },
    ]);
    expect(fieldChanges({ a: 1 }, { a: 1 })).toEqual([]);
  });
});
