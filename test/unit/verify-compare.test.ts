/**
 * The rules `verify` compares by: the staged shape against the streamed one
 * (src/reconcile/verify/staged-to-streamed.ts), the accept rules (accept.ts), and the service's
 * data alterations that tests plant (src/service/faults/alterations.ts).
 */
import { describe, expect, it } from 'vitest';
import type { StagedCounterparty } from '../../src/contract/migration.js';
import { acceptedBy, parseAcceptRules } from '../../src/reconcile/verify/accept.js';
import { addedFields, checkFields, HashProof } from '../../src/reconcile/verify/staged-to-streamed.js';
import { checkStagedCounterparty } from '../../src/contract/migration.js';
import { encodeRecord } from '../../src/pipeline/batcher/index.js';
import { renderCounterparty } from '../../src/service/counterparties/render.js';
import { Alterations, parseAlterations } from '../../src/service/faults/alterations.js';

const sent = {
  referenceId: '6f1c2d9e-0000-5000-8000-000000000001',
  type: 'person',
  isActive: true,
  initials: 'J.P.',
  surname: 'Vermeulen-Achterbergh',
  dateOfBirth: '1980-01-02',
  telephoneNumbers: [
    { type: 'mobile', number: '+31612345678' },
    { type: 'home', number: '+31201234567' },
  ],
  income: { amount: 1000, currency: 'EUR', frequency: 'Monthly' },
} as unknown as StagedCounterparty;

const streamed = (over: Record<string, unknown> = {}) => ({
  sequenceNumber: 7,
  type: 'StreamingPersonCounterparty',
  referenceId: sent.referenceId,
  associatedParties: [],
  countryCode: 'NL',
  preferredCommunicationLanguage: 'nl-NL',
  lifecycleStatus: 'counterparty',
  relations: [],
  initials: 'J.P.',
  surname: 'Vermeulen-Achterbergh',
  dateOfBirth: '1980-01-02',
  telephoneNumbers: [
    { type: 'mobile', number: '+31612345678' },
    { type: 'home', number: '+31201234567' },
  ],
  income: { amount: 1000, currency: 'EUR', frequency: 'Monthly' },
  ...over,
});

const verdicts = (held: Record<string, unknown>) => Object.fromEntries(checkFields(sent, held).map((c) => [c.field, c.verdict]));

describe('staged against streamed', () => {
  it('finds the same record the same, field by field, and a field the stream does not show not shown', () => {
    expect(verdicts(streamed())).toEqual({
      type: 'same',
      isActive: 'notShown',
      initials: 'same',
      surname: 'same',
      dateOfBirth: 'same',
      telephoneNumbers: 'same',
      income: 'same',
    });
  });

  it('reads a stream without countryCode (the service’s own choice since issue 39) as the same when none was sent, and as a difference when one was', () => {
    const { countryCode: _nl, ...held } = streamed();
    expect(verdicts(held)).toEqual(verdicts(streamed()));
    const withCountry = { ...sent, countryCode: 'DE' } as StagedCounterparty;
    const countryOf = (h: Record<string, unknown>) => checkFields(withCountry, h).find((c) => c.field === 'countryCode');
    expect(countryOf(held)).toEqual({ field: 'countryCode', verdict: 'differs', sent: 'DE', held: undefined });
    expect(countryOf(streamed({ countryCode: 'DE' }))).toEqual({ field: 'countryCode', verdict: 'same', sent: 'DE', held: 'DE' });
  });

  it('allows what the specification allows: code case, list order, key order, a date at midnight UTC', () => {
    const held = streamed({
      telephoneNumbers: [
        { number: '+31201234567', type: 'HOME' },
        { type: 'Mobile', number: '+31612345678' },
      ],
      income: { frequency: 'monthly', currency: 'EUR', amount: 1000 },
      dateOfBirth: '1980-01-02T00:00:00Z',
    });
    expect(Object.values(verdicts(held)).filter((v) => v === 'differs')).toEqual([]);
  });

  it('calls a cut value, a dropped item, a moved date, a lost accent, a changed number, a wrong type a difference', () => {
    expect(
      verdicts(
        streamed({
          type: 'StreamingOrganisationCounterparty',
          surname: 'Vermeulen-Achterber',
          dateOfBirth: '1980-01-01',
          telephoneNumbers: [{ type: 'mobile', number: '+31612345678' }],
          income: { amount: 1000.01, currency: 'EUR', frequency: 'Monthly' },
          initials: undefined,
        }),
      ),
    ).toEqual({
      type: 'differs',
      isActive: 'notShown',
      initials: 'differs',
      surname: 'differs',
      dateOfBirth: 'differs',
      telephoneNumbers: 'differs',
      income: 'differs',
    });
  });
});

