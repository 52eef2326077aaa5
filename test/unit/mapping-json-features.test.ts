import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileMapping, type MapContext } from '../../src/pipeline/mapping/compile.js';
import { coerceTo } from '../../src/pipeline/mapping/coerce.js';
import { ReferenceIds } from '../../src/pipeline/mapping/reference-ids.js';
import { checkMappingDeclarations, mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { compileTransform, TransformFailure } from '../../src/pipeline/mapping/transforms.js';
import { mapAndCheck } from '../../src/pipeline/checks/row-verdict.js';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';
import type { SourceRow } from '../../src/pipeline/types.js';

// The mapping features JSON exports need: values of another JSON type than staging takes,
// paths into nested objects and arrays, an `each` over an array, and the trace of a refusal.

const NS = '3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f';
const ids = new ReferenceIds(NS);

async function compile(yaml: string) {
  return compileMapping(parseYamlText(yaml, mappingFileSchema, 'm.yaml'), join(tmpdir(), 'm.yaml'), ids);
}
function run(m: Awaited<ReturnType<typeof compile>>, values: Record<string, unknown>) {
  const ctx: MapContext = { reasons: null, refs: [], key: m.key(values) ?? '' };
  const out = m.map(values, ctx);
  return { record: out.record as Record<string, unknown>, reasons: ctx.reasons, refs: [...ctx.refs] };
}
const row = (values: Record<string, unknown>): SourceRow => ({
  source: 'orgs',
  values,
  provenance: { file: 'orgs.json', line: 7, byteOffset: 0, hash: '' },
});

const ORGANISATION = `
type: organisation
key: { column: kvk, scope: org }
record:
  organisationName: { column: naam, required: true }
  cocNumber: kvk
  isActive: actief
  addresses:
    - object:
        referenceId: { referenceId: { suffix: address/main } }
        type: { value: main }
        addressLine1: adres.straat
        houseNumber: adres.huisnummer
        postalCode: adres.postcode
        locality: adres.plaats
        countryCode: { value: NL }
`;

describe('coercion to what staging takes', () => {
  it('makes JSON numbers text where staging takes text, so a numeric house number and KvK number stage', async () => {
    const m = await compile(ORGANISATION);
    const values = {
      kvk: 30000017,
      naam: 'Drukkerij Çelik B.V.',
      actief: true,
      adres: { straat: 'Schoolstraat', huisnummer: 3, postcode: '1386 BE', plaats: 'Almere' },
    };
    const r = run(m, values);
    expect(r.reasons).toBeNull();
    expect(r.record.cocNumber).toBe('30000017');
    expect((r.record.addresses as Record<string, unknown>[])[0]!.houseNumber).toBe('3');
    expect(r.record.isActive).toBe(true);
    const v = mapAndCheck(m, row(values), { reasons: null, refs: [], key: '' });
    expect(v.kind === 'checked' && v.check.ok).toBe(true);
  });

  it('refuses what cannot be converted saying what was expected and what came: the field, the value, the column', async () => {
    const m = await compile(ORGANISATION);
    const r = run(m, { kvk: '1', naam: true, actief: 'ja', adres: { straat: ['Dorpsstraat'], postcode: '1386 BE', plaats: 'Almere' } });
    expect(r.reasons).toEqual([
      {
        field: 'organisationName',
        value: true,
        code: 'INVALID_FIELD_VALUE',
        message:
          'organisationName: expected a string, got the boolean `true` (a { code: … } table can say what it stands for) in column naam',
        trace: 'column "naam" `true` → string: refused',
      },
      {
        field: 'isActive',
        value: 'ja',
        code: 'INVALID_FIELD_VALUE',
        message: 'isActive: expected true or false, got the text `ja` (the boolean transform reads j/n, ja/nee, y/n, 1/0) in column actief',
        trace: 'column "actief" `ja` → boolean: refused',
      },
      {
        field: 'addresses[0].addressLine1',
        value: ['Dorpsstraat'],
        code: 'INVALID_FIELD_VALUE',
        message: 'addresses[0].addressLine1: expected a string, got a list `["Dorpsstraat"]` in column adres.straat',
        trace: 'column "adres.straat" `["Dorpsstraat"]` → string: refused',
      },
    ]);
  });

  it('runs transforms on the text of a number (trim, postcode-nl), and keeps a number where staging takes one', async () => {
    const m = await compile(`
type: person
key: { column: nr, scope: p }
record:
  initials: { value: J. }
  surname: { column: naam, transforms: [trim] }
  addresses:
    - object:
        referenceId: { referenceId: { suffix: a } }
        type: { value: main }
        addressLine1: straat
        locality: { value: y }
        countryCode: { value: NL }
        postalCode: { column: postcode, transforms: [postcode-nl] }
        houseNumber: { value: 12 }
  income:
    object:
      amount: inkomen
      currency: { value: EUR }
      frequency: { value: yearly }
`);
    const r = run(m, { nr: 1, naam: 42, straat: 'Kerkweg', postcode: 1234, inkomen: 45000.5 });
    expect(r.record.surname).toBe('42');
    expect((r.record.income as Record<string, unknown>).amount).toBe(45000.5);
    expect((r.record.addresses as Record<string, unknown>[])[0]!.houseNumber).toBe('12');
    expect(r.reasons).toEqual([
      expect.objectContaining({
        field: 'addresses[0].postalCode',
        message: 'addresses[0].postalCode: not a Dutch postcode, expected 1234 AB, got `1234` in column postcode',
      }),
    ]);
    // Text where staging takes a number: converted when it is unambiguous.
    expect((run(m, { nr: 1, naam: 'A', inkomen: '12,5' }).record.income as Record<string, unknown>).amount).toBe(12.5);
    const ambiguous = run(m, { nr: 1, naam: 'A', inkomen: '1.234' });
    expect(ambiguous.record.income).toBeUndefined();
    expect(ambiguous.reasons![0]!.message).toBe(
      'income.amount: expected a number, got the text `1.234`, which reads as a thousand or as a fraction; say which with { number: { decimal, thousands } } in column inkomen',
    );
  });

  it('says what staging expected when a value it gets is of another type (a constant, a script)', async () => {
    const m = await compile(`
type: person
key: { column: nr, scope: p }
record:
  initials: { value: J. }
  surname: { value: true }
  addresses:
    - object:
        referenceId: { referenceId: { suffix: a } }
        type: { value: main }
        addressLine1: straat
        postalCode: { value: 1234 AB }
        locality: { value: Ede }
        countryCode: { value: NL }
  income: { object: { amount: { concat: [bedrag] }, currency: { value: EUR }, frequency: { value: yearly } } }
`);
    const v = mapAndCheck(m, row({ nr: '1', straat: 'Kerkweg', bedrag: 'veel' }), { reasons: null, refs: [], key: '' });
    expect(v.kind === 'checked' && !v.check.ok && v.check.reasons.map((r) => r.message)).toEqual([
      'surname: expected a string, got the boolean `true`',
      'income.amount: expected a number, got the text `veel`',
    ]);
  });

  it('converts only what is unambiguous', () => {
    expect(coerceTo('string', 3)).toBe('3');
    expect(coerceTo('string', -2.5)).toBe('-2.5');
    expect(coerceTo('string', false)).toBeInstanceOf(TransformFailure);
    expect(coerceTo('number', ' 42 ')).toBe(42);
    expect(coerceTo('number', '-12.50')).toBe(-12.5);
    expect(coerceTo('number', '1234,567')).toBe(1234.567);
    expect(coerceTo('number', '0,1234')).toBe(0.1234);
    for (const text of ['1.234', '12,345', '1.234,56', '1 234', 'twaalf', ''])
      expect(coerceTo('number', text)).toBeInstanceOf(TransformFailure);
    expect(coerceTo('number', true)).toBeInstanceOf(TransformFailure);
    expect(coerceTo('boolean', 'TRUE')).toBe(true);
    expect(coerceTo('boolean', 'false')).toBe(false);
    expect(coerceTo('boolean', 'j')).toBeInstanceOf(TransformFailure);
    expect(coerceTo('boolean', 1)).toBeInstanceOf(TransformFailure);
  });
});

describe('paths into nested values', () => {
  it('reads nested objects and array items by a dotted path, or with [n] for an array index', async () => {
    const m = await compile(`
type: person
key: { column: nr, scope: p }
record:
  initials: { value: J. }
  surname: personalia.namen.0.achternaam
  firstName: personalia.namen[1].achternaam
  salutation: "aanhef.kort"
`);
    const r = run(m, {
      nr: '1',
      personalia: { namen: [{ achternaam: 'Jansen' }, { achternaam: 'Pietersen' }] },
      'aanhef.kort': 'Dhr.', // a flat key of that name wins over the path
      aanhef: { kort: 'no' },
    });
    expect(r.record).toMatchObject({ surname: 'Jansen', firstName: 'Pietersen', salutation: 'Dhr.' });
    expect(run(m, { nr: '1', personalia: { namen: [] } }).record).not.toHaveProperty('surname');
  });
});

const DIRECTORS = `
type: organisation
key: { column: kvk, scope: org }
record:
  organisationName: naam
  cocNumber: kvk
  telephoneNumbers:
    each: telefoons
    item:
      object:
        type: { value: office }
        number: { column: ., transforms: [{ phone: { region: NL } }] }
  addresses:
    - object:
        referenceId: { referenceId: { suffix: address/main } }
        type: { value: main }
        addressLine1: adres.straat
        postalCode: adres.postcode
        locality: adres.plaats
        countryCode: { value: NL }
    - each: vestigingen
      item:
        object:
          referenceId: { referenceId: { suffix: 'address/branch/{index}' } }
          type: { value: branch }
          addressLine1: straat
          houseNumber: huisnummer
          postalCode: { column: postcode, transforms: [postcode-nl] }
          locality: plaats
          countryCode: { value: NL }
  relations:
    each: bestuurders
    when: { column: soort, equals: bv }
    item:
      when: { column: klantnr, notEmpty: true }
      object:
        to: { referenceId: { column: klantnr, scope: persoon } }
        type: { value: isDirectorOf }
`;

describe('each: one output item per array item', () => {
  it('turns each director into a relation, each branch into an address, each number into a telephone number', async () => {
    const m = await compile(DIRECTORS);
    const r = run(m, {
      kvk: '30000017',
      naam: 'Çelik B.V.',
      soort: 'bv',
      telefoons: ['078-5242526', '06 12345678'],
      adres: { straat: 'Schoolstraat 3', postcode: '1386 BE', plaats: 'Almere' },
      vestigingen: [
        { straat: 'Dorpsstraat', huisnummer: 7, postcode: '1234ab', plaats: 'Ede' },
        { straat: 'Kerkweg', huisnummer: '9a', postcode: '6543 CD', plaats: 'Bree' },
      ],
      bestuurders: [{ klantnr: '100054', naam: 'A' }, { naam: 'no key' }, { klantnr: 100085 }],
    });
    expect(r.reasons).toBeNull();
    expect(r.record.telephoneNumbers).toEqual([
      { type: 'office', number: '+31785242526' },
      { type: 'office', number: '+31612345678' },
    ]);
    const addresses = r.record.addresses as Record<string, unknown>[];
    expect(addresses.map((a) => [a.type, a.houseNumber, a.postalCode, a.referenceId])).toEqual([
      ['main', undefined, '1386 BE', ids.of('org', '30000017', 'address/main')],
      ['branch', '7', '1234 AB', ids.of('org', '30000017', 'address/branch/0')],
      ['branch', '9a', '6543 CD', ids.of('org', '30000017', 'address/branch/1')],
    ]);
    expect(r.record.relations).toEqual([
      { to: ids.of('persoon', '100054'), type: 'isDirectorOf' },
      { to: ids.of('persoon', '100085'), type: 'isDirectorOf' },
    ]);
    // relations to check before upload, named by where they land and where they came from
    expect(r.refs).toEqual([
      { field: 'relations[0].to', column: 'bestuurders[0].klantnr', scope: 'persoon', key: '100054' },
      { field: 'relations[1].to', column: 'bestuurders[2].klantnr', scope: 'persoon', key: '100085' },
    ]);
    // the each's own condition reads the row
    expect(run(m, { kvk: '1', naam: 'x', soort: 'nv', bestuurders: [{ klantnr: '1' }] }).record).not.toHaveProperty('relations');
    // an empty or missing array gives no field
    expect(run(m, { kvk: '1', naam: 'x', telefoons: [] }).record).not.toHaveProperty('telephoneNumbers');
  });

  it('names the array item of a refusal: the field where it lands, the column with the item index', async () => {
    const m = await compile(DIRECTORS);
    const r = run(m, {
      kvk: '1',
      naam: 'x',
      telefoons: ['078-5242526', 'bel me'],
      vestigingen: [
        { straat: 'a', postcode: '1234 AB', plaats: 'b' },
        { straat: 'c', postcode: '0123 AB', plaats: 'd' },
      ],
    });
    expect(r.reasons).toEqual([
      {
        field: 'telephoneNumbers[1].number',
        value: 'bel me',
        code: 'INVALID_FIELD_VALUE',
        message:
          'telephoneNumbers[1].number: not a phone number, expected a number of region NL or an international one, got `bel me` in column telefoons[1]',
        trace: 'column "telefoons[1]" `bel me` → phone(NL) → refused',
      },
      {
        field: 'addresses[1].postalCode',
        value: '0123 AB',
        code: 'INVALID_FIELD_VALUE',
        message: 'addresses[1].postalCode: not a Dutch postcode, expected 1234 AB, got `0123 AB` in column vestigingen[1].postcode',
        trace: 'column "vestigingen[1].postcode" `0123 AB` → postcode-nl → refused',
      },
    ]);
    const notAList = run(m, { kvk: '1', naam: 'x', bestuurders: 'Jansen', soort: 'bv' });
    expect(notAList.reasons![0]!.message).toBe('relations: each reads a list, got `Jansen` in column bestuurders');
  });

  it('reads only the array as a column of the row (a CSV header need not hold the item fields)', async () => {
    const m = await compile(DIRECTORS);
    expect([...m.columns].sort()).toEqual([
      'adres.plaats',
      'adres.postcode',
      'adres.straat',
      'bestuurders',
      'kvk',
      'naam',
      'soort',
      'telefoons',
      'vestigingen',
    ]);
  });

  it('holds the item to the staged fields of the array element, and {index} to an each', async () => {
    const spec = parseYamlText(
      `
type: organisation
key: { column: kvk, scope: org }
record:
  organisationName: naam
  cocNumber: kvk
  relations:
    each: bestuurders
    item: { object: { to: { referenceId: { column: klantnr } }, soort: { value: isDirectorOf } } }
`,
      mappingFileSchema,
      'm.yaml',
    );
    expect(checkMappingDeclarations(spec, compileTransform)).toEqual([
      {
        path: ['record', 'relations', 'item', 'object', 'soort'],
        message: 'relations (an object) has no field "soort": staging would drop it; expected one of to, type',
      },
    ]);
    await expect(
      compile(`
type: organisation
key: { column: kvk, scope: org }
record:
  organisationName: naam
  cocNumber: kvk
  addresses: [{ object: { referenceId: { referenceId: { suffix: 'a/{index}' } } } }]
`),
    ).rejects.toThrow('field addresses[0].referenceId: a suffix with {index} needs an each around it');
  });
});

describe('the trace of a refused value', () => {
  it('shows the column, each transform and the value it made, up to the refusal', async () => {
    const m = await compile(`
type: person
key: { column: nr, scope: p }
record:
  initials: { value: J. }
  surname: naam
  dateOfBirth: { column: geb_datum, transforms: [trim, { replace: { regex: '/', with: '-' } }, { date: dd-mm-yyyy }] }
`);
    const r = run(m, { nr: '1', naam: 'A', geb_datum: ' 31/02/1980' });
    expect(r.reasons![0]!.trace).toBe(
      'column "geb_datum" ` 31/02/1980` → trim → `31/02/1980` → replace(///) → `31-02-1980` → date(dd-mm-yyyy) → refused',
    );
  });

  it('shows the declared chain of a value the staging schema refuses', async () => {
    const m = await compile(`
type: person
key: { column: nr, scope: p }
record:
  initials: { value: J. }
  surname: { column: naam, transforms: [collapse-spaces] }
  emailAddress: { concat: [voornaam, domein], separator: '@' }
`);
    const v = mapAndCheck(m, row({ nr: '1', naam: '   ', voornaam: 'jan' }), { reasons: null, refs: [], key: '' });
    expect(v.kind === 'checked' && !v.check.ok && v.check.reasons).toEqual([
      {
        field: 'surname',
        code: 'MISSING_REQUIRED_FIELD',
        message: 'surname: required by staging, got nothing',
        trace: 'column "naam" → collapse-spaces → nothing → refused by staging',
      },
    ]);
    expect(m.explain('emailAddress', 'jan')).toBe('concat(column "voornaam", column "domein") → `jan` → refused by staging');
  });
});
