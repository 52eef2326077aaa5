/**
 * Same data in another form is the same data (issue 42): the one comparison of values
 * (src/contract/canonical-form.ts), the ISO 8601 reader's ordinal and week dates, and the seeded
 * platform-variation generator on its DEVELOPMENT seeds (bench/platform-forms.ts; the CHECK
 * seeds' figure is `npm run bench -- platform-forms`).
 */
import { describe, expect, it } from 'vitest';
import { canonicalIds, compareValues, idKey, readCalendarDate, readNumber, sameId, toSentForm } from '../../src/contract/canonical-form.js';
import { readIsoDate, writeIsoDate } from '../../src/contract/iso8601.js';
import { DEVELOPMENT_SEEDS, judge, variations } from '../../bench/platform-forms.js';

const ID = '1b4e28ba-2fa1-51d2-883f-0016d3cca427';

describe('identifiers', () => {
  it('reads a UUID in any case as the same id, and leaves other ids as they are', () => {
    expect(idKey(ID.toUpperCase())).toBe(ID);
    expect(sameId(ID, '1B4E28BA-2fa1-51D2-883f-0016D3CCA427')).toBe(true);
    expect(sameId(ID, ID.replace('7', '8'))).toBe(false);
    expect(idKey('CRM-Key-7')).toBe('CRM-Key-7');
    expect(sameId('abc', 'ABC')).toBe(false);
    expect(canonicalIds({ referenceId: ID.toUpperCase(), relations: [{ to: ID.toUpperCase(), type: 'isChildOf' }], n: 1 })).toEqual({
      referenceId: ID,
      relations: [{ to: ID, type: 'isChildOf' }],
      n: 1,
    });
    const lower = { referenceId: ID };
    expect(canonicalIds(lower)).toBe(lower); // nothing to change: not copied
  });
});

describe('dates in every ISO 8601 form', () => {
  it.each([
    ['1990-05-05', '1990-05-05'],
    ['19900505', '1990-05-05'],
    ['1990-125', '1990-05-05'],
    ['1990125', '1990-05-05'],
    ['1990-W18-6', '1990-05-05'],
    ['1990W186', '1990-05-05'],
    ['2026-W53-7', '2027-01-03'],
    ['2024-366', '2024-12-31'],
  ])('reads %s as %s', (text, date) => expect(readIsoDate(text)).toBe(date));

  it.each(['1990-02-30', '2025-366', '2027-W53-1', '1990-W18-8', '1990-5-5', '199005'])('refuses %s', (text) =>
    expect(readIsoDate(text)).toBeUndefined(),
  );

  it('writes every day of two centuries in each form and reads it back as that day', () => {
    let wrong = 0;
    for (let t = Date.UTC(1900, 0, 1); t < Date.UTC(2100, 0, 1); t += 86_400_000) {
      const d = new Date(t).toISOString().slice(0, 10);
      for (const form of ['extended', 'basic', 'ordinal', 'week'] as const)
        for (const basic of [false, true]) if (readIsoDate(writeIsoDate(d, form, basic)) !== d) wrong++;
    }
    expect(wrong).toBe(0);
  });

  it('reads a date-time at midnight UTC as its day, and no other time', () => {
    expect(readCalendarDate('1990-05-05T00:00:00Z')).toBe('1990-05-05');
    expect(readCalendarDate('19900505T000000,000+00:00')).toBe('1990-05-05');
    expect(readCalendarDate('1990-05-05T00:00:00+01:00')).toBeUndefined();
    expect(readCalendarDate('1990-05-05T00:00:01Z')).toBeUndefined();
  });
});

