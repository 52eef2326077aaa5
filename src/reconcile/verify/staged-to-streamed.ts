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
 * - Normalisation allowed: code values of the type fields (`type`, `frequency`, `sex`) ignore
 *   case (the staged-counterparty reference); list items in any order (the specification
 *   promises none); object keys in any order; a date may come back as midnight UTC
 *   (`1980-01-02T00:00:00Z` is `1980-01-02`). Nothing else: a value cut, an accent lost, a list
 *   item dropped, a date moved are differences.
 */
import { STREAMED_ORGANISATION_FIELDS, STREAMED_PERSON_FIELDS } from '../../contract/counterparty.js';
import type { StagedCounterparty } from '../../contract/migration.js';

/** The streamed type of each staged type. */
export const STREAMED_TYPE: Readonly<Record<string, string>> = {
  person: 'StreamingPersonCounterparty',
  organisation: 'StreamingOrganisationCounterparty',
};

/** Staged fields the specification's stream shows, per staged type (besides referenceId, the match key). */
const COMMON = ['type', 'associatedParties', 'countryCode', 'preferredCommunicationLanguage', 'telephoneNumbers', 'relations'];
const SHOWN: Readonly<Record<string, ReadonlySet<string>>> = {
  person: new Set([...COMMON, ...STREAMED_PERSON_FIELDS]),
  organisation: new Set([...COMMON, ...STREAMED_ORGANISATION_FIELDS]),
};

/** Keys whose string values are codes compared without case. */
const CASELESS_KEYS = new Set(['type', 'frequency', 'sex']);
const MIDNIGHT_UTC = /^(\d{4}-\d{2}-\d{2})T00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)$/;

/** How one staged field stands against the platform. */
export type FieldVerdict = 'same' | 'differs' | 'notShown';

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
    // Most values come back exactly as sent: a plain equality settles them before the canonical form.
    const same = sameValue(value, h) || canonical(value, field) === canonical(h, field);
    out.push({ field, verdict: same ? 'same' : 'differs', sent: value, held: h });
  }
  return out;
}

/**
 * The same JSON value, exactly (keys in any order; a key holding undefined is no key): what most
 * fields settle on, without writing either value out.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    if (!sameValue(x[k], y[k])) return false;
    keys++;
  }
  for (const k in y) if (y[k] !== undefined) keys--;
  return keys === 0;
}

/**
 * A value written the one way the comparison accepts (see the module's header).
 * @example canonical([{ type: 'Mobile', number: '06' }], 'telephoneNumbers') === canonical([{ number: '06', type: 'mobile' }], 'telephoneNumbers') // true
 */
export function canonical(value: unknown, key: string): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value))
    return `[${value
      .map((v) => canonical(v, key))
      .sort()
      .join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, k)}`).join(',')}}`;
  }
  if (typeof value === 'string') {
    const date = MIDNIGHT_UTC.exec(value);
    const text = date ? date[1]! : value;
    return JSON.stringify(CASELESS_KEYS.has(key) ? text.toLowerCase() : text);
  }
  return JSON.stringify(value);
}
