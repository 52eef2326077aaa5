import { describe, expect, it } from 'vitest';
import countries from 'i18n-iso-countries';
import { createRequire } from 'node:module';
import { compileTransform, TransformFailure } from '../../src/pipeline/mapping/transforms.js';
import { checkMappingDeclarations, mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';
import { countryResolver } from '../../src/pipeline/mapping/index.js';
import { DEMONYMS, LEGACY_COUNTRY_FORMS } from '../../src/pipeline/mapping/transforms/country.js';

// The country and nationality transforms: ISO 3166 alpha-2 from codes, names in many languages
// and the documented legacy forms; anything else refused as UNKNOWN_CODE.

const step = (t: Parameters<typeof compileTransform>[0]) => compileTransform(t, {}).step;
const unknown = (message: string) => new TransformFailure('UNKNOWN_CODE', message);

describe('country', () => {
  const country = step('country');

  it('reads codes, numbers and names in many languages, whatever the case, accents and punctuation', () => {
    const read = ['Deutschland', 'Allemagne', 'Duitsland', 'Germany', 'DEU', 'DE', 'de', '276', 'deutschland ', 'DEUTSCHLAND'].map((v) =>
      country(v, {}),
    );
    expect(read).toEqual(Array(10).fill('DE'));
    expect(country("Côte d'Ivoire", {})).toBe('CI');
    expect(country('COTE D IVOIRE', {})).toBe('CI');
    expect(country('Ivoorkust', {})).toBe('CI');
    expect(country('IRELAND', {})).toBe('IE');
    expect(country('Belgique', {})).toBe('BE');
    expect(country('België', {})).toBe('BE');
    expect(country('Nederland', {})).toBe('NL');
    expect(country('Royaume-Uni', {})).toBe('GB');
    expect(country('528', {})).toBe('NL');
  });

  it('reads the documented legacy forms: vehicle codes, UK and its nations, Holland, EL', () => {
    const forms = [
      'D',
      'B',
      'CH',
      'A',
      'F',
      'I',
      'E',
      'NL',
      'L',
      'IRL',
      'GB',
      'UK',
      'England',
      'Scotland',
      'Wales',
      'Northern Ireland',
      'Holland',
      'EL',
    ];
    expect(forms.map((v) => country(v, {}))).toEqual([
      'DE',
      'BE',
      'CH',
      'AT',
      'FR',
      'IT',
      'ES',
      'NL',
      'LU',
      'IE',
      'GB',
      'GB',
      'GB',
      'GB',
      'GB',
      'GB',
      'NL',
      'GR',
    ]);
    // every legacy form reads as its table says (the table docs/mappings.md shows)
    for (const [form, code] of Object.entries(LEGACY_COUNTRY_FORMS)) expect([form, country(form, {})]).toEqual([form, code]);
  });

  it('reads every country by its ISO codes and its English, Dutch, German and French names, where the name is one country’s', () => {
    const require = createRequire(import.meta.url);
    const wrong: string[] = [];
    for (const lang of ['en', 'nl', 'de', 'fr']) {
      const names = require(`i18n-iso-countries/langs/${lang}.json`).countries as Record<string, string | string[]>;
      for (const [alpha2, name] of Object.entries(names)) {
        const first = Array.isArray(name) ? name[0]! : name;
        const got = country(first, {});
        // a name two countries share (Congo) is refused as such, checked below
        if (got !== alpha2 && !(got instanceof TransformFailure && got.message.startsWith('not one country')))
          wrong.push(`${lang} ${first}: ${JSON.stringify(got)}`);
      }
    }
    for (const alpha2 of Object.keys(countries.getAlpha2Codes())) {
      for (const form of [alpha2, countries.alpha2ToAlpha3(alpha2)!, countries.alpha2ToNumeric(alpha2)!]) {
        if (country(form, {}) !== alpha2) wrong.push(`${form}: ${JSON.stringify(country(form, {}))}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses an unknown value and a name two countries share, as UNKNOWN_CODE', () => {
    expect(country('Atlantis', {})).toEqual(
      unknown(
        'unknown country, expected an ISO 3166 code (DE, DEU, 276), a country name (Germany, Deutschland, Allemagne, Duitsland) or a legacy form (D, UK, Holland)',
      ),
    );
    expect(country('Congo', {})).toEqual(
      unknown('not one country: the name stands for CG and CD; say which with { country: { extra: { … } } }'),
    );
    // a demonym is a nationality, not a country
    expect(country('Dutch', {})).toBeInstanceOf(TransformFailure);
  });

  it("adds the mapping's own legacy forms, and refuses one that maps to no ISO code when the mapping loads", () => {
    const own = step({ country: { extra: { ENG: 'GB', Congo: 'CD' } } });
    expect([own('ENG', {}), own('eng', {}), own('Congo', {}), own('DE', {})]).toEqual(['GB', 'GB', 'CD', 'DE']);
    const yaml = `type: person
key: { column: id, scope: p }
record:
  countryCode: { column: land, transforms: [{ country: { extra: { ENG: XX } } }] }
`;
    expect(() => parseYamlText(yaml, mappingFileSchema, 'm.yaml', (m) => checkMappingDeclarations(m, compileTransform))).toThrow(
      'Invalid m.yaml: m.yaml:4:45: record.countryCode.transforms[0]: extra maps "ENG" to "XX", which is no ISO 3166 alpha-2 code',
    );
  });
});

describe('nationality', () => {
  const nationality = step('nationality');

  it('reads demonyms in Dutch, English, German and French, and everything country reads', () => {
    const read = [
      'Nederlandse',
      'Dutch',
      'deutsch',
      'française',
      'British',
      'Irish',
      'Belgian',
      'belge',
      'NEDERLANDS',
      'DUITS',
      'BELGISCH',
      'NL',
      'Germany',
      'D',
    ];
    expect(read.map((v) => nationality(v, {}))).toEqual([
      'NL',
      'NL',
      'DE',
      'FR',
      'GB',
      'IE',
      'BE',
      'BE',
      'NL',
      'DE',
      'BE',
      'NL',
      'DE',
      'DE',
    ]);
    for (const [code, names] of Object.entries(DEMONYMS)) for (const n of names) expect([n, nationality(n, {})]).toEqual([n, code]);
  });

  it('refuses an unknown nationality as UNKNOWN_CODE naming what was expected', () => {
    expect(nationality('MARSIAANS', {})).toEqual(
      unknown('unknown nationality, expected an ISO 3166 code, a country name or a nationality (Dutch, Nederlandse, deutsch, française)'),
    );
  });

  it('is exported for init as countryResolver', () => {
    const resolve = countryResolver({ nationality: true });
    expect([resolve('Duitse'), resolve('Mars')]).toEqual(['DE', { unknown: true }]);
  });
});
