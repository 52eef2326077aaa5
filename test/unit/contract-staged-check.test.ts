/**
 * The staged-record check runs on zod's compiled fast path (`z.compile`, src/contract/migration.ts).
 * zod promises that a compiled schema answers as its runtime parser does; these tests hold it to
 * that for our schema: over every field of a full person and organisation set to each of a list
 * of awkward values, removed, or joined by unknown keys, and over seeded random combinations, the
 * compiled schema and `checkStagedCounterparty` must give exactly the runtime's answer (the
 * parsed record, or the same issues and field errors).
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkStagedCounterparty, isStagedCounterparty, stagedCounterpartySchema } from '../../src/contract/migration.js';
import { fieldIssues } from '../../src/contract/field-errors.js';

const ID = '16497687-bba0-5fbb-a9c2-0b9ce1de5914';
const PERSON = {
  referenceId: ID,
  type: 'person',
  isActive: true,
  initials: 'A.I.',
  firstName: 'Anaïs Ilse',
  surnamePrefix: 'van',
  surname: 'Öztürk',
  salutation: 'Mevr.',
  sex: 'female',
  dateOfBirth: '1966-06-04',
  nationalities: ['TR', 'NL'],
  countryCode: 'NL',
  preferredCommunicationLanguage: 'nl-NL',
  emailAddress: 'a.ozturk@example.nl',
  telephoneNumbers: [{ type: 'home', number: '+31648914389', countryCode: 'NL' }],
  externalReferences: [{ origin: 'crm', referenceId: 'K1001' }],
  ratings: [{ agency: 'x', score: 3 }],
  associatedParties: [{ role: 'advisor' }],
  addresses: [
    {
      referenceId: 'ba9e651b-488d-5267-811b-fafbc822544c',
      type: 'main',
      addressLine1: 'Molenweg 52',
      addressLine2: 'bis',
      houseNumber: '52',
      postalCode: '9765 KZ',
      locality: 'Groningen',
      countryCode: 'NL',
    },
  ],
  relations: [{ to: '2b1f4f0e-3c4d-5e6f-8a9b-0c1d2e3f4a5b', type: 'isSignificantOtherOf' }],
  income: { amount: 45000.5, currency: 'EUR', frequency: 'yearly' },
};
const ORGANISATION = {
  referenceId: ID,
  type: 'organisation',
  organisationName: 'Bakkerij Bos B.V.',
  cocNumber: '12345678',
  countryOfIncorporation: 'NL',
  addresses: PERSON.addresses,
  relations: PERSON.relations,
  telephoneNumbers: PERSON.telephoneNumbers,
};

/** Values that sit on the edges of the schema's types and checks. */
const AWKWARD: unknown[] = [
  undefined,
  null,
  '',
  ' ',
  'x',
  'EURO',
  'EU',
  'NL',
  0,
  -0,
  1.5,
  NaN,
  Infinity,
  -Infinity,
  2 ** 53,
  true,
  false,
  [],
  [''],
  ['NL'],
  [null],
  [{}],
  {},
  { a: 1 },
  '1966-02-29',
  '1968-02-29',
  '2024-13-01',
  '1966-6-4',
  ID.toUpperCase(),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '16497687-bba0-0fbb-a9c2-0b9ce1de5914',
  `${ID} `,
  'person',
  'organisation',
  'Person',
  '\u0000',
  'é'.repeat(300),
];

type Json = Record<string, unknown>;

/** Every path into the record (object keys and array items), parents before children. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [];
  const out: (string | number)[][] = [];
  for (const [k, v] of Object.entries(value)) {
    const key = Array.isArray(value) ? Number(k) : k;
    out.push([...prefix, key], ...paths(v, [...prefix, key]));
  }
  return out;
}

/** A deep copy with the value at `path` set (undefined: the key removed). */
function withValue(record: Json, path: (string | number)[], value: unknown): Json {
  const copy = structuredClone(record);
  let at: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined && !Array.isArray(at)) delete at[last];
  else at[last] = value;
  return copy;
}

/** What a parse says, in a form toEqual compares fully (NaN and -0 survive, unlike JSON). */
function answer(result: z.ZodSafeParseResult<unknown>) {
  return result.success
    ? { ok: true, data: result.data }
    : { ok: false, issues: result.error.issues.map(({ code, path, message }) => ({ code, path, message })) };
}

