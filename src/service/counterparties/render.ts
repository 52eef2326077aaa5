/**
 * Turns a stored live counterparty into the object the list and the stream show: the staged
 * record's fields under the streamed names of the spec, with `sequenceNumber` first.
 */
import { STREAMED_ORGANISATION_FIELDS, STREAMED_PERSON_FIELDS } from '../../contract/counterparty.js';
import { COUNTER_FIELD } from '../../contract/shared.js';

/** Shown when a record carries no country: the platform's home market (docs/contract-gaps.md). */
export const DEFAULT_COUNTRY = 'NL';
/** Shown when a record carries no preferred language (docs/contract-gaps.md). */
export const DEFAULT_LANGUAGE = 'nl-NL';

/** Kept beyond the spec's list: a migrated counterparty should not lose them on the way out. */
export const FIELDS_KEPT_BEYOND_SPEC = ['addresses', 'externalReferences', 'ratings'] as const;

/**
 * `fillCountry` false (the dialect `country=absent`): a record without a country of its own is
 * shown without `countryCode`, as a platform that derives none would. It is decided here, not
 * at the dialect's HTTP edge, because only the stored record tells its own country from a
 * derived one.
 * @example renderCounterparty(7, '{"referenceId":"…","type":"person","initials":"J","surname":"Jansen"}')
 *   // { sequenceNumber: 7, type: 'StreamingPersonCounterparty', referenceId: '…', associatedParties: [], … }
 */
export function renderCounterparty(seq: number, json: string, fillCountry = true): Record<string, unknown> {
  const data = JSON.parse(json) as Record<string, unknown>;
  const isOrganisation = data.type === 'organisation';
  const addresses = Array.isArray(data.addresses) ? (data.addresses as Array<Record<string, unknown>>) : [];
  const mainAddress = addresses.find((a) => a.type === 'main') ?? addresses[0];
  const out: Record<string, unknown> = {
    [COUNTER_FIELD]: seq,
    type: isOrganisation ? 'StreamingOrganisationCounterparty' : 'StreamingPersonCounterparty',
    referenceId: data.referenceId,
    associatedParties: data.associatedParties ?? [],
    countryCode: fillCountry ? (data.countryCode ?? mainAddress?.countryCode ?? DEFAULT_COUNTRY) : data.countryCode,
    preferredCommunicationLanguage: data.preferredCommunicationLanguage ?? DEFAULT_LANGUAGE,
    telephoneNumbers: data.telephoneNumbers ?? [],
    relations: data.relations ?? [],
    lifecycleStatus: 'counterparty',
  };
  if (out.countryCode === undefined) delete out.countryCode;
  for (const field of isOrganisation ? STREAMED_ORGANISATION_FIELDS : STREAMED_PERSON_FIELDS)
    if (data[field] !== undefined) out[field] = data[field];
  for (const field of FIELDS_KEPT_BEYOND_SPEC) if (data[field] !== undefined) out[field] = data[field];
  return out;
}