describe('the proof by hash', () => {
  /** What a run sends of a record: the staging schema's copy, framed; and how the embedded service streams it. */
  const sentAndStreamed = (record: Record<string, unknown>) => {
    const checked = checkStagedCounterparty(record);
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    return {
      hash: encodeRecord(checked.record, 'json-seq').contentHash,
      live: renderCounterparty(7, JSON.stringify(checked.record), true),
    };
  };

  it('proves a record held as sent, the fields the platform filled in and an isActive it does not show included', () => {
    const { hash, live } = sentAndStreamed(sent as unknown as Record<string, unknown>);
    // The service shows associatedParties, relations, a country and a language the record did not carry, and no isActive.
    expect(live).toMatchObject({ associatedParties: [], relations: [], countryCode: 'NL', preferredCommunicationLanguage: 'nl-NL' });
    expect(live.isActive).toBeUndefined();
    const proof = new HashProof();
    // The country and language it filled in are proven not sent: added by the platform (issue 39).
    const added = ['countryCode', 'preferredCommunicationLanguage'];
    expect(proof.prove(live, hash)).toEqual({ notShown: ['isActive'], otherForm: [], added });
    // The next record of the same shape proves with the guess learned; one sent with isActive false and a country too.
    const other = sentAndStreamed({ ...sent, referenceId: '6f1c2d9e-0000-5000-8000-000000000002', isActive: false, countryCode: 'BE' });
    expect(proof.prove(other.live, other.hash)).toEqual({
      notShown: ['isActive'],
      otherForm: [],
      added: ['preferredCommunicationLanguage'],
    });
    // A platform that shows isActive: nothing left unshown.
    expect(new HashProof().prove({ ...live, isActive: true }, hash)).toEqual({ notShown: [], otherForm: [], added });
  });

  it('proves nothing of a record held otherwise than sent: a value cut, a code in other case, a list reordered, a field added, another record', () => {
    const { hash, live } = sentAndStreamed(sent as unknown as Record<string, unknown>);
    const proof = new HashProof();
    expect(proof.prove(live, hash)).toBeDefined();
    const phones = live.telephoneNumbers as unknown[];
    for (const held of [
      { ...live, surname: 'Vermeulen' },
      { ...live, income: { amount: 1000, currency: 'EUR', frequency: 'monthly' } },
      { ...live, telephoneNumbers: [phones[1], phones[0]] },
      { ...live, firstName: 'Jan' },
      { ...live, type: 'StreamingOrganisationCounterparty' },
      // Of another shape than the specification's (verify streams unchecked): a difference, not a stop.
      { ...live, surname: 42 },
      { ...live, telephoneNumbers: 'none' },
      { ...live, referenceId: '6f1c2d9e-0000-5000-8000-000000000009' },
    ])
      expect(proof.prove(held, hash), JSON.stringify(held)).toBeUndefined();
    // The field-by-field comparison decides those: the reordered list is allowed there, a field of another shape differs.
    expect(verdicts({ ...live, surname: 42, telephoneNumbers: 'none' })).toMatchObject({ surname: 'differs', telephoneNumbers: 'differs' });
    expect(checkFields(sent, { ...live, telephoneNumbers: [phones[1], phones[0]] }).every((c) => c.verdict !== 'differs')).toBe(true);
  });
});

