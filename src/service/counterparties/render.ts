/**
 * Turns a stored live counterparty into the object the list and the stream show: the staged
 * record's fields under the streamed names of the spec, with `sequenceNumber` first.
 */
import { STREAMED_ORGANISATION_FIELDS, STREAMED_PERSON_FIELDS } from '../../contract/counterparty.js';
import { COUNTER_FIELD } from '../../contract/shared.js';

/** What a platform that fills in values shows for a record without a country (`country=derived`): its home market. */
export const DEFAULT_COUNTRY = 'NL';
/** What a platform that fills in values shows for a record without a language (`country=derived`). */
export const DEFAULT_LANGUAGE = 'nl-NL';

/** Kept beyond the spec's list: a migrated counterparty should not lose them on the way out. */
export const FIELDS_KEPT_BEYOND_SPEC = ['addresses', 'externalReferences', 'ratings'] as const;

/**
 * The service shows what it was sent: a record without `countryCode` or
 * `preferredCommunicationLanguage` is shown without them (a default would put a Polish customer
 * down as a Dutch speaker, docs/contract-gaps.md). `fillIn` true (the dialect `country=derived`):
 * a platform that fills them in, the main address's country else `NL`, and `nl-NL`. Decided
 * here, not at the dialect's HTTP edge, because only the stored record tells a value of its own
 * from a filled-in one.
 * @example renderCounterparty(7, '{"referenceId":"…","type":"person","initials":"J","surname":"Jansen"}')
 *   // { sequenceNumber: 7, type: 'StreamingPersonCounterparty', referenceId: '…', associatedParties: [], … }
 */
export function renderCounterparty(seq: number, json: string, fillIn = false): Record<string, unknown> {
  const data = JSON.parse(json) as Record<string, unknown>;
  const isOrganisation = data.type === 'organisation';
  const addresses = Array.isArray(data.addresses) ? (data.addresses as Array<Record<string, unknown>>) : [];
  const mainAddress = addresses.find((a) => a.type === 'main') ?? addresses[0];
  const out: Record<string, unknown> = {
    [COUNTER_FIELD]: seq,
    type: isOrganisation ? 'StreamingOrganisationCounterparty' : 'StreamingPersonCounterparty',
    referenceId: data.referenceId,
    associatedParties: data.associatedParties ?? [],
    countryCode: fillIn ? (data.countryCode ?? mainAddress?.countryCode ?? DEFAULT_COUNTRY) : data.countryCode,
    preferredCommunicationLanguage: fillIn
      ? (data.preferredCommunicationLanguage ?? DEFAULT_LANGUAGE)
      : data.preferredCommunicationLanguage,
    telephoneNumbers: data.telephoneNumbers ?? [],
    relations: data.relations ?? [],
    lifecycleStatus: 'counterparty',
  };
  if (out.countryCode === undefined) delete out.countryCode;
  if (out.preferredCommunicationLanguage === undefined) delete out.preferredCommunicationLanguage;
  for (const field of isOrganisation ? STREAMED_ORGANISATION_FIELDS : STREAMED_PERSON_FIELDS)
    if (data[field] !== undefined) out[field] = data[field];
  for (const field of FIELDS_KEPT_BEYOND_SPEC) if (data[field] !== undefined) out[field] = data[field];
  return out;
}
