/**
 * The header dictionary: the names CRM and core-banking exports give their columns, in Dutch,
 * English and German, mapped to the staged-counterparty role they play. Headers are compared
 * normalised (lower case, accents and separators removed: `Geboorte-datum` = `geboortedatum`).
 * To teach `init` a new header, add it to the role's list.
 */

export type Role =
  | 'key'
  | 'initials'
  | 'firstName'
  | 'surnamePrefix'
  | 'surname'
  | 'fullName'
  | 'sex'
  | 'salutation'
  | 'dateOfBirth'
  | 'nationality'
  | 'street'
  | 'houseNumber'
  | 'houseNumberAddition'
  | 'postalCode'
  | 'locality'
  | 'country'
  | 'email'
  | 'phone'
  | 'mobile'
  | 'incomeAmount'
  | 'incomeFrequency'
  | 'partnerKey'
  | 'organisationName'
  | 'cocNumber'
  | 'directorKey'
  | 'active'
  | 'address';

/** Role → the normalised headers that play it; the first role whose list holds a header wins. */
export const HEADER_ROLES: ReadonlyArray<[Role, readonly string[]]> = [
  [
    'partnerKey',
    ['partnerklantnr', 'partnerklantnummer', 'partnerid', 'partnernr', 'partner', 'spouseid', 'partnercustomerid', 'ehepartnerid'],
  ],
  [
    'directorKey',
    ['directeurklantnr', 'directeur', 'bestuurder', 'bestuurderklantnr', 'director', 'directorid', 'geschaftsfuhrer', 'geschaeftsfuehrer'],
  ],
  [
    'cocNumber',
    [
      'kvk',
      'kvknummer',
      'kvknr',
      'kvkno',
      'cocnumber',
      'coc',
      'chamberofcommerce',
      'handelsregisternummer',
      'handelsregister',
      'hrb',
      'registrationnumber',
      'companynumber',
    ],
  ],
  [
    'organisationName',
    [
      'bedrijfsnaam',
      'handelsnaam',
      'statutairenaam',
      'organisatie',
      'organisatienaam',
      'companyname',
      'company',
      'organisation',
      'organization',
      'organisationname',
      'organizationname',
      'firma',
      'firmenname',
      'unternehmen',
      'businessname',
    ],
  ],
  [
    'key',
    [
      'klantnr',
      'klantnummer',
      'klantid',
      'relatienr',
      'relatienummer',
      'relatieid',
      'bedrijfsnr',
      'bedrijfsnummer',
      'customerid',
      'customerno',
      'customernumber',
      'custno',
      'clientid',
      'clientnumber',
      'clientno',
      'companyid',
      'kundennummer',
      'kundennr',
      'kundenid',
      'id',
      'nr',
      'nummer',
      'number',
    ],
  ],
  ['initials', ['voorletters', 'voorl', 'vrl', 'initialen', 'initials', 'initial', 'vorletters']],
  [
    'firstName',
    [
      'voornaam',
      'voornamen',
      'roepnaam',
      'firstname',
      'firstnames',
      'givenname',
      'givennames',
      'forename',
      'vorname',
      'vornamen',
      'rufname',
    ],
  ],
  [
    'surnamePrefix',
    [
      'tussenvoegsel',
      'tussenvoegsels',
      'tussenv',
      'tv',
      'voorvoegsel',
      'voorvoegsels',
      'prefix',
      'surnameprefix',
      'namenszusatz',
      'vorsatzwort',
    ],
  ],
  ['surname', ['achternaam', 'geslachtsnaam', 'familienaam', 'surname', 'lastname', 'familyname', 'nachname', 'familienname']],
  ['fullName', ['naam', 'volledigenaam', 'name', 'fullname']],
  ['sex', ['geslacht', 'sex', 'gender', 'geschlecht']],
  ['salutation', ['aanhef', 'salutation', 'title', 'anrede', 'titel']],
  [
    'dateOfBirth',
    ['geboortedatum', 'gebdatum', 'geboortedat', 'dateofbirth', 'birthdate', 'dob', 'birthday', 'geburtsdatum', 'geburtstag'],
  ],
  ['nationality', ['nationaliteit', 'nationality', 'staatsangehorigkeit', 'staatsangehoerigkeit', 'nationalitat', 'nationalitaet']],
  ['street', ['straat', 'straatnaam', 'adres', 'street', 'streetname', 'address', 'addressline1', 'adresregel1', 'strasse', 'adresse']],
  ['houseNumber', ['huisnummer', 'huisnr', 'housenumber', 'houseno', 'hausnummer', 'hausnr']],
  ['houseNumberAddition', ['toevoeging', 'huisnummertoevoeging', 'addition', 'housenumberaddition', 'zusatz']],
  ['postalCode', ['postcode', 'zipcode', 'zip', 'postalcode', 'postal', 'plz', 'postleitzahl']],
  ['locality', ['woonplaats', 'plaats', 'stad', 'vestigingsplaats', 'city', 'town', 'locality', 'ort', 'wohnort', 'stadt']],
  ['country', ['land', 'country', 'countrycode', 'landcode', 'staat']],
  ['email', ['email', 'emailadres', 'mail', 'emailaddress', 'emailadresse']],
  ['mobile', ['mobiel', 'mobielnummer', 'gsm', 'mobile', 'mobilephone', 'cell', 'handy', 'mobilnummer']],
  ['phone', ['telefoon', 'telefoonnummer', 'tel', 'telnr', 'phone', 'phonenumber', 'telephone', 'telefon', 'telefonnummer']],
  ['incomeAmount', ['inkomen', 'brutoinkomen', 'income', 'salary', 'salaris', 'einkommen', 'gehalt', 'annualincome']],
  ['incomeFrequency', ['inkomenfrequentie', 'frequentie', 'incomefrequency', 'frequency', 'periode', 'zahlungsintervall']],
  ['active', ['actief', 'active', 'isactive', 'aktiv', 'status']],
  ['address', ['adres', 'address', 'adresse', 'vestigingsadres', 'bezoekadres']],
];

