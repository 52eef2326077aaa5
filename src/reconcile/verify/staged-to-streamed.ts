/**
 * The one place where a staged counterparty (what a run sent) is set against a streamed one
 * (what the platform holds now): which staged fields the stream shows under which name, and
 * which differences in the way a value is written the specification allows, so they are not
 * differences of the data. docs/reconciliation.md, "Verifying what landed", lists the same rules.
 *
 * - `type`: staged `person` / `organisation`, streamed `StreamingPersonCounterparty` /
 *   `StreamingOrganisationCounterparty` (spec, "Streamed counterparty").
 * - The stream shows the common fields (associatedParties, countryCode,
 *   preferredCommunicationLanguage, telephoneNumbers, relations) and the person's or the
 *   organisation's own; a staged field beyond that list (addresses, externalReferences, ratings,
 *   isActive) is compared when the platform shows it anyway (the embedded service does) and
 *   otherwise counted "not shown by the platform's stream", never called identical.
 * - A staged field that was not sent is not compared: the platform may fill in its default
 *   (a country, a language, an empty list).
 * - Same data in another form is the same data (contract/canonical-form.ts, the one comparison
 *   of values): UUIDs in any case, text in NFC or NFD, dates in every ISO 8601 form, amounts as
 *   numbers or numeric strings, codes of the type fields in any case; list items in any order
 *   (the specification promises none); object keys in any order. Such a field is `otherForm`:
 *   the same, and counted as come in another form. Nothing else: a value cut, an accent lost, a
 *   list item dropped, a date moved are differences.
 * - A value the platform holds that the record was not sent with (a default country or language)
 *   is "added by the platform" (`addedFields`), never part of what was proven identical.
 *
 * Before any of that, the proof (`HashProof`): the live record written back the way staging takes
 * it, framed as a run frames it, hashes to the content hash the ledger kept of the frame sent. Then
 * the platform holds every field exactly as sent, and no field needs comparing.
 */
import { compareValues, toSentForm } from '../../contract/canonical-form.js';
import { STREAMED_ORGANISATION_FIELDS, STREAMED_PERSON_FIELDS } from '../../contract/counterparty.js';
import { COUNTER_FIELD_ALIASES } from '../../contract/shared.js';
import { checkStagedCounterparty, type StagedCounterparty } from '../../contract/migration.js';
import { frameHash } from '../../pipeline/batcher/index.js';
import { encodeFrame } from '../../codec/index.js';
import { SEND_FORMAT } from '../../pipeline/runner/send.js';

/** The streamed type of each staged type. */
export const STREAMED_TYPE: Readonly<Record<string, string>> = {
  person: 'StreamingPersonCounterparty',
  organisation: 'StreamingOrganisationCounterparty',
};

/** The staged type of each streamed type (STREAMED_TYPE read backwards). */
const STAGED_TYPE: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(STREAMED_TYPE).map(([s, t]) => [t, s]));

/** Staged fields the specification's stream shows, per staged type (besides referenceId, the match key). */
const COMMON = ['type', 'associatedParties', 'countryCode', 'preferredCommunicationLanguage', 'telephoneNumbers', 'relations'];
const SHOWN: Readonly<Record<string, ReadonlySet<string>>> = {
  person: new Set([...COMMON, ...STREAMED_PERSON_FIELDS]),
  organisation: new Set([...COMMON, ...STREAMED_ORGANISATION_FIELDS]),
};

/**
 * The staged fields that are numbers, and those that are calendar dates (contract/migration.ts:
 * `income.amount`, `dateOfBirth`): where the proof reads a platform's numeric string as a number
 * and its date in another ISO 8601 form as the extended one (toSentForm).
 */
const NUMBER_KEYS: ReadonlySet<string> = new Set(['amount']);
const DATE_KEYS: ReadonlySet<string> = new Set(['dateOfBirth']);

/** How one staged field stands against the platform. */
export type FieldVerdict = 'same' | 'otherForm' | 'differs' | 'notShown';

/** One field the staged record carried, set against the streamed one. */
export interface FieldCheck {
  field: string;
  verdict: FieldVerdict;
  sent: unknown;
  /** What the platform holds (undefined: nothing). */
  held: unknown;
}

/**
 * Every field the staged record carried (but referenceId), set against the streamed record.
 * @example checkFields({ type: 'person', surname: 'Jansen', … }, { type: 'StreamingPersonCounterparty', surname: 'Jansen', … })
 *   // [{ field: 'type', verdict: 'same', … }, { field: 'surname', verdict: 'same', … }, …]
 */