describe('same data in another form (issue 42)', () => {
  const withForms = {
    ...sent,
    firstName: 'Zoë',
    relations: [{ to: '0a1b2c3d-0000-5000-8000-00000000000a', type: 'isChildOf' }],
  } as unknown as StagedCounterparty;
  /** What a platform that chose other forms streams of `withForms`. */
  const otherForms = () =>
    streamed({
      referenceId: sent.referenceId.toUpperCase(),
      firstName: 'Zoe\u0308',
      dateOfBirth: '19800102',
      income: { amount: '1000.00', currency: 'EUR', frequency: 'Monthly' },
      relations: [{ to: '0A1B2C3D-0000-5000-8000-00000000000A', type: 'isChildOf' }],
    });

  it('finds each such field the same in another form, and every other the same', () => {
    const v = Object.fromEntries(checkFields(withForms, otherForms()).map((c) => [c.field, c.verdict]));
    expect(v).toMatchObject({
      firstName: 'otherForm',
      dateOfBirth: 'otherForm',
      income: 'otherForm',
      relations: 'otherForm',
      surname: 'same',
    });
    // ordinal and week forms of the date alike
    for (const date of ['1980-002', '1980002', '1980-W01-3', '1980W013', '1980-01-02T00:00:00Z'])
      expect(checkFields(sent, streamed({ dateOfBirth: date })).find((c) => c.field === 'dateOfBirth')?.verdict, date).toBe('otherForm');
  });

  it('still finds a different value different in any form: another day, another amount, a lost leading zero, a compatibility form', () => {
    const verdictOf = (field: string, held: Record<string, unknown>, base = withForms) =>
      checkFields(base, streamed(held)).find((c) => c.field === field)?.verdict;
    expect(verdictOf('dateOfBirth', { dateOfBirth: '19800103' })).toBe('differs');
    expect(verdictOf('dateOfBirth', { dateOfBirth: '1980-W01-4' })).toBe('differs');
    expect(verdictOf('income', { income: { amount: '1000.01', currency: 'EUR', frequency: 'Monthly' } })).toBe('differs');
    expect(verdictOf('firstName', { firstName: 'Zoe' })).toBe('differs');
    const withPostcode = { ...sent, surname: '03001' } as unknown as StagedCounterparty;
    expect(verdictOf('surname', { surname: 3001 }, withPostcode)).toBe('differs');
    const ligature = { ...sent, surname: 'ﬁnch' } as unknown as StagedCounterparty;
    expect(verdictOf('surname', { surname: 'finch' }, ligature)).toBe('differs');
  });

  it('proves by hash a record held in other forms, naming the fields that came so', () => {
    const checked = checkStagedCounterparty(withForms);
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    const hash = encodeRecord(checked.record, 'json-seq').contentHash;
    const live = renderCounterparty(7, JSON.stringify(checked.record));
    const proof = new HashProof();
    expect(proof.prove(live, hash)).toEqual({ notShown: ['isActive'], otherForm: [], added: [] });
    const held = {
      ...live,
      referenceId: String(live.referenceId).toUpperCase(),
      firstName: 'Zoe\u0308',
      dateOfBirth: '1980-W01-3',
      income: { amount: '1000.00', currency: 'EUR', frequency: 'Monthly' },
    };
    expect(proof.prove(held, hash)).toEqual({
      notShown: ['isActive'],
      otherForm: ['referenceId', 'firstName', 'dateOfBirth', 'income'],
      added: [],
    });
    // another form of another value proves nothing
    expect(proof.prove({ ...held, dateOfBirth: '1980-W01-4' }, hash)).toBeUndefined();
  });

  it('names the values the platform holds that the record was not sent with: added, an empty list none', () => {
    expect(addedFields(sent, streamed())).toEqual(['countryCode', 'preferredCommunicationLanguage']);
    expect(addedFields({ ...sent, countryCode: 'PL' } as StagedCounterparty, streamed({ countryCode: 'PL' }))).toEqual([
      'preferredCommunicationLanguage',
    ]);
  });
});

