/**
 * The service's configuration code lists: the values a staged record may use for countries,
 * nationalities, languages, income frequencies, address, relation and telephone types,
 * currencies and sex. Validation reports any other value as UNKNOWN_CODE, as the platform does
 * for "a code that does not exist in configuration". Country, currency and language codes are
 * matched exactly (ISO upper-case / BCP 47 form); the type lists ignore case, because legacy
 * exports write `Monthly`, `monthly` and `MONTHLY` for the same thing.
 */

/** ISO 3166-1 alpha-2: Europe, the usual migration origins, and the large economies. */
const COUNTRIES = `AD AE AL AM AR AT AU AZ BA BE BG BH BR BY CA CH CL CN CO CR CU CY CZ DE DK DZ EC EE EG ES FI FR GB GE GR
  HK HR HU ID IE IL IN IQ IR IS IT JM JO JP KE KR KW KZ LB LI LK LT LU LV MA MC MD ME MK MT MX MY NG NL NO NZ PE PH PK PL PT
  QA RO RS RU SA SE SG SI SK SM SR TH TN TR TW UA US UY VA VE VN ZA AW CW SX BQ`;

export interface CodeList {
  /** Name used in error messages ("country", "income frequency"…). */
  name: string;
  has(value: string): boolean;
  /** The configured values, for messages and docs. */
  values: readonly string[];
}

function exact(name: string, values: string[]): CodeList {
  const set = new Set(values);
  return { name, values, has: (v) => set.has(v) };
}
function caseless(name: string, values: string[]): CodeList {
  const set = new Set(values.map((v) => v.toLowerCase()));
  return { name, values, has: (v) => set.has(v.toLowerCase()) };
}

const countries = COUNTRIES.split(/\s+/).filter(Boolean).sort();

/** Every code list validation checks, by role. */
export const CODE_LISTS = {
  country: exact('country', countries),
  nationality: exact('nationality', countries),
  currency: exact('currency', [
    'EUR',
    'USD',
    'GBP',
    'CHF',
    'SEK',
    'NOK',
    'DKK',
    'PLN',
    'CZK',
    'HUF',
    'JPY',
    'CAD',
    'AUD',
    'SRD',
    'ANG',
    'AWG',
  ]),
  language: exact('language', [
    'nl-NL',
    'nl-BE',
    'en-GB',
    'en-US',
    'fr-FR',
    'fr-BE',
    'de-DE',
    'de-AT',
    'de-CH',
    'es-ES',
    'it-IT',
    'pl-PL',
    'pt-PT',
    'tr-TR',
    'nl',
    'en',
    'fr',
    'de',
  ]),
  incomeFrequency: caseless('income frequency', ['Weekly', 'FourWeekly', 'Monthly', 'Quarterly', 'HalfYearly', 'Yearly']),
  addressType: caseless('address type', ['main', 'postal', 'visiting', 'residential', 'correspondence', 'billing', 'previous']),
  relationType: caseless('relation type', [
    'isSignificantOtherOf',
    'isSpouseOf',
    'isPartnerOf',
    'isChildOf',
    'isParentOf',
    'isGuardianOf',
    'isDirectorOf',
    'isShareholderOf',
    'isEmployeeOf',
    'isEmployerOf',
    'isGuarantorOf',
    'isRepresentativeOf',
    'isSubsidiaryOf',
    'isParentCompanyOf',
  ]),
  telephoneType: caseless('telephone type', ['mobile', 'home', 'work', 'office', 'fax', 'landline', 'other']),
  sex: caseless('sex', ['male', 'female', 'unknown', 'other', 'M', 'F', 'X']),
} as const satisfies Record<string, CodeList>;