export function checkFields(sent: StagedCounterparty, held: Record<string, unknown>): FieldCheck[] {
  const out: FieldCheck[] = [];
  const staged = sent as unknown as Record<string, unknown>;
  const shown = SHOWN[sent.type] ?? SHOWN.person!;
  for (const field of Object.keys(staged)) {
    if (field === 'referenceId') continue;
    const value = staged[field];
    if (value === undefined) continue;
    if (field === 'type') {
      const same = STREAMED_TYPE[sent.type] === held.type;
      out.push({ field, verdict: same ? 'same' : 'differs', sent: value, held: held.type });
      continue;
    }
    const h = held[field];
    if (h === undefined && !shown.has(field)) {
      out.push({ field, verdict: 'notShown', sent: value, held: undefined });
      continue;
    }
    const sameness = compareValues(value, h, field);
    out.push({ field, verdict: sameness === 'same' ? 'same' : sameness === 'other-form' ? 'otherForm' : 'differs', sent: value, held: h });
  }
  return out;
}

/** Members of a streamed record that are no value of the counterparty: its kind, id, counter and status. */
const BOOKKEEPING: ReadonlySet<string> = new Set(['referenceId', 'type', 'lifecycleStatus', ...COUNTER_FIELD_ALIASES]);

/**
 * Values the platform holds that the record was not sent with: the members of the streamed record
 * the staged one did not carry (an empty list is no value).
 * @example addedFields({ type: 'person', surname: 'Nowak', … }, { …, countryCode: 'NL', preferredCommunicationLanguage: 'nl-NL' }) // ['countryCode', 'preferredCommunicationLanguage']
 */