describe('accept rules', () => {
  const rules = parseAcceptRules(['surname:truncate=8', 'firstName:strip-accents', 'salutation:case', 'emailAddress:any']);

  it('explain only the difference they name', () => {
    expect(acceptedBy(rules, 'surname', 'Vermeulen', 'Vermeule')?.text).toBe('surname:truncate=8');
    expect(acceptedBy(rules, 'surname', 'Vermeulen', 'Vermeul')).toBeUndefined();
    expect(acceptedBy(rules, 'surname', 'Jansen', 'Janse')).toBeUndefined();
    expect(acceptedBy(rules, 'firstName', 'Inès', 'Ines')?.text).toBe('firstName:strip-accents');
    expect(acceptedBy(rules, 'firstName', 'Inès', 'Ine')).toBeUndefined();
    expect(acceptedBy(rules, 'salutation', 'Mevr.', 'MEVR.')?.text).toBe('salutation:case');
    expect(acceptedBy(rules, 'emailAddress', 'a@b.nl', undefined)?.text).toBe('emailAddress:any');
    expect(acceptedBy(rules, 'dateOfBirth', '1980-01-02', '1980-01-01')).toBeUndefined();
  });

  it('refuses a rule it does not understand, naming it', () => {
    expect(() => parseAcceptRules(['surname:cut=30'])).toThrow(
      'accept rule 1 of --accept: expected <field>:truncate=<chars>, <field>:strip-accents, <field>:case or <field>:any, got `surname:cut=30`',
    );
  });
});

describe('data alterations of the embedded service', () => {
  it('alter a record only where the rule changes something, the same records for the same seed', () => {
    const a = new Alterations('surname:truncate=8;telephoneNumbers:drop-item;dateOfBirth:shift-date=-1', 1);
    const out = a.apply(sent) as unknown as Record<string, unknown>;
    expect(out.surname).toBe('Vermeule');
    expect(out.telephoneNumbers).toEqual([{ type: 'mobile', number: '+31612345678' }]);
    expect(out.dateOfBirth).toBe('1980-01-01');
    expect((sent as unknown as Record<string, unknown>).surname).toBe('Vermeulen-Achterbergh');
    expect(a.done.map((d) => d.field)).toEqual(['surname', 'telephoneNumbers', 'dateOfBirth']);
    const short = new Alterations('initials:truncate=8', 1);
    short.apply(sent);
    expect(short.count).toBe(0);

    const ids = Array.from({ length: 400 }, (_, i) => `00000000-0000-5000-8000-${String(i).padStart(12, '0')}`);
    const lost = (seed: number) => {
      const x = new Alterations('*:lose:p=0.1', seed);
      return ids.filter((id) => x.apply({ ...sent, referenceId: id }) === undefined);
    };
    expect(lost(3)).toEqual(lost(3));
    expect(lost(3)).not.toEqual(lost(4));
    expect(lost(3).length).toBeGreaterThan(20);
    expect(lost(3).length).toBeLessThan(70);
  });

  it('refuse a rule that does not parse, naming it', () => {
    expect(() => parseAlterations('surname:lose')).toThrow(
      'alteration 1 `surname:lose`: lose applies to a whole record: write *:lose; expected e.g. "surname:truncate=30:p=0.5" (docs/fault-injection.md)',
    );
    expect(() => parseAlterations('surname:truncate=x')).toThrow('truncate needs a whole number of characters (truncate=30), got "x"');
  });
});
