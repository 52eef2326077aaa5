import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileDate, compileTransform, TransformFailure } from '../../src/pipeline/mapping/transforms.js';
import { checkMappingDeclarations, mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { compileMapping, type MapContext } from '../../src/pipeline/mapping/compile.js';
import { ReferenceIds } from '../../src/pipeline/mapping/reference-ids.js';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';
import { Rng } from '../../src/pipeline/samples/generate-crm.js';
import { Redactor } from '../../src/privacy/index.js';

// The date transform: every format tried in full, ambiguity refused, and whether the FORMAT or
// the DATE is wrong said apart; month names, two-digit years, Excel serials.

const invalid = (message: string) => new TransformFailure('INVALID_FIELD_VALUE', message);

describe('date: several formats', () => {
  // The US export of the issue: dd/mm/yyyy listed first stopped there and swapped day and month.
  const us = compileDate({ formats: ['dd/mm/yyyy', 'mm/dd/yyyy'] });

  it('reads a value only a later format reads with that format', () => {
    expect(us('09/25/1982')).toBe('1982-09-25');
    expect(us('12/30/1979')).toBe('1979-12-30');
    expect(us('25/09/1982')).toBe('1982-09-25');
  });

  it('refuses a value two formats read as different dates, naming both readings', () => {
    expect(us('03/04/1980')).toEqual(
      invalid('ambiguous date: dd/mm/yyyy reads `1980-04-03`, mm/dd/yyyy reads `1980-03-04`; state which order wins with prefer'),
    );
    // the same date either way is no ambiguity
    expect(us('04/04/1980')).toBe('1980-04-04');
  });

  it('takes the reading of the format prefer names', () => {
    const prefer = compileDate({ formats: ['dd/mm/yyyy', 'mm/dd/yyyy'], prefer: 'mm/dd/yyyy' });
    expect(prefer('03/04/1980')).toBe('1980-03-04');
    expect(prefer('25/09/1982')).toBe('1982-09-25');
  });

  it('tries a format another one reads in full only for prefer, with the same readings as trying it', () => {
    // d/m/yyyy reads all dd/mm/yyyy reads: one pattern is tried for both
    const three = compileDate({ formats: ['dd/mm/yyyy', 'd/m/yyyy', 'm/d/yyyy'] });
    expect(three('3/4/1980')).toEqual(
      invalid('ambiguous date: d/m/yyyy reads `1980-04-03`, m/d/yyyy reads `1980-03-04`; state which order wins with prefer'),
    );
    const preferNarrow = compileDate({ formats: ['dd/mm/yyyy', 'd/m/yyyy', 'm/d/yyyy'], prefer: 'dd/mm/yyyy' });
    expect(preferNarrow('03/04/1980')).toBe('1980-04-03');
    // dd/mm/yyyy does not read 3/4/1980, so it does not win there
    expect(preferNarrow('3/4/1980')).toEqual(three('3/4/1980'));
    expect(preferNarrow('3/13/1980')).toBe('1980-03-13');
  });

  it('says whether the format or the date is wrong', () => {
    const nl = compileDate({ formats: ['dd-mm-yyyy', 'd-m-yyyy'] });
    expect(nl('31-02-1980')).toEqual(invalid('not a date: February has 28 or 29 days'));
    expect(nl('1980/02/31')).toEqual(invalid('does not match the date format dd-mm-yyyy or d-m-yyyy'));
    expect(us('13/13/1980')).toEqual(invalid('not a date: a month runs from 1 to 12'));
  });

  it('refuses through the mapping with field, reason, value and column', async () => {
    const yaml = `
type: person
key: { column: id, scope: p }
record:
  surname: naam
  dateOfBirth: { column: geboren, transforms: [{ date: [dd/mm/yyyy, mm/dd/yyyy] }] }
`;
    const m = await compileMapping(
      parseYamlText(yaml, mappingFileSchema, 'm.yaml'),
      join(tmpdir(), 'm.yaml'),
      new ReferenceIds('3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f'),
    );
    const ctx: MapContext = { reasons: null, refs: [], key: '1' };
    m.map({ id: '1', naam: 'Smith', geboren: '03/04/1980' }, ctx);
    expect(ctx.reasons?.map((r) => r.message)).toEqual([
      'dateOfBirth: ambiguous date: dd/mm/yyyy reads `1980-04-03`, mm/dd/yyyy reads `1980-03-04`; state which order wins with prefer, got `03/04/1980` in column geboren',
    ]);
    // the readings are values too: masked where the value is
    expect(new Redactor({ mode: 'masked', classOf: () => undefined }).message(ctx.reasons![0]!.message, 'dateOfBirth', '03/04/1980')).toBe(
      'dateOfBirth: ambiguous date: dd/mm/yyyy reads `19**-**-**`, mm/dd/yyyy reads `19**-**-**`; state which order wins with prefer, got `**/**/19**` in column geboren',
    );
  });
});

describe('date: tokens beyond dd, mm and yyyy', () => {
  it('reads month names in Dutch, English, German and French, any case, with or without a dot', () => {
    const named = compileDate({ formats: ['d-mmm-yyyy', 'd mmm yyyy', 'd. mmm yyyy'] });
    expect(named('12-mrt-1980')).toBe('1980-03-12');
    expect(named('12 March 1980')).toBe('1980-03-12');
    expect(named('12. März 1980')).toBe('1980-03-12');
    expect(named('12 févr. 1980')).toBe('1980-02-12');
    expect(named('1 mei 1980')).toBe('1980-05-01');
    expect(named('1 MAI 1980')).toBe('1980-05-01');
    expect(named('7 Dez. 1980')).toBe('1980-12-07');
    expect(named('12 Foo 1980')).toEqual(invalid('not a date: the month name is not one in Dutch, English, German or French'));
  });

  it('reads two-digit years with the pivot the mapping gives, and refuses yy without one when the mapping loads', () => {
    const yy = compileDate({ formats: ['dd/mm/yy'], pivot: 30 });
    expect(yy('07/03/29')).toBe('2029-03-07');
    expect(yy('07/03/30')).toBe('1930-03-07');
    expect(yy('07/03/80')).toBe('1980-03-07');
    const yaml = `type: person
key: { column: id, scope: p }
record:
  dateOfBirth: { column: geboren, transforms: [{ date: [dd/mm/yy] }] }
`;
    expect(() => parseYamlText(yaml, mappingFileSchema, 'm.yaml', (m) => checkMappingDeclarations(m, compileTransform))).toThrow(
      'Invalid m.yaml: m.yaml:4:48: record.dateOfBirth.transforms[0]: date format "dd/mm/yy" has a two-digit year: say which century with pivot (e.g. { date: { formats: [dd/mm/yy], pivot: 30 } } reads 29 as 2029 and 30 as 1930)',
    );
  });

  it('keeps yyyymmdd (mainframe extracts)', () => {
    expect(compileDate({ formats: ['yyyymmdd'] })('19800307')).toBe('1980-03-07');
  });

  it('reads Excel serials only where the mapping asks, minding the 1900 leap-year bug', () => {
    const excel = compileDate({ formats: ['dd-mm-yyyy'], excelSerial: true });
    expect(excel('1')).toBe('1900-01-01');
    expect(excel('59')).toBe('1900-02-28');
    expect(excel('60')).toEqual(invalid("not a date: Excel serial 60 is 29 February 1900, a day that never was (Excel's leap-year bug)"));
    expect(excel('61')).toBe('1900-03-01');
    expect(excel(29287)).toBe('1980-03-07');
    expect(excel('45658')).toBe('2025-01-01');
    expect(excel(29287.5)).toEqual(invalid('not a date: an Excel serial with a time of day, expected a whole day number'));
    expect(excel('07-03-1980')).toBe('1980-03-07');
    expect(compileDate({ formats: ['dd-mm-yyyy'] })('29287')).toEqual(invalid('does not match the date format dd-mm-yyyy'));
  });

  it('refuses declarations that cannot work when the mapping loads', () => {
    expect(() => compileDate({ formats: ['dd/mm/yyyy'], prefer: 'mm/dd/yyyy' })).toThrow(
      'prefer names "mm/dd/yyyy", which is not one of the formats dd/mm/yyyy',
    );
    expect(() => compileDate({ formats: [] })).toThrow('a date needs at least one format (or excelSerial or zoned: true)');
  });
});

/** Month names as Intl writes them (CLDR), the truth the parser's own month table is held to. */
const MONTH_NAMES = new Map(
  ['nl', 'en', 'de', 'fr'].flatMap((lang) =>
    (['long', 'short'] as const).map((style) => {
      const f = new Intl.DateTimeFormat(lang, { month: style, timeZone: 'UTC' });
      return [`${lang} ${style}`, Array.from({ length: 12 }, (_, m) => f.format(new Date(Date.UTC(2000, m, 1))))] as const;
    }),
  ),
);
const monthName = (lang: string, style: 'long' | 'short', date: Date): string => MONTH_NAMES.get(`${lang} ${style}`)![date.getUTCMonth()]!;
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

describe('date: generated dates in every supported format and language read back to the truth', () => {
  it('reads 3,000 random dates (seeded) written each way', () => {
    const random = new Rng(20261127);
    const formats: { spec: Parameters<typeof compileDate>[0]; render: (y: number, m: number, d: number, at: Date) => string[] }[] = [
      { spec: { formats: ['dd-mm-yyyy', 'd-m-yyyy'] }, render: (y, m, d) => [`${pad(d)}-${pad(m)}-${y}`, `${d}-${m}-${y}`] },
      { spec: { formats: ['yyyymmdd'] }, render: (y, m, d) => [`${y}${pad(m)}${pad(d)}`] },
      { spec: { formats: ['dd.mm.yyyy'] }, render: (y, m, d) => [`${pad(d)}.${pad(m)}.${y}`] },
      { spec: { formats: ['mm/dd/yyyy'] }, render: (y, m, d) => [`${pad(m)}/${pad(d)}/${y}`] },
      { spec: { formats: ['yyyy-mm-dd'] }, render: (y, m, d) => [`${y}-${pad(m)}-${pad(d)}`] },
      {
        spec: { formats: ['d mmm yyyy', 'd-mmm-yyyy', 'd. mmm yyyy'] },
        render: (y, _m, d, at) =>
          ['nl', 'en', 'de', 'fr'].flatMap((lang) =>
            (['long', 'short'] as const).flatMap((style) => {
              const name = monthName(lang, style, at);
              return [`${d} ${name} ${y}`, `${d}-${name}-${y}`, `${d}. ${name} ${y}`, `${d} ${name.toUpperCase()} ${y}`];
            }),
          ),
      },
    ];
    const compiled = formats.map((f) => ({ parse: compileDate(f.spec), render: f.render }));
    const yy = compileDate({ formats: ['dd/mm/yy'], pivot: 30 });
    const excel = compileDate({ formats: [], excelSerial: true });
    const both = compileDate({ formats: ['dd/mm/yyyy', 'mm/dd/yyyy'] });
    const wrong: string[] = [];
    const check = (text: string, got: unknown, truth: unknown) => {
      if (got !== truth) wrong.push(`${text}: got ${JSON.stringify(got)}, expected ${JSON.stringify(truth)}`);
    };
    for (let i = 0; i < 3000; i++) {
      const at = new Date(Date.UTC(1900, 2, 1) + random.int(0, 200 * 365) * 86_400_000);
      const [y, m, d] = [at.getUTCFullYear(), at.getUTCMonth() + 1, at.getUTCDate()];
      const truth = at.toISOString().slice(0, 10);
      for (const f of compiled) for (const text of f.render(y, m, d, at)) check(text, f.parse(text), truth);
      if (y >= 1930 && y < 2030) check(`${pad(d)}/${pad(m)}/${pad(y % 100)}`, yy(`${pad(d)}/${pad(m)}/${pad(y % 100)}`), truth);
      // Excel: days since 1899-12-30 for every date after the fictitious 1900-02-29
      const serial = Math.round((at.getTime() - Date.UTC(1899, 11, 30)) / 86_400_000);
      check(String(serial), excel(String(serial)), truth);
      // Day first or month first: read when only one order makes a date, refused when both make different ones.
      const text = `${pad(d)}/${pad(m)}/${y}`;
      const got = both(text);
      if (d > 12 || d === m) check(text, got, truth);
      else check(text, got instanceof TransformFailure && got.message.startsWith('ambiguous date: dd/mm/yyyy reads') ? truth : got, truth);
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    // the names really were in four languages and two styles (März, mrt, févr., Mar …)
    expect([...MONTH_NAMES.values()].map((names) => names[2])).toEqual(['maart', 'mrt', 'March', 'Mar', 'März', 'Mär', 'mars', 'mars']);
  });
});
