/**
 * What issue 39 generalised, piece by piece: period words in ten languages, program prefixes,
 * postcodes read by their country, date placeholders and zoned timestamps, thousands separated by
 * a no-break space or an apostrophe, official and colloquial country names, the one country table
 * a phone's region reads, copybook 88-levels and trailer records, a trailer count narrowed to the
 * records read, and the undecided field that plan and run stop on.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { periodOf } from '../../src/init/period-words.js';
import { programPrefix, roleMatch } from '../../src/init/dictionary.js';
import { parseLayout } from '../../src/init/layout.js';
import { trailerCountFrom, type FixedWidthDialect } from '../../src/init/sniff.js';
import { ColumnProfiler } from '../../src/init/profile.js';
import { guessMapping } from '../../src/init/guess.js';
import { compileDate, compileNumberFormat, compileTransform, countryResolver } from '../../src/pipeline/mapping/transforms.js';
import { readPostcode } from '../../src/pipeline/mapping/transforms/postcode.js';
import { TransformFailure } from '../../src/pipeline/mapping/transforms/failure.js';
import { loadPipeline } from '../../src/pipeline/definition/load-pipeline.js';
import { checkConfiguration, undecidedPoints } from '../../src/pipeline/read/configuration.js';

describe('words that decide an income period', () => {
  it('reads monthly and yearly in ten languages and as abbreviations, and nothing from a bare header', () => {
    for (const m of [
      'Monthly Income',
      'Revenus mensuels',
      'MONTHLY-INCOME',
      'Income p.m.',
      'Netto maandinkomen',
      'monatlich',
      'per month',
      'Ingresos mensuales',
      'Reddito mensile',
      'Dochód miesięczny',
      'Rendimento mensal',
      'Měsíční příjem',
      'Månadsinkomst',
      'INC-MTH',
      'INK-PM',
      'kdRevenusMensuels',
    ])
      expect([m, periodOf(m)]).toEqual([m, 'Monthly']);
    for (const y of [
      'Annual Income',
      'Jahreseinkommen',
      'Revenu annuel',
      'jaarlijks',
      'Renta anual',
      'Reddito annuo',
      'Dochód roczny',
      'Roční příjem',
      'Årsinkomst',
      'INC-ANN',
      'per annum',
    ])
      expect([y, periodOf(y)]).toEqual([y, 'Yearly']);
    for (const none of ['Income', 'Einkommen', 'Revenus', 'Status', 'Monthly or yearly income'])
      expect([none, periodOf(none)]).toEqual([none, undefined]);
  });
});

describe('headers as programs write them', () => {
  it('finds the program prefix every column carries, and reads the names without it', () => {
    const cols = ['XX-CUST-NO', 'XX-SNAME', 'XX-DOB', 'XX-CTRY', 'XX-TOWN', 'XX-ADDR1', 'XX-INITS', 'XX-SEX', 'XX-PHONE', 'XX-CITY'];
    const prefix = programPrefix(cols);
    expect(prefix).toBe('xx-');
    expect(cols.map((c) => roleMatch(c, prefix)?.role)).toEqual([
      'key',
      'surname',
      'dateOfBirth',
      'country',
      'locality',
      'street',
      'initials',
      'sex',
      'phone',
      'locality',
    ]);
    expect(programPrefix(['Customer ID', 'Surname', 'CM-Town'])).toBeUndefined();
    expect(programPrefix(['name.kdNom', 'kdSexe', 'address.kdCp', 'contacts.0.value'])).toBe('kd');
  });

  it('names a nested field by its own part, not the object around it', () => {
    expect(roleMatch('address.postcode')?.role).toBe('postalCode');
    expect(roleMatch('address.Psč')?.role).toBe('postalCode');
  });
});

describe('postcodes written as numbers', () => {
  it('puts back lost leading zeros only where the country makes it certain, else refuses', () => {
    expect(readPostcode('3001', 'ES')).toBe('03001');
    expect(readPostcode('501', 'US')).toBe('00501');
    expect(readPostcode('11000', 'CZ')).toBe('110 00');
    expect(readPostcode('1000', 'BE')).toBe('1000');
    expect(readPostcode('999', 'BE')).toBeInstanceOf(TransformFailure); // Belgian postcodes never start with 0
    expect(readPostcode('123456', 'DE')).toBeInstanceOf(TransformFailure);
    expect(readPostcode('1234', 'GB')).toBeInstanceOf(TransformFailure);
    expect(readPostcode('1234', undefined)).toBeInstanceOf(TransformFailure);
    expect(readPostcode('sw1a  1aa', 'GB')).toBe('SW1A 1AA');
  });

  it('reads each row by its country column as the country transform reads it, a Dutch postcode as postcode-nl', () => {
    const step = compileTransform({ postcode: { countryColumn: 'land' } }, {}).step;
    expect(step('3001', { land: 'España' })).toBe('03001');
    expect(step('1234ab', { land: 'Nederland' })).toBe('1234 AB');
    expect(step('6629', { land: 'Belgique' })).toBe('6629');
  });
});

describe('dates: unknown is not a value', () => {
  it('reads declared placeholders as no date, and a zoned timestamp as its date in its zone', () => {
    const read = compileDate({ formats: ['yyyymmdd'], unknown: ['00000000', '19000101'] });
    expect(read('19000101')).toBe('');
    expect(read('00000000')).toBe('');
    expect(read('19800312')).toBe('1980-03-12');
    expect(read('99999999')).toBeInstanceOf(TransformFailure); // not declared: refused, never a date
    const zoned = compileDate({ formats: ['yyyy-mm-dd'], zoned: true });
    expect(zoned('1980-03-12T00:00:00Z')).toBe('1980-03-12');
    expect(zoned('1980-03-12T00:00:00+02:00')).toBe('1980-03-12');
    expect(zoned('1980-03-12T12:00:00-05:00')).toBe('1980-03-12');
    expect(zoned('1980-02-30T00:00:00Z')).toBeInstanceOf(TransformFailure);
  });

  it('init lists the placeholders a column holds, and never takes them as evidence of a date', () => {
    const p = new ColumnProfiler();
    const rows = ['19800312', '19000101', '19751224', '00000000', '20011109'];
    rows.forEach((d, i) => p.add({ klantnr: String(i + 1), achternaam: 'Jansen', geboortedatum: d }));
    const m = guessMapping('klanten', p.result());
    expect(m.fields.find((f) => f.name === 'dateOfBirth')!.value).toEqual({
      column: 'geboortedatum',
      transforms: [{ date: { formats: ['yyyymmdd'], unknown: ['00000000', '19000101'] } }],
    });
  });
});

describe('amounts and countries refused although right', () => {
  it('reads thousands separated by a no-break space, a narrow no-break space or an apostrophe', () => {
    expect(compileNumberFormat({ decimal: ',', thousands: ' ' })('45\u00a0000,50')).toBe(45000.5);
    expect(compileNumberFormat({ decimal: ',', thousands: ' ' })('45\u202f000,50')).toBe(45000.5);
    expect(compileNumberFormat({ decimal: '.', thousands: "'" })("110'357.38")).toBe(110357.38);
    expect(compileNumberFormat({ decimal: '.', thousands: "'" })('110\u2019357.38')).toBe(110357.38);
  });

  it('reads official long forms and colloquial names, in more languages', () => {
    const r = countryResolver();
    expect(
      ['Eire', 'Republic of Ireland', 'Grand-Duché de Luxembourg', 'Česká republika', 'Bundesrepublik Deutschland', 'Irsko'].map(r),
    ).toEqual(['IE', 'IE', 'LU', 'CZ', 'DE', 'IE']);
  });

  it("reads a phone's region column with the mapping's country.extra, as the country transform does", () => {
    const ask = compileTransform({ phone: { regionColumn: 'land' } }, {}, undefined, undefined, { countryExtra: { Nordland: 'NO' } }).step;
    expect(ask('412 34 567', { land: 'Nordland' })).toBe('+4741234567');
    const without = compileTransform({ phone: { regionColumn: 'land' } }, {}).step;
    expect(without('412 34 567', { land: 'Nordland' })).toBeInstanceOf(TransformFailure);
  });

  it('composes decomposed text with nfc, which init proposes when it sees such text', () => {
    expect(compileTransform('nfc', {}).step('Mu\u0308ller', {})).toBe('Müller');
    const p = new ColumnProfiler();
    p.add({ klantnr: '1', achternaam: 'Mu\u0308ller' });
    p.add({ klantnr: '2', achternaam: 'Jansen' });
    expect(guessMapping('klanten', p.result()).fields.find((f) => f.name === 'surname')!.value).toMatchObject({
      transforms: ['nfc', 'collapse-spaces'],
    });
  });

  it('never takes one-letter codes (sex M/F) for countries', () => {
    const p = new ColumnProfiler();
    ['M', 'F', 'M', 'F'].forEach((s, i) => p.add({ column1: String(i + 1), column2: 'Jansen', column3: s }));
    expect(guessMapping('x', p.result()).fields.map((f) => f.name)).not.toContain('countryCode');
  });
});

describe('copybooks and trailers', () => {
  const copybook = [
    '       01  XX-RECORD.',
    '           05  XX-CUST-NO        PIC 9(8).',
    '           05  XX-SEX            PIC X(1).',
    "               88  XX-SEX-MALE       VALUE 'M'.",
    "               88  XX-SEX-FEMALE     VALUE 'F'.",
    '           05  XX-DOB            PIC 9(8).',
    '               88  XX-DOB-UNKNOWN    VALUE 19000101 ZEROS.',
    '       01  XX-TRAILER.',
    '           05  XX-TRL-ID         PIC X(3).',
    '           05  XX-TRL-COUNT      PIC 9(9).',
    '           05  XX-TRL-HASH       PIC 9(18).',
    '',
  ].join('\n');

  it("keeps the data record's fields, its 88-levels, and where the trailer record counts", () => {
    const l = parseLayout(copybook, 'x.cpy');
    expect(l.columns.map((c) => c.name)).toEqual(['XX-CUST-NO', 'XX-SEX', 'XX-DOB']);
    expect(l.length).toBe(17);
    expect(l.conditions).toEqual({
      'XX-SEX': [
        { name: 'XX-SEX-MALE', values: ['M'] },
        { name: 'XX-SEX-FEMALE', values: ['F'] },
      ],
      'XX-DOB': [{ name: 'XX-DOB-UNKNOWN', values: ['19000101', '00000000'] }],
    });
    expect(l.trailerCount).toEqual({ start: 4, length: 9, name: 'XX-TRL-COUNT' });
  });

  it('uses the 88-levels as code tables and as the values that mean "not known"', () => {
    const p = new ColumnProfiler();
    [
      ['M', '19800312'],
      ['F', '19000101'],
      ['F', '19751224'],
    ].forEach(([s, d], i) => p.add({ 'XX-CUST-NO': String(i + 1), 'XX-SNAME': 'JANSEN', 'XX-SEX': s, 'XX-DOB': d }));
    const l = parseLayout(copybook, 'x.cpy');
    const m = guessMapping('cust', p.result(), { conditions: l.conditions! });
    expect(m.codes.sex).toEqual({ F: 'female', M: 'male' });
    expect(m.fields.find((f) => f.name === 'dateOfBirth')!.value).toEqual({
      column: 'XX-DOB',
      transforms: [{ date: { formats: ['yyyymmdd'], unknown: ['00000000', '19000101'] } }],
    });
  });

  it('narrows a trailer count to the records read when a hash total follows it', () => {
    const d: FixedWidthDialect = {
      kind: 'fixed-width',
      encoding: 'utf-8',
      length: 40,
      header: 1,
      trailer: { count: { start: 4, length: 27 } },
      trailerText: 'TRL000000150000000000074741092',
      columns: [],
      decimals: {},
      named: true,
      evidence: ['trailer: x'],
    };
    expect(trailerCountFrom(d, 150).trailer).toEqual({ count: { start: 4, length: 9 } });
    expect(trailerCountFrom(d, 151).trailer).toEqual({ count: { start: 4, length: 27 } }); // no part states 151: plan reports it
    expect(trailerCountFrom(d, 150)).not.toHaveProperty('trailerText');
  });
});

describe('an undecided field', () => {
  it('is never staged; plan and run stop on it naming file:line, unless told to stage without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagecoach-undecided-'));
    try {
      writeFileSync(join(dir, 'x.csv'), 'nr;naam;inkomen\n1;Jansen;2000\n');
      writeFileSync(
        join(dir, 'm.yaml'),
        [
          'type: person',
          'key: { column: nr, scope: x }',
          'record:',
          '  surname: naam',
          '  income:',
          '    undecided: "income: the period of inkomen"',
          '    draft: { object: { amount: { column: inkomen, transforms: [{ number: { decimal: ",", thousands: "" } }] }, currency: { value: EUR }, frequency: { value: Monthly } } }',
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'p.yaml'),
        'name: x\nlanguage: 2\ncomponent: Counterparties\nsources:\n  - { name: x, format: csv, path: x.csv, csv: { delimiter: ";", header: true }, mapping: m.yaml }\ntarget: { migration: current, referenceNamespace: 6e54ebc8-885f-489a-a721-c73903a19b0a }\n',
      );
      const def = await loadPipeline(join(dir, 'p.yaml'));
      expect((await undecidedPoints(def)).map((p) => [p.at.replace(/^.*\//, ''), p.field])).toEqual([['m.yaml:6', 'record.income']]);
      await expect(checkConfiguration(def)).rejects.toThrow(
        /1 field is undecided; nothing was read or sent[\s\S]*m\.yaml:6: record\.income: income: the period of inkomen/,
      );
      await expect(checkConfiguration(def, undefined, { stageUndecided: true })).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('messages and the share that moved', () => {
  it('shows invisible characters in a refused value', async () => {
    const { describeValue } = await import('../../src/pipeline/mapping/coerce.js');
    expect(describeValue('45\u00a0000,00')).toBe('`45\\u00a0000,00`');
    expect(describeValue('Jansen\u200b')).toBe('`Jansen\\u200b`');
    expect(describeValue('de Vries')).toBe('`de Vries`');
  });

  it('says when more than the expected share was refused, and exits 1 unless that share is expected', async () => {
    const { refusedShareLine, parseExpectedRefused } = await import('../../src/cli/refused-share.js');
    const { runExitCode } = await import('../../src/cli/commands/pipeline-commands.js');
    expect(refusedShareLine({ rows: 1000, refused: 620 })).toMatch(
      /^Most of the export did not move: 62% of the rows \(620 of 1,000\) were refused, more than the 5% expected/,
    );
    expect(refusedShareLine({ rows: 1000, refused: 50 })).toBeUndefined();
    expect(refusedShareLine({ rows: 1000, refused: 620 }, parseExpectedRefused('70%'))).toBeUndefined();
    expect(parseExpectedRefused('0.3')).toBe(0.3);
    expect(() => parseExpectedRefused('150%')).toThrow(/expected a share of the rows/);
    const report = {
      status: 'completed',
      complete: true,
      readFailures: [],
      rowsRead: 1000,
      rejected: 600,
      failed: 20,
      ledger: { rejected: 600, failed: 20, invalid: 0 },
    };
    expect(runExitCode(report as never)).toBe(1);
    expect(runExitCode(report as never, false, 0.7)).toBe(0);
    expect(runExitCode({ ...report, rejected: 10, failed: 0 } as never)).toBe(0);
  });
});