/** checkStagedCounterparty's answer computed from the runtime parser alone (non-objects are refused before any parse). */
function runtimeCheck(input: unknown) {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, errors: [{ field: '', message: 'MALFORMED_RECORD' }] };
  const parsed = stagedCounterpartySchema.safeParse(input);
  if (parsed.success) return { ok: true, record: parsed.data };
  return { ok: false, errors: fieldIssues(input, parsed.error).map((i) => ({ field: i.field || 'type', message: i.message })) };
}

/** Inputs, each named: the two full records, each field set to each awkward value, each object given unknown keys. */
function cases(): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const base of [PERSON, ORGANISATION] as Json[]) {
    const name = String(base.type);
    out.push([name, base]);
    for (const path of [[], ...paths(base)]) {
      const where = [name, ...path].join('.');
      if (path.length > 0) for (const value of AWKWARD) out.push([`${where} = ${show(value)}`, withValue(base, path, value)]);
      // Unknown keys, and keys that mean something to plain objects, on every object in the record.
      const target = path.reduce<unknown>((o, k) => (o as Json)[k], base);
      if (target === null || typeof target !== 'object' || Array.isArray(target)) continue;
      for (const extra of ['{"extra":1}', '{"__proto__":{"polluted":true}}', '{"constructor":"x","toString":1}']) {
        const merged = Object.assign(JSON.parse(JSON.stringify(target)) as Json, JSON.parse(extra) as Json);
        out.push([`${where} + ${extra}`, path.length === 0 ? merged : withValue(base, path, merged)]);
      }
    }
  }
  for (const odd of [
    null,
    'person',
    42,
    [],
    [PERSON],
    {},
    { type: 'person' },
    { ...PERSON, type: undefined },
    { ...PERSON, type: 'company' },
  ])
    out.push([show(odd), odd]);
  return out;
}

function show(value: unknown): string {
  if (typeof value === 'number' || value === undefined) return String(Object.is(value, -0) ? '-0' : value);
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** A small seeded generator, so a failing combination can be found again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe('the staged-record check on zod’s compiled fast path', () => {
  it('compiles: zod takes the schema onto its fast path rather than falling back', () => {
    expect(() => z.compile(stagedCounterpartySchema, { strict: true })).not.toThrow();
  });

  it('answers every single-field variant exactly as the runtime parser does', () => {
    const compiled = z.compile(stagedCounterpartySchema, { strict: true });
    const inputs = cases();
    expect(inputs.length).toBeGreaterThan(2000);
    let valid = 0;
    const differing: string[] = [];
    for (const [name, input] of inputs) {
      const runtime = stagedCounterpartySchema.safeParse(input);
      if (runtime.success) valid++;
      if (!isDeepStrictEqual(answer(compiled.safeParse(input)), answer(runtime))) differing.push(`schema: ${name}`);
      if (!isDeepStrictEqual(checkStagedCounterparty(input), runtimeCheck(input))) differing.push(`check: ${name}`);
      if (isStagedCounterparty(input) !== runtime.success) differing.push(`validator: ${name}`);
    }
    expect(differing).toEqual([]);
    // Both kinds are well represented: the comparison is not all refusals.
    expect(valid).toBeGreaterThan(400);
    expect(inputs.length - valid).toBeGreaterThan(1000);
  });

  it('answers seeded combinations of several awkward fields exactly as the runtime parser does', () => {
    const next = random(20261123);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    const differing: string[] = [];
    for (let i = 0; i < 3000; i++) {
      let input: Json = structuredClone(i % 2 ? PERSON : ORGANISATION) as Json;
      for (let n = 1 + Math.floor(next() * 3); n > 0; n--) {
        const all = paths(input);
        if (all.length === 0) break;
        input = withValue(input, pick(all), pick(AWKWARD));
      }
      if (!isDeepStrictEqual(checkStagedCounterparty(input), runtimeCheck(input))) differing.push(JSON.stringify(input));
      if (isStagedCounterparty(input) !== runtimeCheck(input).ok) differing.push(`validator: ${JSON.stringify(input)}`);
    }
    expect(differing).toEqual([]);
  });

  it('returns a fresh record with unknown keys stripped, leaving the input as it was', () => {
    const input = { ...PERSON, serverOwned: 'x', addresses: [{ ...PERSON.addresses[0], extra: true }] };
    const before = structuredClone(input);
    const checked = checkStagedCounterparty(input);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.record).not.toBe(input);
    expect(checked.record).not.toHaveProperty('serverOwned');
    expect(checked.record.addresses![0]).not.toHaveProperty('extra');
    expect(input).toEqual(before);
  });
});
