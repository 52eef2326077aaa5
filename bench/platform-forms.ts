/**
 * A seeded generator of platform variations (issue 42): the named forms (upper-case UUIDs, NFD
 * text, `19900505`, `"2500.00"`, ordinal timestamps) are examples of a class, so each seed makes a
 * staged person and the record a platform that chose its own forms streams back, every value
 * written in one of the forms ISO 8601, RFC 9562, Unicode and JSON allow for it: ids in any
 * case, text in NFC or NFD, dates in the extended, basic, ordinal or week form or as midnight UTC
 * in any date-time form, amounts as numbers or numeric strings of any spelling, codes in any
 * case, lists and keys in any order. Beside each variation, a control: the same variation with
 * one value really changed (another day, another cent, a letter lost, another id), which must be
 * found different.
 *
 * DEVELOPMENT seeds (tuned on, and run by test/unit/canonical-form.test.ts) and CHECK seeds (never
 * looked at while building; `npm run bench -- platform-forms` prints their figure) are apart.
 */
import { createRandom } from '../src/service/faults/random.js';
import { writeIsoDate } from '../src/contract/iso8601.js';
import { checkStagedCounterparty, type StagedCounterparty } from '../src/contract/migration.js';
import { encodeRecord } from '../src/pipeline/batcher/index.js';
import { SEND_FORMAT } from '../src/pipeline/runner/send.js';
import { checkFields, HashProof } from '../src/reconcile/verify/staged-to-streamed.js';

/** Seeds tuned on. */
export const DEVELOPMENT_SEEDS = { from: 1, count: 400 } as const;
/** Seeds the figure is reported on; change `from` whenever their failures were looked at. */
export const CHECK_SEEDS = { from: 7_300_001, count: 2_000 } as const;

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const int = (rng: Rng, from: number, to: number) => from + Math.floor(rng() * (to - from + 1));
const hex = (rng: Rng, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(rng, 0, 15)]).join('');
const uuid = (rng: Rng) => `${hex(rng, 8)}-${hex(rng, 4)}-5${hex(rng, 3)}-${pick(rng, ['8', '9', 'a', 'b'])}${hex(rng, 3)}-${hex(rng, 12)}`;

/** Names with letters that have a decomposed form (and some without). */
const FIRST = ['Zoë', 'Inès', 'Łukasz', 'José', 'Ångström', 'Émilie', 'Jan', 'Søren', 'Dvořák', 'Noël', 'Ça', 'Ögün', 'Mário'];
const SURNAMES = ['Müller', 'Brontë', 'Côté', 'Jansen', 'Nuñez', 'Šimůnek', 'Đorđević', 'Ørsted', 'Vermeulen', 'Grünewald'];
const FREQUENCIES = ['Monthly', 'Yearly', 'Weekly', 'FourWeekly'];
const PHONE_TYPES = ['mobile', 'home', 'work'];

/** A staged person as a run sends it (the forms a run writes: lower-case ids, NFC, extended dates, numbers). */
export function stagedPerson(rng: Rng): StagedCounterparty {
  const y = int(rng, 1930, 2005);
  const date = new Date(Date.UTC(y, 0, 1) + int(rng, 0, 364) * 86_400_000).toISOString().slice(0, 10);
  const record: Record<string, unknown> = {
    referenceId: uuid(rng),
    type: 'person',
    initials: 'J.',
    firstName: pick(rng, FIRST).normalize('NFC'),
    surname: pick(rng, SURNAMES).normalize('NFC'),
    dateOfBirth: date,
    income: { amount: int(rng, 0, 900_000) / 100, currency: 'EUR', frequency: pick(rng, FREQUENCIES) },
    telephoneNumbers: Array.from({ length: int(rng, 0, 3) }, () => ({
      type: pick(rng, PHONE_TYPES),
      number: `+316${int(rng, 10_000_000, 99_999_999)}`,
    })),
    relations: Array.from({ length: int(rng, 0, 2) }, () => ({ to: uuid(rng), type: pick(rng, ['isChildOf', 'isParentOf']) })),
    addresses: [
      {
        referenceId: uuid(rng),
        type: 'main',
        addressLine1: `${pick(rng, ['Rue de l’Église', 'Hauptstraße', 'Kerkstraat', 'Ulica Żółta'])}`.normalize('NFC'),
        postalCode: pick(rng, ['1011 AB', '75001', '03001', '00-950']),
        locality: pick(rng, ['Genève', 'Köln', 'Amsterdam', 'Łódź']).normalize('NFC'),
        countryCode: pick(rng, ['NL', 'DE', 'FR', 'PL']),
      },
    ],
  };
  return record as unknown as StagedCounterparty;
}

