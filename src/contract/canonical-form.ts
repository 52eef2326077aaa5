/**
 * Same data in another form is the same data: the one module that says when two values a client
 * and a platform exchanged are the same, though written differently. Staging-result matching, the
 * ledger's mapping of job results back to records, `verify` and its report all compare through
 * here; nothing else compares raw strings of platform data.
 *
 * The forms read as the same (each one the specification or the standard it names allows):
 * - identifiers: UUIDs in any case (RFC 9562 §4: compared case-insensitively); `idKey` is the
 *   key a UUID is looked up by;
 * - text: in any Unicode normalisation form that is canonically equivalent (NFC, NFD; not the
 *   compatibility forms NFKC/NFKD, which change what is written: `ﬁ` is not `fi`);
 * - calendar dates in every ISO 8601 form (extended `1990-05-05`, basic `19900505`, ordinal
 *   `1990-125`, week `1990-W18-6`), or as midnight UTC (`1990-05-05T00:00:00Z`);
 * - instants in every ISO 8601 form with a zone (iso8601.ts), compared as the instant they name;
 * - numbers as JSON numbers or as numeric strings (`2500`, `"2500.00"`, `"2.5e3"`); a string
 *   with a leading zero (`"03001"`) is text, never a number: a postcode keeps its zero;
 * - codes of the type fields (`type`, `frequency`, `sex`) in any case.
 *
 * The sent value decides what kind of value is compared: a date was sent as an extended date, an
 * amount as a number, an identifier as a UUID. So a platform that writes a number in a text field
 * as a date (`19900505` for a chamber-of-commerce number) is not called the same.
 */
import { readIsoDate, readIsoDateTime } from './iso8601.js';

/** How a value the platform holds stands against the value sent. */
export type Sameness = 'same' | 'other-form' | 'differs';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EXTENDED_DATE = /^\d{4}-\d{2}-\d{2}$/;
const MIDNIGHT_UTC = /^(.+)[Tt]00:?00(?::?00(?:[.,]0+)?)?(?:[Zz]|[+-]00(?::?00)?)$/;
/** The JSON number grammar (RFC 8259 §6), so no leading zero, no `+`, no hex, no blank. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Keys whose string values are codes compared without case. */
const CASELESS_KEYS = new Set(['type', 'frequency', 'sex']);

/**
 * The key an identifier is looked up by: a UUID in lower case, anything else as it is.
 * @example idKey('1B4E28BA-2FA1-11D2-883F-0016D3CCA427') // '1b4e28ba-2fa1-11d2-883f-0016d3cca427'
 */
export function idKey(id: string): string {
  return id.length === 36 && UUID.test(id) ? id.toLowerCase() : id;
}

/** Whether two identifiers name the same thing. @example sameId('ABC…', 'abc…') // true for a UUID */
export const sameId = (a: string, b: string): boolean => a === b || idKey(a) === idKey(b);

/**
 * A calendar date (`YYYY-MM-DD`) from any ISO 8601 form of one, or a date-time at midnight UTC.
 * @example readCalendarDate('1990-W18-6') // '1990-05-05'
 */
export function readCalendarDate(text: string): string | undefined {
  const date = readIsoDate(text);
  if (date !== undefined) return date;
  const midnight = MIDNIGHT_UTC.exec(text.trim());
  return midnight ? readIsoDate(midnight[1]!) : undefined;
}

/**
 * A number written as a JSON number or as a numeric string; undefined for anything else (a
 * string with a leading zero is text).
 * @example readNumber('2500.00') // 2500
 * @example readNumber('03001')   // undefined
 */
export function readNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return JSON_NUMBER.test(text) ? Number(text) : undefined;
}

/** The instant (ms since the epoch, and the fraction's digits beyond ms) a date-time names, or undefined. */
function instantOf(text: string): string | undefined {
  const extended = readIsoDateTime(text);
  if (extended === undefined) return undefined;
  const fraction = /\.(\d+)/.exec(extended)?.[1] ?? '';
  // Digits beyond the millisecond Date.parse keeps, without trailing zeros (`.950` is `.95`).
  return `${Date.parse(extended)}.${fraction.slice(3).replace(/0+$/, '')}`;
}

/**
 * How a held value stands against the value sent under `key`: the same (exactly, keys and list
 * items in any order), the same in another form (module header), or different.
 * @example compareValues('1990-05-05', '19900505', 'dateOfBirth') // 'other-form'
 * @example compareValues(2500, '2500.00', 'amount')             // 'other-form'
 * @example compareValues('Zoë', 'Zoe\u0308', 'firstName')        // 'other-form'
 * @example compareValues('03001', 3001, 'postalCode')           // 'differs'
 */
export function compareValues(sent: unknown, held: unknown, key = ''): Sameness {
  if (sent === held) return 'same';
  if (sent === undefined || held === undefined || sent === null || held === null) return 'differs';
  if (Array.isArray(sent)) return Array.isArray(held) ? compareLists(sent, held, key) : 'differs';
  if (typeof sent === 'object') {
    if (typeof held !== 'object' || Array.isArray(held)) return 'differs';
    return compareObjects(sent as Record<string, unknown>, held as Record<string, unknown>);
  }
  if (typeof sent === 'number') return readNumber(held) === sent ? 'other-form' : 'differs';
  if (typeof sent !== 'string' || typeof held !== 'string') return 'differs';
  return otherFormOfText(sent, held, key) ? 'other-form' : 'differs';
}

