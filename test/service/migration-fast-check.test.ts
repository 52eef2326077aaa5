import { describe, expect, it } from 'vitest';
import { checkStagedCounterparty } from '../../src/contract/migration.js';
import { fastCheckDisabledBecause, fastCheckStagedCounterparty } from '../../src/service/migration/fast-check.js';
import { id, organisation, person } from '../cases/migration/records.js';

/** Every staged field in use, so that mutations reach each part of the schema. */
function fullPerson(): Record<string, unknown> {
  return person(1, {
    countryCode: 'NL',
    preferredCommunicationLanguage: 'nl-NL',
    telephoneNumbers: [{ type: 'mobile', number: '+31600000000', countryCode: 'NL' }],
    externalReferences: [{ origin: 'legacy-crm', referenceId: 'C-1' }],
    ratings: [{ agency: 'internal', score: 7, nested: { a: [1, 2] } }],
    associatedParties: [{ role: 'advisor', '12': 'numeric key' }],
    relations: [{ to: id(2), type: 'isSignificantOtherOf' }],
    emailAddress: 'p@example.org',
    surnamePrefix: 'van',
    salutation: 'Mr',
    sex: 'male',
  });
}
function fullOrganisation(): Record<string, unknown> {
  return organisation(3, { countryCode: 'NL', addresses: (person(3).addresses as unknown[]), relations: [{ to: id(1), type: 'isDirectorOf' }] });
}

/** Every path (as key lists) of a JSON value. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [prefix];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [prefix, ...keys.flatMap((k) => paths((value as Record<string | number, unknown>)[k], [...prefix, k]))];
}
function replaced(value: unknown, path: Array<string | number>, by: unknown): unknown {
  if (path.length === 0) return by;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[path[0]!] = replaced(copy[path[0]!], path.slice(1), by);
  return copy;
}

const REPLACEMENTS: unknown[] = [null, '', 'x', 'XYZ', 0, -1.5, true, [], {}, [1], { a: 1 }, '1980-02-30', '00000000-0000-0000-0000-000000000001', id(9)];

/** The fast check may only accept what zod accepts, with the very same output. */
function agrees(input: unknown): 'fast' | 'zod' {
  const fast = fastCheckStagedCounterparty(input);
  const zod = checkStagedCounterparty(input);
  if (fast === undefined) return 'zod';
  expect(zod.ok).toBe(true);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.ok ? zod.record : undefined));
  return 'fast';
}

describe('fast staged-counterparty check', () => {
  it('is compiled from the contract schema', () => {
    expect(fastCheckDisabledBecause).toBeUndefined();
  });

  it('accepts valid records with exactly the output of the zod check, unknown fields dropped and fields in schema order', () => {
    const shuffled = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).reverse());
    for (const record of [fullPerson(), fullOrganisation(), person(5), organisation(6), shuffled(fullPerson()), { ...fullPerson(), unknownField: 1, sequenceNumber: 3 }]) {
      expect(agrees(record)).toBe('fast');
    }
    expect(agrees({ ...fullPerson(), income: { frequency: 'Monthly', amount: 1, currency: 'EUR', extra: true } })).toBe('fast');
  });

  it('never accepts what zod refuses, whatever field is replaced by whatever value', () => {
    let fast = 0;
    let zod = 0;
    for (const base of [fullPerson(), fullOrganisation()]) {
      for (const path of paths(base)) {
        for (const by of REPLACEMENTS) (agrees(replaced(base, path, by)) === 'fast' ? fast++ : zod++);
        if (path.length > 0) (agrees(replaced(base, path, undefined)) === 'fast' ? fast++ : zod++);
      }
    }
    // Both paths were exercised.
    expect(fast).toBeGreaterThan(100);
    expect(zod).toBeGreaterThan(100);
  });

  it('leaves odd inputs to zod', () => {
    const proto = JSON.parse(`{"referenceId":"${id(1)}","type":"person","initials":"A","surname":"B","ratings":[{"__proto__":{"x":1}}]}`);
    for (const input of [null, 42, 'text', [], [fullPerson()], proto, Object.assign(Object.create({ inherited: 1 }), fullPerson())]) agrees(input);
    expect(fastCheckStagedCounterparty(proto)).toBeUndefined();
  });
});
