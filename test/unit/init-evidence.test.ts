/**
 * What init reads from headers and values in other languages and notations: header matching by
 * words, dates only in an order a value proves, code values it cannot place named with their
 * counts, amounts' separators and currency, and every unmapped column with its reason.
 */
import { describe, expect, it } from 'vitest';
import { ColumnProfiler, guessMapping } from '../../src/init/index.js';
import { roleMatch } from '../../src/init/dictionary.js';
import { decideAmount, decideDate } from '../../src/init/evidence.js';
import { parseLayout } from '../../src/init/layout.js';

const profileOf = (rows: Array<Record<string, string>>) => {
  const p = new ColumnProfiler();
  for (const r of rows) p.add(r);
  return p.result();
};
const column = (values: string[]) => profileOf(values.map((v) => ({ c: v }))).columns[0]!;

describe('headers in Dutch, English, German and French', () => {
  it('matches by words, folding ß and accents, dropping brackets and "No"', () => {
    const roles = [
      'Chamber of Commerce No',
      'Handelsregisternummer',
      'N° SIREN',
      'Director Customer ID',
      'Annual Income (GBP)',
      'Straße',
      'Staatsangehörigkeit',
      'Civilité',
      'Anrede',
      'Title',
      'Date de naissance',
      'N° client',
      'Geboortedatim',
    ].map((h) => roleMatch(h)?.role);
    expect(roles).toEqual([
      'cocNumber',
      'cocNumber',
      'cocNumber',
      'directorKey',
      'incomeAmount',
      'street',
      'nationality',
      'salutation',
      'salutation',
      'salutation',
      'dateOfBirth',
      'key',
      'dateOfBirth',
    ]);
    expect(roleMatch('Lead Source')).toBeUndefined();
  });
});

describe('dates from evidence', () => {
  it('takes the one order a value proves, and only that order', () => {
    expect(decideDate(column(['25/09/1982', '01/02/1970'])).transform).toEqual({ date: ['dd/mm/yyyy'] });
    expect(decideDate(column(['09/25/1982', '01/02/1970'])).transform).toEqual({ date: ['mm/dd/yyyy'] });
  });

  it('leaves a mixed column and an unproven one to the user, with the counts', () => {
    const mixed = decideDate(column(['25/09/1982', '09/25/1982', '01/02/1970']));
    expect(mixed.transform).toBeUndefined();
    expect(mixed.todo).toBe(
      'c: both orders of day and month are proven (a mixed column) (1 with a first part over 12 (day-first), 1 with a second part over 12 (month-first), 1 either way); write its format, e.g. { date: { formats: [dd/mm/yyyy, mm/dd/yyyy], prefer: dd/mm/yyyy } }',
    );
    const hinted = decideDate(column(['01/02/1970', '03/04/1980']), { monthFirst: true, why: '100% of Country is US' });
    expect(hinted.transform).toEqual({ date: ['mm/dd/yyyy'] });
    expect(hinted.todo).toContain('mm/dd/yyyy is taken from a hint (100% of Country is US): confirm it');
  });

  it('recognises yyyymmdd, month names and two-digit years', () => {
    expect(decideDate(column(['19800312', '19991231'])).transform).toEqual({ date: ['yyyymmdd'] });
    expect(decideDate(column(['12. März 1980', '1. Mai 1975'])).transform).toEqual({ date: ['d. mmm yyyy'] });
    expect(decideDate(column(['12-mrt-1980', '01-okt-1975'])).transform).toEqual({ date: ['d-mmm-yyyy'] });
    const yy = decideDate(column(['25/09/82', '01/02/70']));
    expect(yy.transform).toMatchObject({ date: { formats: ['dd/mm/yy'] } });
    expect(yy.todo).toMatch(/two-digit years are read with pivot \d+/);
  });
});

describe('amounts', () => {
  it('reads the decimal separator and the currency from the values or the header', () => {
    const p = profileOf([{ 'Annual Income (GBP)': '68,000.00' }, { 'Annual Income (GBP)': '1,250.50' }]);
    expect(decideAmount(p.columns[0]!, p.sample)).toMatchObject({ number: { decimal: '.', thousands: ',' }, currency: 'GBP' });
    const q = profileOf([{ Einkommen: '68.000,00 €' }, { Einkommen: '€ 1.250,50' }]);
    expect(decideAmount(q.columns[0]!, q.sample)).toMatchObject({ number: { decimal: ',', thousands: '.' }, currency: 'EUR' });
  });
});