/** Whether a held string is the sent one in another form (the sent one's shape says which forms count). */
function otherFormOfText(sent: string, held: string, key: string): boolean {
  if (CASELESS_KEYS.has(key) && sent.toLowerCase() === held.toLowerCase()) return true;
  if (sent.length === 36 && UUID.test(sent)) return sameId(sent, held);
  if (EXTENDED_DATE.test(sent) && readIsoDate(sent) === sent) return readCalendarDate(held) === sent;
  const instant = instantOf(sent);
  if (instant !== undefined) return instantOf(held) === instant;
  return sent.normalize('NFC') === held.normalize('NFC');
}

/** Members compared by name; a member holding undefined is no member. The worst verdict wins. */
function compareObjects(sent: Record<string, unknown>, held: Record<string, unknown>): Sameness {
  let verdict: Sameness = 'same';
  let keys = 0;
  for (const k in sent) {
    if (sent[k] === undefined) continue;
    keys++;
    const v = compareValues(sent[k], held[k], k);
    if (v === 'differs') return 'differs';
    if (v === 'other-form') verdict = 'other-form';
  }
  for (const k in held) if (held[k] !== undefined) keys--;
  return keys === 0 ? verdict : 'differs';
}

/**
 * Lists compared as multisets (the specification promises no order): each sent item is paired
 * with a held item it equals exactly, else with one it equals in another form.
 */
function compareLists(sent: readonly unknown[], held: readonly unknown[], key: string): Sameness {
  if (sent.length !== held.length) return 'differs';
  const free = held.map((_, i) => i);
  let verdict: Sameness = 'same';
  for (const item of sent) {
    let other = -1;
    let exact = -1;
    for (let j = 0; j < free.length && exact < 0; j++) {
      const v = compareValues(item, held[free[j]!], key);
      if (v === 'same') exact = j;
      else if (v === 'other-form' && other < 0) other = j;
    }
    const pick = exact >= 0 ? exact : other;
    if (pick < 0) return 'differs';
    if (exact < 0) verdict = 'other-form';
    free.splice(pick, 1);
  }
  return verdict;
}

/**
 * A record as the platform holds it, written in the forms a run sends (UUIDs in lower case,
 * text in NFC, dates in the extended calendar form, the amounts of `numberKeys` as numbers): what
 * `verify`'s proof by hash tries when the record as held does not hash to what was sent. Only
 * a form change: a value it cannot read in the sent form is left as it is.
 * @example toSentForm({ referenceId: 'ABC…', dateOfBirth: '19900505', income: { amount: '2500.00' } }, new Set(['amount'], new Set(['dateOfBirth'])))
 *   // { referenceId: 'abc…', dateOfBirth: '1990-05-05', income: { amount: 2500 } }
 */
export function toSentForm(value: unknown, numberKeys: ReadonlySet<string>, dateKeys: ReadonlySet<string>, key = ''): unknown {
  if (typeof value === 'string') {
    if (value.length === 36 && UUID.test(value)) return value.toLowerCase();
    if (dateKeys.has(key)) return readCalendarDate(value) ?? value.normalize('NFC');
    if (numberKeys.has(key)) return readNumber(value) ?? value;
    return value.normalize('NFC');
  }
  if (Array.isArray(value)) return value.map((v) => toSentForm(v, numberKeys, dateKeys, key));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k in value) out[k] = toSentForm((value as Record<string, unknown>)[k], numberKeys, dateKeys, k);
    return out;
  }
  return value;
}

/** An upper-case hex digit: a UUID without one is already in the form the ledger keeps. */
const UPPER_HEX = /[A-F]/;

/** The UUID in lower case when `value` is one with an upper-case digit, else `value` itself. */
export const lowerUuid = (value: string): string =>
  value.length === 36 && UPPER_HEX.test(value) && UUID.test(value) ? value.toLowerCase() : value;

/**
 * The value with every UUID in lower case, at any depth (copied only where one changes): what the
 * service reads ids sent back to it through (`uuids=upper`); the client does the same in the
 * pass that drops nulls (client/tolerant.ts parseWith, with `lowerUuid`), so an id the platform
 * wrote in upper case is the id the ledger holds wherever it is looked up or compared.
 * @example canonicalIds({ referenceId: 'ABC…' }) // { referenceId: 'abc…' }
 */
export function canonicalIds(value: unknown): unknown {
  if (typeof value === 'string') return lowerUuid(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = typeof item === 'string' ? lowerUuid(item) : typeof item === 'object' && item !== null ? canonicalIds(item) : item;
      if (next !== item) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  // Parsed JSON only: a stream, a buffer or any other object is not data to read ids in.
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    const next = typeof item === 'string' ? lowerUuid(item) : typeof item === 'object' && item !== null ? canonicalIds(item) : item;
    if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}
