/**
 * The header dictionary: the names CRM and core-banking exports give their columns, in Dutch,
 * English, German and French, mapped to the staged-counterparty role they play. Headers are compared
 * normalised (lower case, accents and separators removed: `Geboorte-datum` = `geboortedatum`).
 * Countries and nationalities are read by the mapping's own `country` and `nationality` transforms
 * (src/pipeline/mapping/transforms/country.ts), not by a table here. To teach `init` a new
 * header, add it to the role's list.
 */

import { ABBREVIATED_HEADERS, LANGUAGE_HEADERS } from './dictionary-languages.js';

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
const BASE_ROLES: ReadonlyArray<[Role, readonly string[]]> = [
  [
    'partnerKey',
    ['partnerklantnr', 'partnerklantnummer', 'partnerid', 'partnernr', 'partner', 'spouseid', 'partnercustomerid', 'ehepartnerid'],
  ],
  [
    'directorKey',
    [
      'directorcustomerid',
      'directorclientid',
      'dirigeant',
      'bestuurderid',
      'directeurklantnr',
      'directeur',
      'bestuurder',
      'bestuurderklantnr',
      'director',
      'directorid',
      'geschaftsfuhrer',
      'geschaeftsfuehrer',
    ],
  ],
  [
    'cocNumber',
    [
      'chamberofcommerceno',
      'siren',
      'siret',
      'nsiren',
      'numerosiren',
      'kbo',
      'kbonummer',
      'ondernemingsnummer',
      'numeroentreprise',
      'numerodentreprise',
      'companyregistrationnumber',
      'crn',
      'rcs',
      'handelsregisternr',
      'registernummer',
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
      'raisonsociale',
      'denomination',
      'nomentreprise',
      'societe',
      'entreprise',
      'bedrijf',
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
      'contactid',
      'customer',
      'client',
      'nclient',
      'numeroclient',
      'clientnr',
      'kundennr',
      'kunde',
      'accountid',
      'accountnumber',
      'partyid',
      'cif',
      'cifnumber',
      'idclient',
      'identifiant',
      'referentie',
      'custid',
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
  ['initials', ['initiales', 'voorletters', 'voorl', 'vrl', 'initialen', 'initials', 'initial', 'vorletters']],
  [
    'firstName',
    [
      'prenom',
      'prenoms',
      'forenames',
      'christianname',
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
  [
    'surname',
    [
      'nom',
      'nomdefamille',
      'nomdenaissance',
      'lastnames',
      'achternaam',
      'geslachtsnaam',
      'familienaam',
      'surname',
      'lastname',
      'familyname',
      'nachname',
      'familienname',
    ],
  ],
  ['fullName', ['naam', 'volledigenaam', 'name', 'fullname']],
  ['sex', ['sexe', 'geslacht', 'sex', 'gender', 'geschlecht']],
  ['salutation', ['civilite', 'titre', 'salutationcode', 'aanhef', 'salutation', 'title', 'anrede', 'titel']],
  [
    'dateOfBirth',
    [
      'datedenaissance',
      'datenaissance',
      'naissance',
      'birthdt',
      'gebdat',
      'geboortedatum',
      'gebdatum',
      'geboortedat',
      'dateofbirth',
      'birthdate',
      'dob',
      'birthday',
      'geburtsdatum',
      'geburtstag',
    ],
  ],
  [
    'nationality',
    [
      'nationalite',
      'citizenship',
      'staatsburgerschaft',
      'nationaliteit',
      'nationality',
      'staatsangehorigkeit',
      'staatsangehoerigkeit',
      'nationalitat',
      'nationalitaet',
    ],
  ],
  [
    'street',
    [
      'streetaddress',
      'rue',
      'adresse1',
      'adresseligne1',
      'addressline',
      'straat',
      'straatnaam',
      'adres',
      'street',
      'streetname',
      'address',
      'addressline1',
      'adresregel1',
      'strasse',
      'adresse',
    ],
  ],
  ['houseNumber', ['huisnummer', 'huisnr', 'housenumber', 'houseno', 'hausnummer', 'hausnr']],
  ['houseNumberAddition', ['toevoeging', 'huisnummertoevoeging', 'addition', 'housenumberaddition', 'zusatz']],
  [
    'postalCode',
    [
      'codepostal',
      'cp',
      'postcodezip',
      'zippostalcode',
      'npa',
      'postcode',
      'zipcode',
      'zip',
      'postalcode',
      'postal',
      'plz',
      'postleitzahl',
    ],
  ],
  [
    'locality',
    [
      'ville',
      'commune',
      'localite',
      'towncity',
      'gemeinde',
      'ortschaft',
      'woonplaats',
      'plaats',
      'stad',
      'vestigingsplaats',
      'city',
      'town',
      'locality',
      'ort',
      'wohnort',
      'stadt',
    ],
  ],
  [
    'country',
    [
      'pays',
      'countryofresidence',
      'residencecountry',
      'wohnland',
      'woonland',
      'countrycode',
      'land',
      'country',
      'countrycode',
      'landcode',
      'staat',
    ],
  ],
  [
    'email',
    ['courriel', 'adressemail', 'adresseemail', 'mel', 'mailadresse', 'email', 'emailadres', 'mail', 'emailaddress', 'emailadresse'],
  ],
  [
    'mobile',
    [
      'portable',
      'telportable',
      'mobiletelephone',
      'mobilenumber',
      'natel',
      'mobiel',
      'mobielnummer',
      'gsm',
      'mobile',
      'mobilephone',
      'cell',
      'handy',
      'mobilnummer',
    ],
  ],
  [
    'phone',
    [
      'telephonenumber',
      'telefonnr',
      'numerodetelephone',
      'telephonefixe',
      'homephone',
      'contactnumber',
      'phoneno',
      'telephoneno',
      'telefoon',
      'telefoonnummer',
      'tel',
      'telnr',
      'phone',
      'phonenumber',
      'telephone',
      'telefon',
      'telefonnummer',
    ],
  ],
  [
    'incomeAmount',
    [
      'revenu',
      'revenus',
      'revenuannuel',
      'salaire',
      'jahreseinkommen',
      'bruttoeinkommen',
      'grossincome',
      'jaarinkomen',
      'inkomen',
      'brutoinkomen',
      'income',
      'salary',
      'salaris',
      'einkommen',
      'gehalt',
      'annualincome',
    ],
  ],
  [
    'incomeFrequency',
    [
      'frequence',
      'periodicite',
      'incomeperiod',
      'inkomenfrequentie',
      'frequentie',
      'incomefrequency',
      'frequency',
      'periode',
      'zahlungsintervall',
    ],
  ],
  [
    'active',
    ['statut', 'etat', 'accountstatus', 'customerstatus', 'kundenstatus', 'klantstatus', 'actief', 'active', 'isactive', 'aktiv', 'status'],
  ],
  ['address', ['adres', 'address', 'adresse', 'vestigingsadres', 'bezoekadres']],
];

/** Role → the normalised headers that play it (Dutch, English, German, French, then the further languages and abbreviations). */
export const HEADER_ROLES: ReadonlyArray<[Role, readonly string[]]> = BASE_ROLES.map(([role, names]) => [
  role,
  [...names, ...(LANGUAGE_HEADERS[role] ?? []), ...(ABBREVIATED_HEADERS[role] ?? [])],
]);

/** Letters written as two in headers (`Straße` = `Strasse`), before accents are dropped. */
const LIGATURES: Readonly<Record<string, string>> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd' };

/** Words that only say "number" or "the" beside a header's meaning (`Customer No`, `N° client`, `Chamber of Commerce Nr.`). */
const NOISE = new Set(['no', 'nr', 'n', 'num', 'number', 'nummer', 'numero', 'nro', 'of', 'de', 'du', 'la', 'le', 'the', 'ref']);

/** A header's words: lower case, ligatures spelled out, accents dropped, split at anything not a letter or digit. */
export function headerTokens(header: string): string[] {
  return header
    .toLowerCase()
    .replace(/[ßæœøłđ]/g, (c) => LIGATURES[c] ?? c)
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== '');
}

/** A header compared as the dictionary writes it: lower case, no accents, `ß` as `ss`, letters and digits only. */
export function normaliseHeader(header: string): string {
  return headerTokens(header).join('');
}

/**
 * The forms of a header the dictionary is asked for, best first: all its words; without what
 * stands in brackets (`Annual Income (GBP)`, `Date of Birth (dd/mm/yyyy)`); without the words
 * that only say "number" (`Chamber of Commerce No` → `chamberofcommerce`).
 */
function headerForms(header: string): string[] {
  const words = headerTokens(header.replace(/\([^)]*\)|\[[^\]]*\]/g, ' '));
  const forms = [normaliseHeader(header), words.join(''), words.filter((w) => !NOISE.has(w)).join('')];
  return [...new Set(forms.filter((f) => f !== ''))];
}

const BY_NAME = new Map<string, Role>();
for (const [role, names] of HEADER_ROLES) for (const n of names) if (!BY_NAME.has(n)) BY_NAME.set(n, role);

/** Edits between two strings (Levenshtein), stopping early beyond `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** A role and how the header was placed: `exact`, `holds <name>` or `close to <name>` (a typo). */
export interface RoleMatch {
  role: Role;
  how: string;
}

/**
 * The role of a column by its header (for a nested path, by its last part: `adres.postcode`):
 * an exact dictionary name in any of its forms; else the first role (in dictionary order, so
 * relations come before keys) with a name of six letters or more inside the header; else a name
 * of seven letters or more one edit away (a typo).
 * @example roleMatch('Geboorte-datum') // { role: 'dateOfBirth', how: 'exact' }
 *          roleMatch('Director Customer ID') // { role: 'directorKey', how: 'holds director' }
 */
export function roleMatch(column: string, prefix?: string): RoleMatch | undefined {
  const parts = column.split('.').filter((p) => !/^\d+$/.test(p));
  const last = stripPrefix(parts[parts.length - 1] ?? column, prefix);
  // A nested field is named by its own part first (`address.postcode`: not the `address` around it).
  if (parts.length > 1) return matchForms(headerForms(last)) ?? matchForms(headerForms([...parts.slice(0, -1), last].join('.')));
  return matchForms(headerForms(last));
}

/** The first role a header's forms name: exactly, else holding a long name, else one edit from one. */
function matchForms(forms: string[]): RoleMatch | undefined {
  for (const f of forms) {
    const role = BY_NAME.get(f);
    if (role) return { role, how: 'exact' };
  }
  for (const [role, names] of HEADER_ROLES)
    for (const n of names) if (n.length >= 6 && forms.some((f) => f.includes(n))) return { role, how: `holds ${n}` };
  for (const f of forms) {
    if (f.length < 7) continue;
    for (const [name, role] of BY_NAME) if (name.length >= 7 && distance(f, name, 1) <= 1) return { role, how: `close to ${name}` };
  }
  return undefined;
}

/**
 * The role of a column by its header.
 * @example roleOf('Geboorte-datum') // 'dateOfBirth'
 */
export function roleOf(column: string): Role | undefined {
  return roleMatch(column)?.role;
}

/** A name's candidate program prefix: 2–4 letters before `-` or `_` (`XX-`, `CM_`, `LNC-`), or lower-case letters before a capital (`xxCity`). */
const PREFIX = /^([A-Za-z]{2,4}[-_])(?=\p{L})|^(\p{Ll}{2,3})(?=\p{Lu})/u;

function stripPrefix(name: string, prefix: string | undefined): string {
  return prefix && name.toLowerCase().startsWith(prefix.toLowerCase()) && name.length > prefix.length ? name.slice(prefix.length) : name;
}

/**
 * The program prefix every column of an export carries (`XX-CITY`, `XX-PHONE`, `XX-DOB`; `KL_Naam`):
 * the one that starts at least four in five of the names (at least three), compared without case.
 * Stripped before the names are recognised.
 * @example programPrefix(['XX-CUST-NO', 'XX-DOB', 'XX-CTRY']) // 'XX-'
 */
export function programPrefix(columns: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  // The fields of a list's items (`contacts.0.value`) are the list's, not the program's.
  columns = columns.filter((c) => !/\.\d+\./.test(c));
  for (const c of columns) {
    const name = c.split('.').pop() ?? c;
    const m = PREFIX.exec(name);
    const p = m ? (m[1] ?? m[2]!) : undefined;
    if (p) counts.set(p.toLowerCase(), (counts.get(p.toLowerCase()) ?? 0) + 1);
  }
  const top = [...counts].sort((a, b) => b[1] - a[1])[0];
  return top && top[1] >= 3 && top[1] >= 0.8 * columns.length ? top[0] : undefined;
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
  // French, Spanish, Italian, Portuguese, Polish, Czech, Swedish words (accents folded).
  MASCULIN: 'male',
  FEMININ: 'female',
  HOMME: 'male',
  FEMME: 'female',
  HOMBRE: 'male',
  MUJER: 'female',
  MASCULINO: 'male',
  FEMENINO: 'female',
  FEMININO: 'female',
  MASCHIO: 'male',
  FEMMINA: 'female',
  MEZCZYZNA: 'male',
  KOBIETA: 'female',
  MUZ: 'male',
  ZENA: 'female',
  KVINNA: 'female',
  MANNLICH: 'male',
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

/** A legacy code looked up in a table by its upper-cased, accent-free form. */
export function lookupCode(table: Readonly<Record<string, string>>, value: string): string | undefined {
  const key = value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .trim()
    .toUpperCase();
  return table[key];
}

/** Account and customer statuses of legacy exports → isActive (as the boolean transform reads it). */
export const STATUS_CODES: Readonly<Record<string, string>> = {
  ACTIVE: 'true',
  ACTIEF: 'true',
  AKTIV: 'true',
  ACTIF: 'true',
  OPEN: 'true',
  INACTIVE: 'false',
  INACTIEF: 'false',
  INAKTIV: 'false',
  INACTIF: 'false',
  CLOSED: 'false',
  GESLOTEN: 'false',
  GESCHLOSSEN: 'false',
  FERME: 'false',
  OPGEZEGD: 'false',
  GEKUENDIGT: 'false',
  GEKUNDIGT: 'false',
  ACTIVO: 'true',
  INACTIVO: 'false',
  ATTIVO: 'true',
  INATTIVO: 'false',
  AKTYWNY: 'true',
  NIEAKTYWNY: 'false',
  ATIVO: 'true',
  INATIVO: 'false',
  AKTIVNI: 'true',
  NEAKTIVNI: 'false',
};