describe('compareValues', () => {
  it.each([
    ['an upper-case UUID', ID, ID.toUpperCase(), 'to'],
    ['NFD text', 'Zoë Brontë', 'Zoë Brontë'.normalize('NFD'), 'surname'],
    ['a basic date', '1990-05-05', '19900505', 'dateOfBirth'],
    ['an ordinal date', '1990-05-05', '1990-125', 'dateOfBirth'],
    ['a week date', '1990-05-05', '1990-W18-6', 'dateOfBirth'],
    ['an amount as a string', 2500, '2500.00', 'amount'],
    ['an amount in exponent form', 2500, '2.5e3', 'amount'],
    ['an instant in another form', '2026-11-29T04:10:54.950Z', '2026-333T05:10:54.95+01:00', 'createdOn'],
    ['a code in another case', 'Monthly', 'MONTHLY', 'frequency'],
  ])('finds %s the same data in another form', (_what, sent, held, key) => {
    expect(compareValues(sent, held, key)).toBe('other-form');
  });

  it.each([
    ['another day', '1990-05-05', '19900506', 'dateOfBirth'],
    ['a number read into a date-looking text', '19900505', '1990-05-05', 'cocNumber'],
    ['a lost leading zero', '03001', 3001, 'postalCode'],
    ['a number with a leading zero', 3001, '03001', 'amount'],
    ['another cent', 2500, '2500.01', 'amount'],
    ['a lost accent', 'Zoë', 'Zoe', 'firstName'],
    ['a compatibility form', 'ﬁnch', 'finch', 'surname'],
    ['a case change of a name', 'Jansen', 'JANSEN', 'surname'],
    ['another id', ID, ID.replace('1b4e', '1b4f').toUpperCase(), 'to'],
    ['another instant', '2026-11-29T04:10:54.950Z', '2026-333T04:10:54.951Z', 'createdOn'],
  ])('finds %s different', (_what, sent, held, key) => {
    expect(compareValues(sent, held, key)).toBe('differs');
  });

  it('compares lists as multisets and objects by key, exact when nothing changed', () => {
    const phones = [
      { type: 'mobile', number: '+31612345678' },
      { type: 'home', number: '+31201234567' },
    ];
    expect(compareValues(phones, [phones[1], phones[0]], 'telephoneNumbers')).toBe('same');
    expect(compareValues(phones, [{ number: '+31201234567', type: 'HOME' }, phones[0]], 'telephoneNumbers')).toBe('other-form');
    expect(compareValues(phones, [phones[0]], 'telephoneNumbers')).toBe('differs');
    expect(compareValues({ a: 1 }, { a: 1, b: 2 })).toBe('differs');
  });

  it('reads numbers only in the JSON grammar', () => {
    expect([readNumber('2500.00'), readNumber(' 7 '), readNumber('-0.5'), readNumber('1e3')]).toEqual([2500, 7, -0.5, 1000]);
    expect([readNumber('03001'), readNumber('0x10'), readNumber('+5'), readNumber('1,5'), readNumber('')]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('writes a held record in the forms a run sends (for the proof by hash)', () => {
    const held = {
      referenceId: ID.toUpperCase(),
      firstName: 'Zoe\u0308',
      dateOfBirth: '1990-W18-6',
      income: { amount: '2500.00' },
      postalCode: '03001',
    };
    expect(toSentForm(held, new Set(['amount']), new Set(['dateOfBirth']))).toEqual({
      referenceId: ID,
      firstName: 'Zoë',
      dateOfBirth: '1990-05-05',
      income: { amount: 2500 },
      postalCode: '03001',
    });
  });
});

describe('the platform-variation generator, development seeds', () => {
  it(`finds every variation of seeds ${DEVELOPMENT_SEEDS.from}–${DEVELOPMENT_SEEDS.from + DEVELOPMENT_SEEDS.count - 1} identical and every real change different`, () => {
    const misses: string[] = [];
    let proven = 0;
    for (const v of variations(DEVELOPMENT_SEEDS)) {
      const j = judge(v);
      if (!j.identical) misses.push(`seed ${j.seed}: ${j.differing.join(', ')} called different`);
      if (!j.caught) misses.push(`seed ${j.seed}: the changed ${j.changedField} was not found`);
      proven += Number(j.proven);
    }
    expect(misses).toEqual([]);
    // some are settled by the proof alone (the rest by the comparison): the proof reads other forms too
    expect(proven).toBeGreaterThan(0);
  });
});
