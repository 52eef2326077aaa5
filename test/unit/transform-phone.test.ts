import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CountryCode, getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { compileTransform, readPhone, TransformFailure } from '../../src/pipeline/mapping/transforms.js';
import { checkMappingDeclarations, mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { compileMapping, type MapContext } from '../../src/pipeline/mapping/compile.js';
import { ReferenceIds } from '../../src/pipeline/mapping/reference-ids.js';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';
import { Rng } from '../../src/pipeline/samples/generate-crm.js';

// The phone transform: libphonenumber-js, a region declared or read from the row, nothing assumed.

const invalid = (message: string) => new TransformFailure('INVALID_FIELD_VALUE', message);
const step = (t: Parameters<typeof compileTransform>[0]) => compileTransform(t, {}).step;

describe('phone', () => {
  it('keeps no trunk zero: (0) after the country code is dropped for every country', () => {
    expect(readPhone('+44 (0)7911 123456', undefined)).toBe('+447911123456');
    expect(readPhone('+353 (0)87 123 4567', undefined)).toBe('+353871234567');
    expect(readPhone('+49 (0)30 1234567', undefined)).toBe('+49301234567');
    expect(readPhone('+31 (0)6 12345678', undefined)).toBe('+31612345678');
  });

  it('reads national notations of the declared region, 00 and the region’s own international prefix', () => {
    expect(readPhone('07911 123456', 'GB')).toBe('+447911123456');
    expect(readPhone('0044 7911 123456', 'NL')).toBe('+447911123456');
    expect(readPhone('0044 7911 123456', undefined)).toBe('+447911123456');
    expect(readPhone('011 44 7911 123456', 'US')).toBe('+447911123456');
    expect(readPhone('(212) 555-0123', 'US')).toBe('+12125550123');
    expect(readPhone('06-12 34 56 78', 'NL')).toBe('+31612345678');
  });

  it('refuses a number not valid for its region, naming the region', () => {
    expect(readPhone('07700 975642', 'GB')).toEqual(invalid('not a valid phone number for region GB'));
    expect(readPhone('+31 6 01234567', undefined)).toEqual(invalid('not a valid phone number for region NL'));
    expect(readPhone('0612345', 'NL')).toEqual(invalid('not a valid phone number for region NL'));
    // possible is the plan's lengths for any kind of number: far weaker (docs/mappings.md)
    expect(readPhone('0612', 'NL', 'possible')).toEqual(invalid('not a possible phone number for region NL (its length)'));
    expect(readPhone('0612345', 'NL', 'possible')).toBe('+31612345');
    expect(readPhone('+31 6 01234567', undefined, 'possible')).toBe('+31601234567');
    expect(readPhone('bel me', 'NL')).toEqual(invalid('not a phone number, expected a number of region NL or an international one'));
    expect(readPhone('06-12345678 ext 12', 'NL')).toEqual(
      invalid('a phone number with an extension, which E.164 cannot hold; expected the number alone'),
    );
  });

  it('assumes no region: a national number without one is refused saying so', () => {
    expect(step('phone')('06-12345678', {})).toEqual(
      invalid(
        'a national phone number, but no region is known: declare one ({ phone: { region: NL } }) or read it from a column (regionColumn)',
      ),
    );
    expect(step({ phone: {} })('+31 6 12345678', {})).toBe('+31612345678');
    // country is the older name of region
    expect(step({ phone: { country: 'BE' } })('03 234 56 78', {})).toBe('+3232345678');
    expect(step({ phone: { region: 'BE' } })('03 234 56 78', {})).toBe('+3232345678');
  });

  it("takes the region from the row's country column in any form the country transform reads, else the declared one", () => {
    const fromRow = step({ phone: { regionColumn: 'land', region: 'NL' } });
    expect(fromRow('087 123 4567', { land: 'IRELAND' })).toBe('+353871234567');
    expect(fromRow('030 1234567', { land: 'Deutschland' })).toBe('+49301234567');
    expect(fromRow('030 1234567', { land: 'D' })).toBe('+49301234567');
    expect(fromRow('07911 123456', { land: 'UK' })).toBe('+447911123456');
    expect(fromRow('06-12345678', { land: '' })).toBe('+31612345678');
    expect(fromRow('06-12345678', {})).toBe('+31612345678');
    expect(fromRow('06-12345678', { land: 'Atlantis' })).toEqual(
      invalid('the region column land holds `Atlantis`, which is no country with a numbering plan'),
    );
    expect(step({ phone: { regionColumn: 'land' } })('06-12345678', { land: '' })).toEqual(
      invalid(
        'a national phone number, but no region is known: column land is empty and the mapping declares no region ({ phone: { regionColumn: land, region: NL } })',
      ),
    );
  });

  it('reads the region column of the row through the mapping, lists it among the columns read, and names the region when refusing', async () => {
    const yaml = `
type: person
key: { column: id, scope: p }
record:
  surname: naam
  telephoneNumbers:
    - object:
        type: { value: home }
        number: { column: tel, transforms: [{ phone: { regionColumn: country } }] }
`;
    const m = await compileMapping(
      parseYamlText(yaml, mappingFileSchema, 'm.yaml'),
      join(tmpdir(), 'm.yaml'),
      new ReferenceIds('3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f'),
    );
    expect([...m.columns].sort()).toEqual(['country', 'id', 'naam', 'tel']);
    const ctx: MapContext = { reasons: null, refs: [], key: '1' };
    const out = m.map({ id: '1', naam: 'Murphy', tel: '087 123 4567', country: 'Ireland' }, ctx);
    expect(out.record.telephoneNumbers).toEqual([{ type: 'home', number: '+353871234567' }]);
    m.map({ id: '2', naam: 'Smith', tel: '07700 975642', country: 'ENGLAND' }, ctx);
    expect(ctx.reasons).toEqual([
      {
        field: 'telephoneNumbers[0].number',
        value: '07700 975642',
        code: 'INVALID_FIELD_VALUE',
        message: 'telephoneNumbers[0].number: not a valid phone number for region GB, got `07700 975642` in column tel',
        trace: 'column "tel" `07700 975642` → phone(region from column country) → refused',
      },
    ]);
  });

  it('refuses a region without a numbering plan, and region and country that differ, when the mapping loads', () => {
    const load = (phone: string) =>
      parseYamlText(
        `type: person\nkey: { column: id, scope: p }\nrecord:\n  surname: { column: tel, transforms: [{ phone: ${phone} }] }\n`,
        mappingFileSchema,
        'm.yaml',
        (m) => checkMappingDeclarations(m, compileTransform),
      );
    expect(() => load('{ region: XX }')).toThrow(
      'Invalid m.yaml: m.yaml:4:40: record.surname.transforms[0]: phone region "XX" is no ISO 3166 alpha-2 code with a numbering plan',
    );
    expect(() => load('{ region: NL, country: BE }')).toThrow(
      'Invalid m.yaml: m.yaml:4:40: record.surname.transforms[0]: phone: region NL and country BE name the same thing; keep one',
    );
  });
});

describe('phone: generated numbers in several notations read back to the truth', () => {
  it('reads valid numbers of GB, IE, DE, FR, BE, NL and US written nationally and internationally', () => {
    const random = new Rng(29);
    const wrong: string[] = [];
    let read = 0;
    for (const region of ['GB', 'IE', 'DE', 'FR', 'BE', 'NL', 'US'] as CountryCode[]) {
      const cc = getCountryCallingCode(region);
      let made = 0;
      for (let attempt = 0; attempt < 200_000 && made < 150; attempt++) {
        // a random national significant number; kept when libphonenumber calls it valid for the region
        const length = random.int(region === 'US' ? 10 : 7, region === 'US' ? 10 : 11);
        let nsn = String(random.int(1, 9));
        while (nsn.length < length) nsn += String(random.int(0, 9));
        const truth = `+${cc}${nsn}`;
        const number = parsePhoneNumberFromString(truth);
        if (!number?.isValid() || number.country !== region) continue;
        made++;
        const international = number.formatInternational();
        const national = number.formatNational();
        const notations = [
          [national, region],
          [national.replace(/[\s()-]/g, ''), region],
          [international, region],
          [international, 'NL'],
          [international.replace(/ /g, '-'), undefined],
          [region === 'US' ? `011 ${international.slice(1)}` : `00${international.slice(1)}`, region],
        ] as [string, string | undefined][];
        if (region !== 'US') notations.push([international.replace(' ', ' (0)'), undefined], [`+${cc} ${national}`, undefined]);
        for (const [text, r] of notations) {
          const got = readPhone(text, r);
          read++;
          if (got !== truth) wrong.push(`${text} (${r}): got ${JSON.stringify(got)}, expected ${truth}`);
        }
      }
      expect([region, made]).toEqual([region, 150]);
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(read).toBeGreaterThan(7 * 150 * 6);
  });
});