const CASES = [(s: string) => s, (s: string) => s.toUpperCase(), (s: string) => s.toLowerCase()];

/** A UUID in any case, mixed included (RFC 9562 §4). */
const anyCaseId = (rng: Rng, id: string) =>
  rng() < 0.3 ? [...id].map((c) => (rng() < 0.5 ? c.toUpperCase() : c)).join('') : pick(rng, CASES)(id);

/** A calendar date in any ISO 8601 form, or as midnight UTC in any date-time form. */
function anyDateForm(rng: Rng, date: string): string {
  const form = pick(rng, ['extended', 'basic', 'ordinal', 'week', 'midnight'] as const);
  if (form !== 'midnight') return writeIsoDate(date, form, form !== 'extended' && form !== 'basic' && rng() < 0.5);
  const day = writeIsoDate(date, pick(rng, ['extended', 'basic'] as const));
  return `${day}${pick(rng, ['T00:00:00Z', 'T00:00Z', 'T000000Z', 'T00:00:00.000Z', 'T00:00:00+00:00', 'T00:00:00,0Z'])}`;
}

/** A number as a JSON number or a numeric string of any spelling JSON allows. */
function anyNumberForm(rng: Rng, n: number): unknown {
  const form = int(rng, 0, 4);
  if (form === 0) return n;
  if (form === 1) return n.toFixed(2);
  if (form === 2) return String(n);
  if (form === 3) return n.toExponential();
  return n.toFixed(int(rng, 3, 5));
}