describe('code lists, status and unmapped columns', () => {
  it('names every value it cannot place with its rows, consumes Status as isActive, lists unmapped columns with reasons', () => {
    const rows = [
      ['1', 'Smith', 'Mr', 'ENGLAND', 'Active', 'M', 'a@b.co', 'x'],
      ['2', 'Kelly', 'Ms', 'IRELAND', 'Dormant', 'F', 'c@d.co', 'y'],
      ['3', 'Jones', 'Dr', 'Atlantis', 'Dormant', 'Q', 'e@f.co', 'z'],
    ].map(([id, surname, title, country, status, sex, mail, other]) => ({
      'Customer ID': id!,
      Surname: surname!,
      Title: title!,
      Country: country!,
      Status: status!,
      Gender: sex!,
      Contact: mail!,
      Misc: other!,
    }));
    const m = guessMapping('customers', profileOf(rows));
    expect(m.fields.map((f) => f.name)).toEqual(expect.arrayContaining(['salutation', 'isActive', 'emailAddress', 'countryCode']));
    expect(m.fields.find((f) => f.name === 'emailAddress')!.why).toContain('its values: e-mail addresses');
    expect(m.todos).toEqual(
      expect.arrayContaining([
        'sex: values `Q` (1 row) of Gender are in no code list; their rows get no sex until you add them to codes.sex',
        'isActive: statuses `Dormant` (2 rows) of Status are neither active nor inactive to init; their rows get no isActive until you add them to codes.status (ACTIVE → "true")',
        'countryCode: values `Atlantis` (1 row) of Country are no country init knows; their rows are refused until you add them ({ country: { extra: { <value>: <ISO code> } } })',
      ]),
    );
    expect(m.unmapped).toEqual([{ column: 'Misc', reason: 'header not recognised and its values (3 distinct) do not say what it holds' }]);
  });
});

describe('record layouts for fixed-width exports', () => {
  it('reads a COBOL copybook: PIC X/9/S9V99, FILLER, group levels, comments; implied decimals kept', () => {
    const layout = parseLayout(
      [
        '      * CUSTOMER EXTRACT',
        '       01  CUST-REC.',
        '           05  CUST-ID      PIC 9(6).',
        '           05  NAME-GRP.',
        '               10  SURNAME  PIC X(10).',
        '           05  FILLER       PIC XX.',
        '           05  BALANCE      PIC S9(5)V99.',
        '           05  FLAG         PIC X.',
        '               88  IS-OPEN  VALUE "Y".',
      ].join('\n'),
      'c.cpy',
    );
    expect(layout.columns).toEqual([
      { name: 'CUST-ID', start: 1, length: 6 },
      { name: 'SURNAME', start: 7, length: 10 },
      { name: 'BALANCE', start: 19, length: 7 },
      { name: 'FLAG', start: 26, length: 1 },
    ]);
    expect(layout.decimals).toEqual({ BALANCE: 2 });
    expect(layout.length).toBe(26);
  });

  it('reads a name,start,length CSV, and refuses a binary field naming the line', () => {
    expect(parseLayout('name,start,length\nnr,1,4\nnaam,5,20\n', 'l.csv').columns).toEqual([
      { name: 'nr', start: 1, length: 4 },
      { name: 'naam', start: 5, length: 20 },
    ]);
    expect(() => parseLayout('       01 R.\n           05 AMT PIC S9(7) COMP-3.\n', 'p.cpy')).toThrow(
      'p.cpy:2: AMT: a binary field (COMP) cannot be read as text; export it as display digits',
    );
  });
});

describe('no invented defaults', () => {
  it('writes a default country for empty cells only from evidence, as a visible choice with a TODO', () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({
      id: String(i + 1),
      Surname: 'Smith',
      Street: 'High St 1',
      Postcode: 'SW1 1AA',
      Town: 'London',
      Country: i === 0 ? '' : i === 1 ? 'Ireland' : 'UK',
    }));
    const m = guessMapping('c', profileOf(rows));
    const country = m.fields.find((f) => f.name === 'countryCode')!;
    expect(country.value).toEqual({ column: 'Country', transforms: ['trim', { default: 'GB' }, 'country'] });
    expect(country.why).toContain(
      'an empty cell (1 row) is taken as GB: 97% of the filled Country values — remove the default if that is wrong',
    );
    expect(m.todos).toContain(
      'countryCode: 1 row with an empty Country; init wrote { default: GB } (97% of the filled Country values): confirm it',
    );
  });

  it('without a country column and without Dutch postcodes, writes no country: the address country is a TODO', () => {
    const m = guessMapping(
      'c',
      profileOf([
        { id: '1', Surname: 'Smith', Street: 'High St 1', Postcode: 'SW1 1AA', Town: 'London' },
        { id: '2', Surname: 'Jones', Street: 'Low St 2', Postcode: 'M1 2BB', Town: 'Leeds' },
      ]),
    );
    expect(JSON.stringify(m.fields.find((f) => f.name === 'addresses')!.value)).not.toContain('countryCode');
    expect(m.todos).toContain(
      'addresses[0].countryCode (required in an address): no country column and no country init could infer; add { value: <ISO code> }',
    );
  });
});
