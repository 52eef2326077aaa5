/** Live counterparties as the list and the stream show them. */
import { z } from 'zod';

export const STREAMED_TYPES = ['StreamingPersonCounterparty', 'StreamingOrganisationCounterparty'] as const;

/** The spec's own fields of a streamed person and organisation, beyond those every type has. */
export const STREAMED_PERSON_FIELDS = [
  'nationalities',
  'salutation',
  'initials',
  'firstName',
  'surnamePrefix',
  'surname',
  'sex',
  'dateOfBirth',
  'income',
  'emailAddress',
] as const;
export const STREAMED_ORGANISATION_FIELDS = ['organisationName', 'countryOfIncorporation', 'cocNumber', 'emailAddress'] as const;

export const streamedCounterpartySchema = z.looseObject({
  type: z.enum(STREAMED_TYPES),
  referenceId: z.string(),
  associatedParties: z.array(z.unknown()).optional(),
  countryCode: z.string().optional(),
  preferredCommunicationLanguage: z.string().optional(),
  telephoneNumbers: z.array(z.unknown()).optional(),
  relations: z.array(z.unknown()).optional(),
  lifecycleStatus: z.string().optional(),
  // organisation
  organisationName: z.string().optional(),
  countryOfIncorporation: z.string().optional(),
  cocNumber: z.string().optional(),
  // person
  nationalities: z.array(z.string()).optional(),
  salutation: z.string().optional(),
  initials: z.string().optional(),
  firstName: z.string().optional(),
  surnamePrefix: z.string().optional(),
  surname: z.string().optional(),
  sex: z.string().optional(),
  dateOfBirth: z.string().optional(),
  income: z.record(z.string(), z.unknown()).optional(),
  emailAddress: z.string().optional(),
});
export type StreamedCounterparty = z.infer<typeof streamedCounterpartySchema>;

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), total: z.number().int(), offset: z.number().int(), limit: z.number().int() });

export const counterpartyPageSchema = pageSchema(streamedCounterpartySchema);
export type CounterpartyPage = z.infer<typeof counterpartyPageSchema>;

export const PAGE_LIMIT_MIN = 1;
export const PAGE_LIMIT_MAX = 100;
/** Defaults when omitted (not shown by the spec: ours). */
export const PAGE_DEFAULTS = { offset: 0, limit: 20 } as const;