export function addedFields(sent: StagedCounterparty, held: Record<string, unknown>): string[] {
  const staged = sent as unknown as Record<string, unknown>;
  const out: string[] = [];
  for (const field in held) {
    const v = held[field];
    if (v === undefined || BOOKKEEPING.has(field) || staged[field] !== undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out.push(field);
  }
  return out;
}

/**
 * Fields the specification's stream shows for every record, so a platform fills them in when the
 * record sent did not carry them (its default country and language, empty lists): in the proof,
 * each the platform holds may not have been sent. A list only when empty (a default is empty).
 */
const FILLED_LISTS = ['associatedParties', 'telephoneNumbers', 'relations'];
const FILLED_VALUES = ['countryCode', 'preferredCommunicationLanguage'];
const FILLED = [...FILLED_LISTS, ...FILLED_VALUES];
/**
 * Staged fields the stream need not show that can only be true or false: when the platform does
 * not show one, the proof tries it absent, true and false (what was sent is then known, and the
 * field counted "not shown", as the comparison counts it).
 */
const UNSHOWN_FLAGS = ['isActive'];
/** Guesses that proved records, tried first on the next (a mapping sends the same fields, so few shapes recur). */
const LEARNED = 8;
/** Records for which every guess is tried before only the learned ones are: a migration the platform normalises throughout stops paying for it. */
const SEARCHES = 1_000;

/**
 * A live record the proof settles: proven as sent, the fields sent that the stream does not
 * show, those it holds in another form than sent (UUID case, NFD, a date's or an amount's form),
 * and the values it holds that were not sent (a default country or language: added).
 */
export interface Proven {
  notShown: string[];
  otherForm: string[];
  added: string[];
}

/**
 * Proves a live record holds exactly what was sent, by hash: the live record written back the
 * way staging takes it (`type` back to the staged type; `checkStagedCounterparty`, which drops
 * what staging does not take, such as `sequenceNumber`, and puts the keys in the schema's order)
 * and framed as a run frames it (`encodeFrame`, SEND_FORMAT; `frameHash`) hashes to the ledger's content
 * hash of the frame sent. As the platform may have filled in fields the record did not carry
 * (FILLED) and not show the flags it did (UNSHOWN_FLAGS), a few such guesses are tried; each one
 * whose hash matches is what was sent, so the proof is exact whichever one matches. A platform
 * that added a field staging takes, changed a code's case, reordered a list or cut a value
 * proves nothing: `checkFields` then decides.
 * @example const proof = new HashProof(); proof.prove(live, sent.contentHash) // { notShown: ['isActive'] }, or undefined
 */
export class HashProof {
  /** Guesses that proved, the latest first (see `fitted`). */
  private readonly learned: number[] = [];
  private searches = SEARCHES;

  prove(live: Record<string, unknown>, contentHash: string): Proven | undefined {
    const asHeld = this.proveAsHeld(live, contentHash);
    if (asHeld) return asHeld;
    // The same data in another form: the record written in the forms a run sends, proven alike.
    const sentForm = toSentForm(live, NUMBER_KEYS, DATE_KEYS) as Record<string, unknown>;
    const otherForm = Object.keys(live).filter((k) => JSON.stringify(live[k]) !== JSON.stringify(sentForm[k]));
    if (otherForm.length === 0) return undefined;
    const proven = this.proveAsHeld(sentForm, contentHash);
    return proven ? { ...proven, otherForm } : undefined;
  }

  private proveAsHeld(live: Record<string, unknown>, contentHash: string): Proven | undefined {
    const type = typeof live.type === 'string' ? STAGED_TYPE[live.type] : undefined;
    if (type === undefined) return undefined;
    const input: Record<string, unknown> = { ...live, type };
    // A flag the platform does not show is set here, so that the schema puts it in its place.
    let unshown = 0;
    for (let i = 0; i < UNSHOWN_FLAGS.length; i++) {
      if (live[UNSHOWN_FLAGS[i]!] !== undefined) continue;
      unshown |= 1 << i;
      input[UNSHOWN_FLAGS[i]!] = true;
    }
    const checked = checkStagedCounterparty(input);
    if (!checked.ok) return undefined;
    const written = checked.record as unknown as Record<string, unknown>;
    let droppable = 0;
    for (let i = 0; i < FILLED.length; i++) {
      const v = written[FILLED[i]!];
      if (v !== undefined && (i >= FILLED_LISTS.length || (Array.isArray(v) && v.length === 0))) droppable |= 1 << i;
    }
    // Guesses fitted to this record that were tried (a few learned ones often fit alike).
    const tried: number[] = [];
    const attempt = (guess: number): Proven | undefined => {
      const fit = fitted(guess, droppable, unshown);
      if (tried.includes(fit)) return undefined;
      tried.push(fit);
      const notShown: string[] = [];
      const added: string[] = [];
      const record = guessed(written, fit, unshown, notShown, added);
      return frameHash(encodeFrame(SEND_FORMAT, record)) === contentHash ? { notShown, otherForm: [], added } : undefined;
    };
    for (let i = 0; i < this.learned.length; i++) {
      const proven = attempt(this.learned[i]!);
      if (!proven) continue;
      if (i > 0) this.learned.unshift(...this.learned.splice(i, 1));
      return proven;
    }
    if (this.searches === 0) return undefined;
    // Every guess this record allows: each subset of what may have been filled in, times three per unshown flag.
    for (let flags = 0; flags < 3 ** UNSHOWN_FLAGS.length; flags++)
      for (let drop = droppable; ; drop = (drop - 1) & droppable) {
        const guess = drop + flags * FLAGS_UNIT;
        const proven = attempt(guess);
        if (proven) {
          this.learned.unshift(guess);
          if (this.learned.length > LEARNED) this.learned.length = LEARNED;
          return proven;
        }
        if (drop === 0) break;
      }
    this.searches--;
    return undefined;
  }
}

/** Where a guess's flag digits begin: below it, bit i drops FILLED[i]. */
const FLAGS_UNIT = 1 << FILLED.length;
const FILLED_BIT: ReadonlyMap<string, number> = new Map(FILLED.map((f, i) => [f, 1 << i]));
const FLAG_INDEX: ReadonlyMap<string, number> = new Map(UNSHOWN_FLAGS.map((f, i) => [f, i]));

/**
 * A guess fitted to a record: it drops only what the record may not have been sent (`droppable`),
 * and sets only the flags the record does not show (`unshown`: bit i for UNSHOWN_FLAGS[i]). A
 * guess is `drop + flags * FLAGS_UNIT`, `flags` in base 3 (digit i for UNSHOWN_FLAGS[i]: 0
 * absent, 1 true, 2 false).
 */
function fitted(guess: number, droppable: number, unshown: number): number {
  let rest = Math.floor(guess / FLAGS_UNIT);
  let flags = 0;
  for (let i = 0, unit = 1; i < UNSHOWN_FLAGS.length; i++, unit *= 3, rest = Math.floor(rest / 3))
    if (unshown & (1 << i)) flags += (rest % 3) * unit;
  return (guess & droppable) + flags * FLAGS_UNIT;
}

/**
 * The record written back as a fitted guess says it was sent, built key by key in the schema's
 * order (a flag the platform does not show, `unshown`, is in `written` only as the placeholder
 * `prove` set); the flags it sets are pushed on `notShown`.
 */
function guessed(
  written: Record<string, unknown>,
  fit: number,
  unshown: number,
  notShown: string[],
  added: string[],
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const key in written) {
    const bit = FILLED_BIT.get(key);
    if (bit !== undefined && fit & bit) {
      // Held but not sent: the platform filled it in (an empty list is no value).
      const v = written[key];
      if (!(Array.isArray(v) && v.length === 0)) added.push(key);
      continue;
    }
    const flag = FLAG_INDEX.get(key);
    if (flag === undefined || !(unshown & (1 << flag))) {
      record[key] = written[key];
      continue;
    }
    const choice = Math.floor(fit / FLAGS_UNIT / 3 ** flag) % 3;
    if (choice === 0) continue;
    record[key] = choice === 1;
    notShown.push(key);
  }
  return record;
}