/** A header compared as the dictionary writes it: lower case, no accents, letters and digits only. */
export function normaliseHeader(header: string): string {
  return header
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

const BY_NAME = new Map<string, Role>();
for (const [role, names] of HEADER_ROLES) for (const n of names) if (!BY_NAME.has(n)) BY_NAME.set(n, role);

/**
 * The role of a column by its header (for a nested path, by its last part: `adres.postcode`).
 * @example roleOf('Geboorte-datum') // 'dateOfBirth'
 */
export function roleOf(column: string): Role | undefined {
  const parts = column.split('.').filter((p) => !/^\d+$/.test(p));
  return BY_NAME.get(normaliseHeader(column)) ?? BY_NAME.get(normaliseHeader(parts[parts.length - 1] ?? column));
}

/** Sex codes of legacy exports → the platform's (Dutch, English, German). */
export const SEX_CODES: Readonly<Record<string, string>> = {
  M: 'male',
  MAN: 'male',
  MALE: 'male',
  MANNELIJK: 'male',
  H: 'male',
  V: 'female',
  VROUW: 'female',
  VROUWELIJK: 'female',
  F: 'female',
  FEMALE: 'female',
  W: 'female',
  WEIBLICH: 'female',
  O: 'unknown',
  ONBEKEND: 'unknown',
  U: 'unknown',
  UNKNOWN: 'unknown',
  X: 'other',
  D: 'other',
  DIVERS: 'other',
  OTHER: 'other',
};

/** Income frequencies of legacy exports → the platform's. */
export const FREQUENCY_CODES: Readonly<Record<string, string>> = {
  MND: 'Monthly',
  MAAND: 'Monthly',
  MAANDELIJKS: 'Monthly',
  M: 'Monthly',
  MONTHLY: 'Monthly',
  MONATLICH: 'Monthly',
  JR: 'Yearly',
  JAAR: 'Yearly',
  JAARLIJKS: 'Yearly',
  J: 'Yearly',
  Y: 'Yearly',
  YEARLY: 'Yearly',
  ANNUAL: 'Yearly',
  JAHRLICH: 'Yearly',
  WK: 'Weekly',
  WEEK: 'Weekly',
  WEKELIJKS: 'Weekly',
  WEEKLY: 'Weekly',
  '4WK': 'FourWeekly',
  '4WEKEN': 'FourWeekly',
  FOURWEEKLY: 'FourWeekly',
  KW: 'Quarterly',
  KWARTAAL: 'Quarterly',
  Q: 'Quarterly',
  QUARTERLY: 'Quarterly',
  HALFJAAR: 'HalfYearly',
  HALFYEARLY: 'HalfYearly',
};

/** Country names, adjectives and ISO-3 codes of legacy exports → ISO 3166 alpha-2. */
export const COUNTRY_CODES: Readonly<Record<string, string>> = {
  NL: 'NL',
  NLD: 'NL',
  NEDERLAND: 'NL',
  NEDERLANDS: 'NL',
  NETHERLANDS: 'NL',
  HOLLAND: 'NL',
  DUTCH: 'NL',
  NIEDERLANDE: 'NL',
  BE: 'BE',
  BEL: 'BE',
  BELGIE: 'BE',
  BELG: 'BE',
  BELGISCH: 'BE',
  BELGIUM: 'BE',
  BELGIAN: 'BE',
  BELGIEN: 'BE',
  DE: 'DE',
  DEU: 'DE',
  DUITSLAND: 'DE',
  DUITS: 'DE',
  GERMANY: 'DE',
  GERMAN: 'DE',
  DEUTSCHLAND: 'DE',
  DEUTSCH: 'DE',
  FR: 'FR',
  FRA: 'FR',
  FRANKRIJK: 'FR',
  FRANS: 'FR',
  FRANCE: 'FR',
  FRENCH: 'FR',
  GB: 'GB',
  GBR: 'GB',
  UK: 'GB',
  ENGELAND: 'GB',
  BRITS: 'GB',
  'UNITED KINGDOM': 'GB',
  TR: 'TR',
  TUR: 'TR',
  TURKIJE: 'TR',
  TURKS: 'TR',
  TURKEY: 'TR',
  MA: 'MA',
  MAR: 'MA',
  MAROKKO: 'MA',
  MAROKKAANS: 'MA',
  MOROCCO: 'MA',
  PL: 'PL',
  POL: 'PL',
  POLEN: 'PL',
  POOLS: 'PL',
  POLAND: 'PL',
  ES: 'ES',
  SPANJE: 'ES',
  SPAIN: 'ES',
  IT: 'IT',
  ITALIE: 'IT',
  ITALY: 'IT',
  SR: 'SR',
  SURINAME: 'SR',
  SURINAAMS: 'SR',
  US: 'US',
  USA: 'US',
  VS: 'US',
  AT: 'AT',
  OOSTENRIJK: 'AT',
  AUSTRIA: 'AT',
  OSTERREICH: 'AT',
  CH: 'CH',
  ZWITSERLAND: 'CH',
  SWITZERLAND: 'CH',
  SCHWEIZ: 'CH',
  LU: 'LU',
  LUXEMBURG: 'LU',
  LUXEMBOURG: 'LU',
};

/** A legacy code looked up in a table by its upper-cased, accent-free form. */
export function lookupCode(table: Readonly<Record<string, string>>, value: string): string | undefined {
  const key = value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .trim()
    .toUpperCase();
  return table[key];
}