/** Text in NFC or NFD. */
const anyNormalisation = (rng: Rng, s: string) => s.normalize(rng() < 0.5 ? 'NFD' : 'NFC');

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = int(rng, 0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** An object with its keys in another order. */
const reordered = (rng: Rng, o: Record<string, unknown>) => Object.fromEntries(shuffled(rng, Object.entries(o)));

/** The record as a platform that chose its own forms streams it back: the same data. */
export function platformVariation(rng: Rng, sent: StagedCounterparty): Record<string, unknown> {
  const s = sent as unknown as Record<string, unknown>;
  const income = s.income as { amount: number; currency: string; frequency: string };
  const held: Record<string, unknown> = {
    sequenceNumber: int(rng, 1, 1e6),
    type: 'StreamingPersonCounterparty',
    referenceId: anyCaseId(rng, String(s.referenceId)),
    lifecycleStatus: 'counterparty',
    associatedParties: [],
    initials: s.initials,
    firstName: anyNormalisation(rng, String(s.firstName)),
    surname: anyNormalisation(rng, String(s.surname)),
    dateOfBirth: anyDateForm(rng, String(s.dateOfBirth)),
    income: reordered(rng, {
      amount: anyNumberForm(rng, income.amount),
      currency: income.currency,
      frequency: pick(rng, CASES)(income.frequency),
    }),
    telephoneNumbers: shuffled(
      rng,
      (s.telephoneNumbers as Array<{ type: string; number: string }>).map((t) =>
        reordered(rng, { type: pick(rng, CASES)(t.type), number: t.number }),
      ),
    ),
    relations: shuffled(
      rng,
      (s.relations as Array<{ to: string; type: string }>).map((r) => ({ to: anyCaseId(rng, r.to), type: r.type })),
    ),
    addresses: (s.addresses as Array<Record<string, string>>).map((a) =>
      reordered(rng, {
        ...a,
        referenceId: anyCaseId(rng, a.referenceId!),
        addressLine1: anyNormalisation(rng, a.addressLine1!),
        locality: anyNormalisation(rng, a.locality!),
      }),
    ),
  };
  return reordered(rng, held);
}

/** The variation with one value really changed: what must be found different, whatever its form. */
export function changedVariation(
  rng: Rng,
  sent: StagedCounterparty,
  held: Record<string, unknown>,
): { field: string; held: Record<string, unknown> } {
  const s = sent as unknown as Record<string, unknown>;
  const changes: Array<[string, () => unknown]> = [
    [
      'dateOfBirth',
      () =>
        anyDateForm(rng, new Date(Date.parse(String(s.dateOfBirth)) + pick(rng, [-1, 1, 7, 365]) * 86_400_000).toISOString().slice(0, 10)),
    ],
    ['income', () => ({ ...(held.income as object), amount: anyNumberForm(rng, (s.income as { amount: number }).amount + 0.01) })],
    ['surname', () => anyNormalisation(rng, String(s.surname).slice(0, -1))],
    // a letter's accent lost: in NFD, the base letter without its mark
    [
      'firstName',
      () => String(s.firstName).normalize('NFD').replace(/\p{M}/gu, '') + (/\p{M}/u.test(String(s.firstName).normalize('NFD')) ? '' : 'x'),
    ],
    ['relations', () => [...(held.relations as unknown[]), { to: uuid(rng), type: 'isChildOf' }]],
    // a postcode's leading zero lost, else its last character
    [
      'addresses',
      () =>
        (held.addresses as Array<Record<string, unknown>>).map((a) => {
          const code = String(a.postalCode);
          return { ...a, postalCode: code.startsWith('0') ? code.slice(1) : code.slice(0, -1) };
        }),
    ],
  ];
  const [field, make] = pick(rng, changes);
  return { field, held: { ...held, [field]: make() } };
}

/** Each seed's record, its variation and its control. */
export function* variations(seeds: { from: number; count: number }): Generator<{
  seed: number;
  sent: StagedCounterparty;
  held: Record<string, unknown>;
  changed: { field: string; held: Record<string, unknown> };
}> {
  for (let seed = seeds.from; seed < seeds.from + seeds.count; seed++) {
    const random = createRandom(seed);
    const rng = () => random.next();
    const sent = stagedPerson(rng);
    const held = platformVariation(rng, sent);
    yield { seed, sent, held, changed: changedVariation(rng, sent, held) };
  }
}

/** How the comparison judged one seed (checkFields and the proof by hash, as `verify` runs them). */
export interface Judged {
  seed: number;
  /** The variation compared field by field: no field differs. */
  identical: boolean;
  /** The variation proven by hash (the record written in the forms a run sends hashes to the frame sent). */
  proven: boolean;
  /** The control (one value really changed) found different. */
  caught: boolean;
  /** Fields of the variation that differ (should be none), and the control's changed field. */
  differing: string[];
  changedField: string;
}

/** Judges one seed's variation and control the way `verify` does. */
export function judge(v: ReturnType<typeof variations> extends Generator<infer T> ? T : never): Judged {
  const checked = checkStagedCounterparty(v.sent);
  if (!checked.ok) throw new Error(`seed ${v.seed}: the generated record is not a staged one: ${JSON.stringify(checked.errors)}`);
  const hash = encodeRecord(checked.record, SEND_FORMAT).contentHash;
  const differing = checkFields(checked.record, v.held)
    .filter((c) => c.verdict === 'differs')
    .map((c) => c.field);
  const caught = checkFields(checked.record, v.changed.held).some((c) => c.verdict === 'differs' && c.field === v.changed.field);
  return {
    seed: v.seed,
    identical: differing.length === 0,
    proven: new HashProof().prove(v.held, hash) !== undefined,
    caught,
    differing,
    changedField: v.changed.field,
  };
}
