/**
 * Which staged-counterparty fields are personal data, next to the schemas they classify
 * (migration.ts). Reports, printouts and logs mask the values of personal fields
 * (src/privacy/); a legacy column a mapping reads into a personal field is personal too.
 *
 * - `direct`: identifies a person on its own or nearly (names, e-mail, phone, street and house
 *   number, a person's external references).
 * - `quasi`: identifies in combination (birth date, postcode, locality, sex, nationality,
 *   salutation, initials — GDPR's quasi-identifiers).
 * - `financial`: money (income).
 * - `none`: codes, types, flags and generated ids that say nothing about a person.
 *
 * An organisation's name, KvK number and address are public registry data in the Netherlands,
 * but a sole trader's (eenmanszaak) are a person's: they are classed as personal, to be safe.
 */

export type PersonalClass = 'direct' | 'quasi' | 'financial' | 'none';

/** How reports and printouts show values of personal fields (src/privacy/redact.ts). */
export const VALUES_MODES = ['masked', 'hashed', 'revealed'] as const;
export type ValuesMode = (typeof VALUES_MODES)[number];
export const PERSONAL_CLASSES = ['direct', 'quasi', 'financial', 'none'] as const;

/**
 * Field paths with array indexes written as `[]` (`addresses[].postalCode`). A path not listed
 * here (a whole row, a script's own field) is treated as `direct` by those who ask.
 */
export const FIELD_CLASSES: Readonly<Record<string, PersonalClass>> = {
  referenceId: 'none',
  type: 'none',
  isActive: 'none',
  countryCode: 'none',
  preferredCommunicationLanguage: 'none',
  emailAddress: 'direct',
  'telephoneNumbers[]': 'direct',
  'telephoneNumbers[].type': 'none',
  'telephoneNumbers[].number': 'direct',
  'telephoneNumbers[].countryCode': 'none',
  'externalReferences[]': 'direct',
  'externalReferences[].origin': 'none',
  'externalReferences[].referenceId': 'direct',
  'ratings[]': 'financial',
  'associatedParties[]': 'direct',
  'addresses[]': 'direct',
  'addresses[].referenceId': 'none',
  'addresses[].type': 'none',
  'addresses[].addressLine1': 'direct',
  'addresses[].addressLine2': 'direct',
  'addresses[].houseNumber': 'direct',
  'addresses[].postalCode': 'quasi',
  'addresses[].locality': 'quasi',
  'addresses[].countryCode': 'none',
  'relations[]': 'none',
  'relations[].to': 'none',
  'relations[].type': 'none',
  // person
  initials: 'quasi',
  firstName: 'direct',
  surnamePrefix: 'quasi',
  surname: 'direct',
  salutation: 'quasi',
  sex: 'quasi',
  dateOfBirth: 'quasi',
  'nationalities[]': 'quasi',
  income: 'financial',
  'income.amount': 'financial',
  'income.currency': 'none',
  'income.frequency': 'none',
  // organisation
  organisationName: 'direct',
  cocNumber: 'direct',
  countryOfIncorporation: 'none',
};

/**
 * The class of a field path as a record or a message names it (`addresses[0].postalCode`,
 * `nationalities[0]`), or undefined when the contract does not name it.
 * @example classOfField('addresses[0].postalCode') // 'quasi'
 */
export function classOfField(field: string): PersonalClass | undefined {
  const path = field.replace(/\[\d+\]/g, '[]');
  return FIELD_CLASSES[path];
}

/** The most careful of several classes (a legacy column feeding a name and a code is personal). */
export function strictestClass(classes: Iterable<PersonalClass>): PersonalClass {
  const order: PersonalClass[] = ['direct', 'financial', 'quasi', 'none'];
  let best: PersonalClass = 'none';
  for (const c of classes) if (order.indexOf(c) < order.indexOf(best)) best = c;
  return best;
}
