import { describe, expect, it } from 'vitest';
import { hashValue, maskValue, Redactor } from '../../src/privacy/index.js';

describe('masking a value', () => {
  it('keeps the first letter of each word and at most three stars', () => {
    expect(maskValue('Johannes van den Boer')).toBe('J*** v** d** B***');
    // decomposed text (NFD) masks by grapheme cluster: a mark stays with its letter, never beside a star (issue 42)
    expect(maskValue('E\u0301lodie Zoe\u0308')).toBe('E\u0301*** Z**');
    expect(maskValue('Zoe\u0308')).toBe(maskValue('Zoë').normalize('NFD'));
    expect(maskValue('Brontë'.normalize('NFD'))).not.toMatch(/\p{M}/u);
    expect(maskValue('J.')).toBe('J.');
  });
  it('keeps only the century of a date, in whichever order its parts come', () => {
    expect(maskValue('31-02-1980')).toBe('**-**-19**');
    expect(maskValue('1980-02-31')).toBe('19**-**-**');
    expect(maskValue('1/2/1975')).toBe('*/*/19**');
  });
  it('keeps the shape of an e-mail address and its top-level domain', () => {
    expect(maskValue('sofie.smits29@planet.nl')).toBe('s***.s***@p***.nl');
  });
  it('hides a financial value entirely', () => {
    expect(maskValue('14.868,55', 'financial')).toBe('*****');
  });
  it('hashes with a key: equal values and keys give equal tokens, another key another token', () => {
    const a = hashValue('Boer', 'k1');
    expect(a).toMatch(/^#[0-9a-f]{12}$/);
    expect(hashValue('Boer', 'k1')).toBe(a);
    expect(hashValue('Boer', 'k2')).not.toBe(a);
  });
});

describe('the redactor', () => {
  const classOf = (f: string) =>
    f === 'income.frequency' ? ('none' as const) : f === 'income.amount' ? ('financial' as const) : undefined;
  it('masks the quoted value in a message about a personal field, and leaves the rest of the message', () => {
    const r = new Redactor({ mode: 'masked', classOf });
    expect(
      r.message(
        'dateOfBirth: not a valid date, expected dd-mm-yyyy, got `31-02-1980` in column geboortedatum',
        'dateOfBirth',
        '31-02-1980',
      ),
    ).toBe('dateOfBirth: not a valid date, expected dd-mm-yyyy, got `**-**-19**` in column geboortedatum');
  });
  it('leaves values of fields the contract classes as not personal', () => {
    const r = new Redactor({ mode: 'masked', classOf });
    expect(r.message('income.frequency: unknown code, got `XYZ`', 'income.frequency', 'XYZ')).toBe(
      'income.frequency: unknown code, got `XYZ`',
    );
    expect(r.value('income.amount', '3000')).toBe('*****');
  });
  it('shows legacy keys of duplicates and relation targets unless the key is personal', () => {
    const plain = new Redactor({ mode: 'masked' });
    expect(plain.message('klantnr: duplicate legacy key crm-klant 100081', 'klantnr', '100081', 'DUPLICATE_LEGACY_KEY')).toContain(
      '100081',
    );
    const bsn = new Redactor({ mode: 'masked', keyIsPersonal: true });
    expect(bsn.message('bsn: duplicate legacy key p 123456782', 'bsn', '123456782', 'DUPLICATE_LEGACY_KEY')).not.toContain('123456782');
  });
  it('reveals everything in revealed mode and says so', () => {
    const r = new Redactor({ mode: 'revealed' });
    expect(r.value('surname', 'Boer')).toBe('Boer');
    expect(r.describe()).toMatch(/^Values revealed/);
  });
  it('masks a legacy row but its key column', () => {
    const r = new Redactor({ mode: 'masked' });
    expect(r.row({ klantnr: '100001', achternaam: 'Leeuwen', land: '' }, () => 'direct', 'klantnr')).toEqual({
      klantnr: '100001',
      achternaam: 'L***',
      land: '',
    });
  });
});

describe('the class of a legacy column', () => {
  it('is the most careful class of the staged fields the mapping reads it into', async () => {
    const { columnClassifier } = await import('../../src/privacy/index.js');
    const classOf = columnClassifier({
      key: { column: 'klantnr', scope: 'k', transforms: [] },
      record: {
        surname: { column: 'achternaam', transforms: [], required: false },
        income: {
          object: {
            frequency: { column: 'freq', transforms: [], required: false },
            amount: { column: 'bedrag', transforms: [], required: false },
          },
        },
        addresses: { list: [{ object: { postalCode: { column: 'postcode', transforms: [], required: false } } }] },
      },
    } as never);
    expect(['achternaam', 'freq', 'bedrag', 'postcode', 'unread'].map(classOf)).toEqual(['direct', 'none', 'financial', 'quasi', 'direct']);
  });
});

describe('a changed value, masked (plan --ledger)', () => {
  const masked = new Redactor({ mode: 'masked' });
  it('says where two values differ when their masks look the same, without showing a letter', () => {
    expect(masked.change('surname', 'Jansen', 'Jensen')).toEqual({ before: 'J***', after: 'J*** (differs from character 2)' });
    expect(masked.change('surname', 'Jansen', 'Janssen')).toEqual({ before: 'J***', after: 'J*** (7 characters, was 6)' });
    expect(masked.change('dateOfBirth', '1980-01-02', '1980-02-01')).toEqual({
      before: '19**-**-**',
      after: '19**-**-** (differs from character 7)',
    });
  });
  it('adds nothing when the masks already differ, or in the clear', () => {
    expect(masked.change('surname', 'Jansen', 'Pietersen')).toEqual({ before: 'J***', after: 'P***' });
    expect(new Redactor({ mode: 'revealed' }).change('surname', 'Jansen', 'Jensen')).toEqual({ before: 'Jansen', after: 'Jensen' });
  });
});
