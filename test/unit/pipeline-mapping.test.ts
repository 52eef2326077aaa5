import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v5 } from 'uuid';
import {
  compileDateFormat,
  compileNumberFormat,
  compileTransform,
  initials,
  normaliseEmail,
  normalisePhone,
  compileDate,
  postcodeNl,
  titleCase,
  collapseSpaces,
  TransformFailure,
} from '../../src/pipeline/mapping/transforms.js';
import { compileMapping, type MapContext } from '../../src/pipeline/mapping/compile.js';
import { ReferenceIds } from '../../src/pipeline/mapping/reference-ids.js';
import { loadMappingScript } from '../../src/pipeline/mapping/load-script.js';
import { mappingFileSchema, type Transform } from '../../src/pipeline/mapping/schema.js';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';
import type { StagedPerson } from '../../src/contract/migration.js';

const NS = '3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f';
const step = (t: Transform, codes = {}) => {
  const s = compileTransform(t, codes).step;
  return (v: unknown, row: Record<string, unknown> = {}) => s(v, row);
};

describe('transforms', () => {
  it('trims and changes case, title case keeping the Dutch IJ together', () => {
    expect(step('trim')('  Jan ')).toBe('Jan');
    expect(step('upper')('jan')).toBe('JAN');
    expect(step('lower')('JAN')).toBe('jan');
    expect(titleCase('jan-pieter VAN dijk')).toBe('Jan-Pieter Van Dijk');
    expect(titleCase('ijsbrand')).toBe('IJsbrand');
    expect(titleCase("o'neil")).toBe("O'Neil");
    expect(step('collapse-spaces')('  Jan \t  Pieter ')).toBe('Jan Pieter');
  });

  it('title-cases and collapses spaces exactly as the regular expressions that define them', () => {
    // The loops are written for speed; these one-liners are what they mean.
    const titleByRegex = (s: string) =>
      s.toLowerCase().replace(/(^|[\s\-'’.])(ij|\p{L})/gu, (_m, sep: string, ch: string) => sep + ch.toUpperCase());
    const collapseByRegex = (s: string) => s.replace(/\s+/g, ' ').trim();
    const cases = [
      '',
      ' ',
      'ijsbrand',
      'IJSBRAND van der berg',
      "o'neill",
      'jan-willem',
      'anne  marie',
      ' ëlla',
      'élodie',
      'straße',
      'ǆemal',
      '𝒜bc 𝒜bc',
      'a.b.c',
      'a--b',
      'x\u00a0y',
      'ij',
      'i',
      'ĳsselmeer',
      'de  ijssel',
      '  lead',
      'trail  ',
      'tab\there',
      'İSTANBUL',
      'ΣΊΣΥΦΟΣ ΟΔΟΣ',
      '1ste straat',
      "d'ij",
      'a’b',
      'x\u200ay',
      '\ufeffbom',
      'a\u0085b',
      'ß',
      'ﬁnn',
      'line\nbreak',
      'ctl\u0001x',
      'café-ij.ij',
      '\ud800lone',
      'Ĳ-ĳ',
    ];
    // And every combination of a few awkward characters, up to four long.
    const parts = ['a', 'I', 'j', 'é', ' ', '  ', '-', '.', "'", '\t', '\u00a0', '1', '𝒜'];
    const combos = (n: number): string[] => (n === 0 ? [''] : combos(n - 1).flatMap((c) => parts.map((p) => c + p)));
    const all = [...cases, ...combos(4)];
    expect(
      all.filter((s) => titleCase(s) !== titleByRegex(s)).map((s) => `${JSON.stringify(s)}: ${titleCase(s)} against ${titleByRegex(s)}`),
    ).toEqual([]);
    expect(
      all
        .filter((s) => collapseSpaces(s) !== collapseByRegex(s))
        .map((s) => `${JSON.stringify(s)}: ${collapseSpaces(s)} against ${collapseByRegex(s)}`),
    ).toEqual([]);
  });

  it('derives initials from first names', () => {
    expect(initials('Jan Pieter')).toBe('J.P.');
    expect(initials('IJsbrand Jan')).toBe('IJ.J.');
    expect(initials('jan-willem')).toBe('J.W.');
    expect(initials('  Zoë  ')).toBe('Z.');
    expect(initials('')).toBe('');
  });

  it('parses dates in the given formats strictly, rejecting dates that do not exist', () => {
    const parse = compileDate({ formats: ['dd-mm-yyyy', 'd-m-yyyy', 'yyyymmdd', 'dd/mm/yyyy'] });
    const notADate = (why: string) => new TransformFailure('INVALID_FIELD_VALUE', `not a date: ${why}`);
    expect(parse('07-03-1980')).toBe('1980-03-07');
    expect(parse('7-3-1980')).toBe('1980-03-07');
    expect(parse('19800307')).toBe('1980-03-07');
    expect(parse('07/03/1980')).toBe('1980-03-07');
    expect(parse('29-02-2000')).toBe('2000-02-29');
    expect(parse('29-02-1900')).toEqual(notADate('February has 29 days only in a leap year'));
    expect(parse('31-02-1980')).toEqual(notADate('February has 28 or 29 days'));
    expect(parse('31-04-1980')).toEqual(notADate('April has 30 days'));
    expect(parse('00-01-1980')).toEqual(notADate('a day starts at 1'));
    expect(parse('01-13-1980')).toEqual(notADate('a month runs from 1 to 12'));
    expect(parse('1980-03-07')).toEqual(
      new TransformFailure('INVALID_FIELD_VALUE', 'does not match the date format dd-mm-yyyy or d-m-yyyy or yyyymmdd or dd/mm/yyyy'),
    );
    expect(compileDate({ formats: ['dd.mm.yyyy'] })('07.03.1980')).toBe('1980-03-07');
    expect(compileDate({ formats: ['dd.mm.yyyy'] })('07x03x1980')).toEqual(
      new TransformFailure('INVALID_FIELD_VALUE', 'does not match the date format dd.mm.yyyy'),
    );
    expect(() => compileDateFormat('dd-mm')).toThrow(
      'date format "dd-mm" must contain a day (dd or d), a month (mm, m or mmm) and a year (yyyy or yy) once each',
    );
    const date = step({ date: 'dd-mm-yyyy' });
    expect(date('31-02-1980')).toEqual(notADate('February has 28 or 29 days'));
  });

  it('reads numbers only with the separators the mapping states (no default: a Dutch one would read 68,000 as 68)', () => {
    const load = (number: string) =>
      parseYamlText(
        `type: person\nkey: { column: id, scope: p }\nrecord:\n  surname: { column: x, transforms: [{ number: ${number} }] }\n`,
        mappingFileSchema,
        'm.yaml',
      );
    expect(() => load('{}')).toThrow(
      [
        'Invalid m.yaml: 2 problems',
        '  m.yaml:4:48: record.surname.transforms[0].number.decimal: expected one of "," | ".", got nothing',
        '  m.yaml:4:48: record.surname.transforms[0].number.thousands: expected one of "." | "," | " " | "\'" | "", got nothing',
      ].join('\n'),
    );
    expect(() => load("{ decimal: ',' }")).toThrow(
      'Invalid m.yaml: m.yaml:4:48: record.surname.transforms[0].number.thousands: expected one of "." | "," | " " | "\'" | "", got nothing',
    );
    expect(step({ number: { decimal: '.', thousands: ',' } })('68,000')).toBe(68000);
  });

  it('reads numbers with decimal commas and thousands separators', () => {
    const nl = compileNumberFormat({ decimal: ',', thousands: '.' });
    expect(nl('1.234,56')).toBe(1234.56);
    expect(nl('45.000,00')).toBe(45000);
    expect(nl('1234,5')).toBe(1234.5);
    expect(nl('-12')).toBe(-12);
    expect(nl('1.234.567')).toBe(1234567);
    expect(nl('1.23,4')).toBeUndefined();
    expect(nl('12,34,5')).toBeUndefined();
    expect(nl('abc')).toBeUndefined();
    const en = compileNumberFormat({ decimal: '.', thousands: ',' });
    expect(en('1,234.56')).toBe(1234.56);
    expect(compileNumberFormat({ decimal: ',', thousands: '' })('1234,56')).toBe(1234.56);
    expect(step({ number: { decimal: ',', thousands: '.' } })('4,5,6')).toEqual(
      new TransformFailure('INVALID_FIELD_VALUE', 'not a number, expected a number like 1.234,56'),
    );
  });

  it('reads numbers exactly as the regular expression that defines the format', () => {
    // The parser is a loop for speed; this is what it means.
    const byRegex = (f: { decimal: ',' | '.'; thousands: '.' | ',' | ' ' | '' }) => {
      const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const grouped = f.thousands ? `\\d{1,3}(?:${esc(f.thousands)}\\d{3})+|` : '';
      const regex = new RegExp(`^([-+]?)(${grouped}\\d+)(?:${esc(f.decimal)}(\\d+))?$`);
      return (text: string) => {
        const m = regex.exec(text);
        if (!m) return undefined;
        const n = Number(`${m[1] === '-' ? '-' : ''}${f.thousands ? m[2]!.split(f.thousands).join('') : m[2]}${m[3] ? `.${m[3]}` : ''}`);
        return Number.isFinite(n) ? n : undefined;
      };
    };
    // Every string of up to four of these characters, 20,000 longer ones drawn at random (seeded),
    // and a few chosen ones.
    const alphabet = ['1', '0', '9', '.', ',', ' ', '-', '+', 'a', '٣'];
    const combos = (n: number): string[] => (n === 0 ? [''] : combos(n - 1).flatMap((c) => alphabet.map((a) => c + a)));
    let seed = 42;
    const random = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % k);
    const drawn = Array.from({ length: 20000 }, () =>
      Array.from({ length: 5 + random(8) }, () => alphabet[random(alphabet.length)]).join(''),
    );
    const cases = [
      ...combos(4),
      ...combos(3),
      ...combos(2),
      ...combos(1),
      ...drawn,
      '1.234.567,89',
      '1,234,567.89',
      '1 234 567,5',
      '12.345',
      '1234.567',
      '-0,0',
      '+1.000',
      '9'.repeat(400),
      '1'.repeat(309) + ',5',
    ];
    for (const f of [
      { decimal: ',', thousands: '.' },
      { decimal: '.', thousands: ',' },
      { decimal: ',', thousands: '' },
      { decimal: '.', thousands: ' ' },
      { decimal: ',', thousands: ' ' },
      { decimal: '.', thousands: '' },
    ] as const) {
      const parse = compileNumberFormat(f);
      const expected = byRegex(f);
      const differ = cases.filter((text) => !Object.is(parse(text), expected(text)));
      expect(
        differ.map((text) => `${JSON.stringify(text)}: ${parse(text)} against ${expected(text)}`),
        JSON.stringify(f),
      ).toEqual([]);
    }
  });

  it('normalises Dutch and international phone numbers to E.164', () => {
    expect(normalisePhone('06-12345678', 'NL')).toBe('+31612345678');
    expect(normalisePhone('06 12 34 56 78', 'NL')).toBe('+31612345678');
    expect(normalisePhone('020-1234567', 'NL')).toBe('+31201234567');
    expect(normalisePhone('(020) 123 45 67', 'NL')).toBe('+31201234567');
    expect(normalisePhone('+31 6 12345678')).toBe('+31612345678');
    expect(normalisePhone('+31 (0)6 12345678')).toBe('+31612345678');
    expect(normalisePhone('0031612345678')).toBe('+31612345678');
    expect(normalisePhone('+32 3 234 56 78')).toBe('+3232345678');
    expect(normalisePhone('03 234 56 78', 'BE')).toBe('+3232345678');
    expect(normalisePhone('0612345', 'NL')).toBeUndefined();
    expect(normalisePhone('bel me', 'NL')).toBeUndefined();
    // no region, no guess: a national number is not read
    expect(normalisePhone('06-12345678')).toBeUndefined();
  });

  it('normalises e-mail addresses: trimmed, domain lower-cased, basic validity', () => {
    expect(normaliseEmail(' Jan.Jansen@Example.NL ')).toBe('Jan.Jansen@example.nl');
    expect(normaliseEmail('a+b@sub.domain.com')).toBe('a+b@sub.domain.com');
    expect(normaliseEmail('jan@')).toBeUndefined();
    expect(normaliseEmail('@example.nl')).toBeUndefined();
    expect(normaliseEmail('jan@bedrijf')).toBeUndefined();
    expect(normaliseEmail('jan jansen@example.nl')).toBeUndefined();
    expect(normaliseEmail('jan..jansen@example.nl')).toBeUndefined();
  });

  it('normalises Dutch postcodes and booleans', () => {
    expect(postcodeNl('1234ab')).toBe('1234 AB');
    expect(postcodeNl(' 1234 AB ')).toBe('1234 AB');
    expect(postcodeNl('123 AB')).toBeUndefined();
    expect(postcodeNl('0123 AB')).toBeUndefined();
    expect(postcodeNl('1234 SS')).toBeUndefined();
    expect((step('postcode-nl')('1234 sa') as TransformFailure).message).toMatch(/SA, SD and SS are never issued.*pattern/);
    expect((step('postcode-nl')('123 AB') as TransformFailure).message).toBe('not a Dutch postcode, expected 1234 AB');
    expect(step('boolean')('J')).toBe(true);
    expect(step('boolean')('nee')).toBe(false);
    expect(step('boolean')(true)).toBe(true);
    expect(step('boolean')('misschien')).toBeInstanceOf(TransformFailure);
  });

  it('translates codes through a table, with a clear refusal of unknown codes', () => {
    const codes = { land: { NL: 'NL', NEDERLANDS: 'NL', ONBEKEND: null } };
    expect(step({ code: 'land' }, codes)('NEDERLANDS')).toBe('NL');
    expect(step({ code: 'land' }, codes)('ONBEKEND')).toBe('');
    expect(step({ code: 'land' }, codes)('MARS')).toEqual(
      new TransformFailure('UNKNOWN_CODE', 'unknown code in table land, expected one of NL, NEDERLANDS, ONBEKEND'),
    );
    expect(step({ code: { table: 'land', unknown: 'keep' } }, codes)('MARS')).toBe('MARS');
    expect(step({ code: { table: 'land', unknown: 'empty' } }, codes)('MARS')).toBe('');
    expect(() => compileTransform({ code: 'sexe' }, codes)).toThrow('unknown code table "sexe"; the mapping\'s codes: declares "land"');
  });

  it('splits, joins, defaults, matches and replaces', () => {
    expect(step({ split: { separator: ' ', index: 0 } })('Jan Pieter')).toBe('Jan');
    expect(step({ split: { separator: ' ', index: -1 } })('Jan Pieter')).toBe('Pieter');
    expect(step({ split: { separator: ' ', index: 5 } })('Jan')).toBe('');
    expect(step({ split: { separator: ',' } })('a,b')).toEqual(['a', 'b']);
    expect(step({ join: '-' })(['a', '', 'b'])).toBe('a-b');
    const d = compileTransform({ default: 'NL' }, {});
    expect([d.acceptsEmpty, d.step('', {}), d.step('BE', {})]).toEqual([true, 'NL', 'BE']);
    expect(step({ pattern: { regex: '^\\d{8}$', message: 'expected 8 digits' } })('1234')).toEqual(
      new TransformFailure('INVALID_FIELD_VALUE', 'expected 8 digits'),
    );
    expect(step({ replace: { regex: '\\s+', with: '' } })('1234 56 78')).toBe('12345678');
  });
});

const ids = new ReferenceIds(NS);
const mappingYaml = (extra = '') => `
type: person
key: { column: nr, scope: klant }
record:
  initials: { first: [{ column: voorletters, transforms: [upper] }, { column: voornamen, transforms: [initials] }] }
  surname: { column: achternaam, required: true }
  fullName: { concat: [voornamen, { column: achternaam, transforms: [upper] }], separator: ' ' }
  sex: { column: geslacht, transforms: [{ code: geslacht }], when: { column: geslacht, in: [M, V] } }
  telephoneNumbers:
    - object: { type: { value: mobiel }, number: { column: mobiel, transforms: [{ phone: { region: NL } }] } }
    - object: { type: { value: vast }, number: { column: vast, transforms: [{ phone: { region: NL } }] } }
  addresses:
    - object:
        referenceId: { referenceId: { suffix: address/main } }
        type: { value: main }
        postalCode: { column: postcode, transforms: [postcode-nl] }
  relations:
    - when: { column: partner, notEmpty: true }
      object:
        to: { referenceId: { column: partner } }
        type: { value: isSignificantOtherOf }
codes: { geslacht: { M: male, V: female } }
${extra}`;

async function mapping(extra = '', dir?: string) {
  const spec = parseYamlText(mappingYaml(extra), mappingFileSchema, 'm.yaml');
  return compileMapping(spec, join(dir ?? tmpdir(), 'm.yaml'), ids);
}

function run(m: Awaited<ReturnType<typeof mapping>>, values: Record<string, unknown>) {
  const ctx: MapContext = { reasons: null, refs: [], key: m.key(values) ?? '' };
  const out = m.map(values, ctx);
  return { ...out, reasons: ctx.reasons, refs: [...ctx.refs] };
}

describe('mapping engine', () => {
  it('builds a record: first non-empty, concat, conditions, code tables, nested arrays skipped when empty', async () => {
    const m = await mapping();
    const r = run(m, {
      nr: ' 1001 ',
      voorletters: '',
      voornamen: 'Jan Pieter',
      achternaam: 'Jansen',
      geslacht: 'X',
      mobiel: '06-12345678',
      vast: '',
      postcode: '',
      partner: '',
    });
    expect(r.reasons).toBeNull();
    expect(r.record).toEqual({
      referenceId: ids.of('klant', '1001'),
      type: 'person',
      initials: 'J.P.',
      surname: 'Jansen',
      fullName: 'Jan Pieter JANSEN',
      telephoneNumbers: [{ type: 'mobiel', number: '+31612345678' }],
    });
  });

  it('applies each kind of condition, and a list of them as all of them', async () => {
    const spec = parseYamlText(
      `
type: person
key: { column: nr, scope: klant }
record:
  initials: { value: X. }
  surname: { column: achternaam, required: true }
  salutation: { value: Dhr., when: { column: geslacht, equals: M } }
  sex: { value: unknown, when: { column: geslacht, empty: true } }
  firstName: { column: voornamen, when: { column: voornamen, notEmpty: true } }
  countryCode: { value: NL, when: [{ column: land, in: [NL, NEDERLAND] }, { column: geslacht, notEmpty: true }] }
`,
      mappingFileSchema,
      'c.yaml',
    );
    const m = await compileMapping(spec, join(tmpdir(), 'c.yaml'), ids);
    const mapped = (values: Record<string, unknown>) => run(m, { nr: '1', achternaam: 'Jansen', ...values }).record;
    expect(mapped({ geslacht: ' M ', voornamen: 'Jan', land: 'NEDERLAND' })).toMatchObject({
      salutation: 'Dhr.',
      firstName: 'Jan',
      countryCode: 'NL',
    });
    expect(mapped({ geslacht: ' M ', voornamen: 'Jan', land: 'NEDERLAND' })).not.toHaveProperty('sex');
    const blank = mapped({ geslacht: '  ', voornamen: '', land: 'NL' });
    expect(blank).toMatchObject({ sex: 'unknown' });
    for (const field of ['salutation', 'firstName', 'countryCode']) expect(blank).not.toHaveProperty(field);
    expect(mapped({ geslacht: 'V', land: 'BE' })).not.toHaveProperty('countryCode');
  });

  it('derives referenceIds as UUIDv5 of scope:key, equal to the uuid package, and resolves relations to the same id', async () => {
    const m = await mapping();
    const a = run(m, { nr: '1001', voornamen: 'Jan', achternaam: 'A', partner: '1002', postcode: '1234ab' });
    const b = run(m, { nr: '1002', voornamen: 'Ans', achternaam: 'B', partner: '1001' });
    expect(a.referenceId).toBe(v5('klant:1001', NS));
    expect(b.referenceId).toBe(v5('klant:1002', NS));
    expect(a.record.relations).toEqual([{ to: b.referenceId, type: 'isSignificantOtherOf' }]);
    expect(b.record.relations).toEqual([{ to: a.referenceId, type: 'isSignificantOtherOf' }]);
    expect(a.record.addresses).toEqual([{ referenceId: v5('klant:1001#address/main', NS), type: 'main', postalCode: '1234 AB' }]);
    expect(a.refs).toEqual([{ field: 'relations[0].to', column: 'partner', scope: 'klant', key: '1002' }]);
    // a re-run (a new compile, a new ReferenceIds) gives the same ids
    const again = await compileMapping(parseYamlText(mappingYaml(), mappingFileSchema, 'm.yaml'), 'm.yaml', new ReferenceIds(NS));
    expect(run(again, { nr: '1001', voornamen: 'Jan', achternaam: 'A', partner: '1002' }).record.relations).toEqual(a.record.relations);
  });

  it('computes v5 ids exactly as the uuid package does, for any name', () => {
    for (const [scope, key, suffix] of [
      ['klant', '1'],
      ['crm-klant', '100234', 'address/main'],
      ['ü', 'Zoë €'],
      ['k', 'x'.repeat(600)],
      ['k', 'é'.repeat(400)],
    ] as [string, string, string?][]) {
      expect(ids.of(scope, key, suffix)).toBe(ids.reference(scope, key, suffix));
    }
    // Names of many lengths, interleaved (the hash reads a view per length, made once).
    const keys = Array.from({ length: 3000 }, (_, i) => `${i * 7919}${'é'.repeat(i % 5)}`);
    const differ = keys.filter(
      (k, i) =>
        ids.of('crm-klant', k, i % 2 ? 'address/main' : undefined) !== ids.reference('crm-klant', k, i % 2 ? 'address/main' : undefined),
    );
    expect(differ).toEqual([]);
  });

  it('collects every reason of a row with field, value and what was expected', async () => {
    const m = await mapping();
    const r = run(m, { nr: '7', voornamen: 'Jan', achternaam: '', geslacht: 'M', mobiel: 'bel me', postcode: '123 AB' });
    expect(r.reasons).toEqual([
      {
        field: 'surname',
        value: '',
        code: 'MISSING_REQUIRED_FIELD',
        message: 'surname: required, got nothing in column achternaam',
        trace: 'column "achternaam" → nothing',
      },
      {
        field: 'telephoneNumbers[0].number',
        value: 'bel me',
        code: 'INVALID_FIELD_VALUE',
        message:
          'telephoneNumbers[0].number: not a phone number, expected a number of region NL or an international one, got `bel me` in column mobiel',
        trace: 'column "mobiel" `bel me` → phone(NL) → refused',
      },
      {
        field: 'addresses[0].postalCode',
        value: '123 AB',
        code: 'INVALID_FIELD_VALUE',
        message: 'addresses[0].postalCode: not a Dutch postcode, expected 1234 AB, got `123 AB` in column postcode',
        trace: 'column "postcode" `123 AB` → postcode-nl → refused',
      },
    ]);
    expect((r.record as StagedPerson).sex).toBe('male');
  });

  it('runs a script next to the mapping for the rule a declaration cannot say', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mapping-script-'));
    writeFileSync(
      join(dir, 'rule.mjs'),
      `export default (row, record, helpers) => {
        if (row.achternaam.startsWith('van ')) { record.surnamePrefix = 'van'; record.surname = record.surname.slice(4); }
        if (row.vader) record.relations = [{ to: helpers.relation('relations[0].to', 'klant', row.vader), type: 'isChildOf' }];
        if (row.achternaam === 'X') helpers.reject('surname', 'INVALID_FIELD_VALUE', 'surname: X is not a name', 'X');
        return record;
      };`,
    );
    const m = await mapping('script: ./rule.mjs', dir);
    const r = run(m, { nr: '5', voornamen: 'Jan', achternaam: 'van Dijk', vader: '9' });
    const person = r.record as StagedPerson;
    expect([person.surnamePrefix, person.surname, person.relations]).toEqual([
      'van',
      'Dijk',
      [{ to: ids.of('klant', '9'), type: 'isChildOf' }],
    ]);
    expect(r.refs).toEqual([{ field: 'relations[0].to', column: '(script)', scope: 'klant', key: '9' }]);
    expect(run(m, { nr: '6', voornamen: 'Jan', achternaam: 'X' }).reasons).toEqual([
      { field: 'surname', value: 'X', code: 'INVALID_FIELD_VALUE', message: 'surname: X is not a name' },
    ]);
  });

  it('runs a TypeScript script, with its types stripped on load and its relative imports resolved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mapping-script-ts-'));
    writeFileSync(join(dir, 'prefixes.ts'), `export const PREFIXES: readonly string[] = ['van der', 'van'];\n`);
    writeFileSync(
      join(dir, 'rule.ts'),
      `import type { MappingScript } from 'stagecoach';
      import { PREFIXES } from './prefixes.js';
      interface Person { surname?: string; surnamePrefix?: string }
      const rule: MappingScript = (_row, record) => {
        const person = record as Person;
        const prefix = PREFIXES.find((p: string) => person.surname?.toLowerCase().startsWith(p + ' '));
        if (prefix && !person.surnamePrefix) { person.surnamePrefix = prefix; person.surname = person.surname!.slice(prefix.length + 1); }
        return record;
      };
      export default rule;`,
    );
    const m = await mapping('script: ./rule.ts', dir);
    const person = run(m, { nr: '5', voornamen: 'Jan', achternaam: 'van der Berg' }).record as StagedPerson;
    expect([person.surnamePrefix, person.surname]).toEqual(['van der', 'Berg']);
  });

  it('says which script failed to load and why, and what it must export', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mapping-script-bad-'));
    writeFileSync(join(dir, 'broken.ts'), `export default (row: = 1;\n`);
    writeFileSync(join(dir, 'nothing.ts'), `export const x = 1;\n`);
    const file = join(dir, 'm.yaml');
    await expect(mapping('script: ./broken.ts', dir)).rejects.toThrow(
      `${file}: script ./broken.ts could not be loaded: Transform failed with 1 error:`,
    );
    await expect(mapping('script: ./nothing.ts', dir)).rejects.toThrow(
      `${file}: script ./nothing.ts must export a default function (row, record, helpers) => record`,
    );
  });

  it('names tsx and how to install it when a TypeScript script is named on a machine without tsx', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mapping-script-notsx-'));
    writeFileSync(join(dir, 'rule.ts'), 'export default (row: unknown, record: unknown) => record;\n');
    const missing = () => Promise.reject(Object.assign(new Error("Cannot find package 'tsx'"), { code: 'ERR_MODULE_NOT_FOUND' }));
    await expect(loadMappingScript(join(dir, 'm.yaml'), './rule.ts', missing)).rejects.toThrow(
      `${join(dir, 'm.yaml')}: script ./rule.ts could not be loaded: a TypeScript script needs tsx, which is not installed: run \`npm install tsx\` in your project, or write the script as .js/.mjs`,
    );
  });

  it('keeps field names exactly as declared, whatever characters they hold ', async () => {
    const odd = ["it's", 'say "hi"', 'back\\slash', 'line\nbreak', '}); throw 1; ({', '${x}', 'constructor'];
    const spec = mappingFileSchema.parse({
      type: 'person',
      key: { column: 'nr', scope: 'klant' },
      record: {
        surname: { column: 'achternaam' },
        extra: { object: Object.fromEntries(odd.map((name) => [name, { column: 'achternaam' }])) },
      },
    });
    const m = await compileMapping(spec, join(tmpdir(), 'm.yaml'), ids);
    const r = run(m, { nr: '7', achternaam: 'Jansen' });
    const extra = (r.record as unknown as { extra: Record<string, unknown> }).extra;
    expect(Object.keys(extra)).toEqual(odd);
    for (const name of odd) expect(Object.hasOwn(extra, name) && extra[name]).toBe('Jansen');
  });

  it('lists the columns it reads, for the header check', async () => {
    const m = await mapping();
    expect([...m.columns].sort()).toEqual([
      'achternaam',
      'geslacht',
      'mobiel',
      'nr',
      'partner',
      'postcode',
      'vast',
      'voorletters',
      'voornamen',
    ]);
  });
});
