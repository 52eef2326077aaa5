/**
 * The `country` and `nationality` transforms: whatever a legacy export writes for a country
 * (`DE`, `DEU`, `276`, `Deutschland`, `Allemagne`, `Duitsland`, `D`), as its ISO 3166 alpha-2
 * code. The names come from i18n-iso-countries (a maintained data set) in the languages listed
 * below; the legacy forms that are no ISO code nor name (vehicle codes, `UK`, `Holland`) and the
 * demonyms `nationality` reads are the two small tables here, each documented in
 * docs/mappings.md. Everything is normalised the same way (case, accents, punctuation), and the
 * lookup is one Map built once per process, so a row costs one normalisation and one `get`.
 */
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';

/** Languages whose country names are read (i18n-iso-countries locale files). */
export const COUNTRY_NAME_LANGUAGES = ['en', 'nl', 'de', 'fr', 'es', 'it', 'pt', 'pl', 'da', 'sv', 'cs'] as const;

/**
 * Official long forms and common colloquial names, which the data set's short names do not
 * hold: `Grand-Duché de Luxembourg`, `Bundesrepublik Deutschland`, `Republic of Ireland`, `Eire`,
 * `Česká republika`, `The Netherlands`. Europe's countries and the few others exports hold.
 */
export const LONG_AND_COLLOQUIAL_FORMS: Readonly<Record<string, readonly string[]>> = {
  IE: ['Republic of Ireland', 'Irish Republic', 'Eire', 'Éire', 'Poblacht na hÉireann', 'République d’Irlande', 'Republiek Ierland'],
  LU: ['Grand-Duché de Luxembourg', 'Grand Duchy of Luxembourg', 'Großherzogtum Luxemburg', 'Groothertogdom Luxemburg', 'Lëtzebuerg'],
  DE: ['Bundesrepublik Deutschland', 'Federal Republic of Germany', 'République fédérale d’Allemagne', 'Bondsrepubliek Duitsland', 'BRD'],
  NL: ['The Netherlands', 'Kingdom of the Netherlands', 'Koninkrijk der Nederlanden', 'Royaume des Pays-Bas', 'Königreich der Niederlande'],
  BE: ['Kingdom of Belgium', 'Royaume de Belgique', 'Koninkrijk België', 'Königreich Belgien'],
  FR: ['French Republic', 'République française', 'Franse Republiek', 'Französische Republik'],
  AT: ['Republic of Austria', 'Republik Österreich', 'République d’Autriche'],
  CH: [
    'Swiss Confederation',
    'Schweizerische Eidgenossenschaft',
    'Confédération suisse',
    'Confederazione Svizzera',
    'Confederaziun svizra',
    'Helvetia',
  ],
  CZ: ['Czech Republic', 'Česká republika', 'Česko', 'République tchèque', 'Tschechische Republik', 'Tsjechische Republiek'],
  SK: ['Slovak Republic', 'Slovenská republika', 'Slovensko'],
  ES: ['Kingdom of Spain', 'Reino de España', 'Royaume d’Espagne', 'Königreich Spanien'],
  IT: ['Italian Republic', 'Repubblica Italiana', 'République italienne', 'Italienische Republik'],
  PT: ['Portuguese Republic', 'República Portuguesa'],
  PL: ['Republic of Poland', 'Rzeczpospolita Polska', 'Polska', 'République de Pologne', 'Republik Polen'],
  SE: ['Kingdom of Sweden', 'Konungariket Sverige', 'Sverige'],
  DK: ['Kingdom of Denmark', 'Kongeriget Danmark', 'Danmark'],
  NO: ['Kingdom of Norway', 'Kongeriket Norge', 'Norge', 'Noreg'],
  FI: ['Republic of Finland', 'Suomen tasavalta', 'Suomi'],
  GR: ['Hellenic Republic', 'Hellas', 'Ellada'],
  HU: ['Hungary', 'Magyarország'],
  GB: ['United Kingdom of Great Britain and Northern Ireland', 'Great Britain', 'Britain', 'U.K.', 'G.B.'],
  US: ['United States of America', 'U.S.A.', 'U.S.', 'America', 'Vereinigte Staaten von Amerika'],
  LI: ['Principality of Liechtenstein', 'Fürstentum Liechtenstein'],
  MC: ['Principality of Monaco', 'Principauté de Monaco'],
  TR: ['Republic of Turkey', 'Türkiye', 'Republic of Türkiye'],
  MA: ['Kingdom of Morocco', 'Royaume du Maroc'],
};

/**
 * Legacy forms an export uses that are neither an ISO code nor a country's name: international
 * vehicle registration codes where they differ from alpha-2 (`D`, `CH` is both), `UK`, the
 * nations of the United Kingdom, `Holland`, and `EL` (the EU's code for Greece).
 */
export const LEGACY_COUNTRY_FORMS: Readonly<Record<string, string>> = {
  A: 'AT',
  B: 'BE',
  D: 'DE',
  E: 'ES',
  F: 'FR',
  H: 'HU',
  I: 'IT',
  L: 'LU',
  M: 'MT',
  N: 'NO',
  P: 'PT',
  S: 'SE',
  V: 'VA',
  FL: 'LI',
  SLO: 'SI',
  RSM: 'SM',
  CDN: 'CA',
  UK: 'GB',
  EL: 'GR',
  ENGLAND: 'GB',
  SCOTLAND: 'GB',
  WALES: 'GB',
  'NORTHERN IRELAND': 'GB',
  HOLLAND: 'NL',
};

/**
 * Nationalities written as a demonym, in Dutch, English, German and French (the forms of both
 * genders): the EU countries exports from the Benelux, Germany and France mostly hold, the
 * United Kingdom, Ireland, the United States, Switzerland, Turkey and Morocco.
 */
export const DEMONYMS: Readonly<Record<string, readonly string[]>> = {
  NL: [
    'Nederlands',
    'Nederlandse',
    'Nederlander',
    'Dutch',
    'niederländisch',
    'niederländische',
    'Niederländer',
    'néerlandais',
    'néerlandaise',
  ],
  BE: ['Belgisch', 'Belgische', 'Belg', 'Belgian', 'belgisch', 'Belgier', 'belge'],
  DE: ['Duits', 'Duitse', 'German', 'deutsch', 'deutsche', 'deutscher', 'allemand', 'allemande'],
  FR: ['Frans', 'Franse', 'French', 'französisch', 'französische', 'Franzose', 'français', 'française'],
  LU: ['Luxemburgs', 'Luxemburgse', 'Luxembourgish', 'luxemburgisch', 'luxemburgische', 'luxembourgeois', 'luxembourgeoise'],
  GB: ['Brits', 'Britse', 'British', 'britisch', 'britische', 'Brite', 'britannique'],
  IE: ['Iers', 'Ierse', 'Irish', 'irisch', 'irische', 'Ire', 'irlandais', 'irlandaise'],
  US: ['Amerikaans', 'Amerikaanse', 'American', 'amerikanisch', 'amerikanische', 'Amerikaner', 'américain', 'américaine'],
  AT: ['Oostenrijks', 'Oostenrijkse', 'Austrian', 'österreichisch', 'österreichische', 'Österreicher', 'autrichien', 'autrichienne'],
  CH: ['Zwitsers', 'Zwitserse', 'Swiss', 'schweizerisch', 'schweizerische', 'Schweizer', 'suisse'],
  IT: ['Italiaans', 'Italiaanse', 'Italian', 'italienisch', 'italienische', 'Italiener', 'italien', 'italienne'],
  ES: ['Spaans', 'Spaanse', 'Spanish', 'spanisch', 'spanische', 'Spanier', 'espagnol', 'espagnole'],
  PT: ['Portugees', 'Portugese', 'Portuguese', 'portugiesisch', 'portugiesische', 'Portugiese', 'portugais', 'portugaise'],
  PL: ['Pools', 'Poolse', 'Polish', 'polnisch', 'polnische', 'Pole', 'polonais', 'polonaise'],
  TR: ['Turks', 'Turkse', 'Turkish', 'türkisch', 'türkische', 'Türke', 'turc', 'turque'],
  MA: ['Marokkaans', 'Marokkaanse', 'Moroccan', 'marokkanisch', 'marokkanische', 'Marokkaner', 'marocain', 'marocaine'],
};

/**
 * How every country form is compared: lower case, accents dropped, `ß` as `ss`, punctuation as
 * one space. `Côte d'Ivoire` → `cote d ivoire`, `Straße` → `strasse`.
 */
export function normaliseCountryName(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A normalised form that two countries share (`congo`: CG and CD) reads as neither. */
type Entry = string | { ambiguous: string[] };

function add(map: Map<string, Entry>, form: string, code: string): void {
  const key = normaliseCountryName(form);
  if (key === '') return;
  const had = map.get(key);
  if (had === undefined) map.set(key, code);
  else if (typeof had === 'string') {
    if (had !== code) map.set(key, { ambiguous: [had, code] });
  } else if (!had.ambiguous.includes(code)) had.ambiguous.push(code);
}

let countryForms: Map<string, Entry> | undefined;

/** Codes, numbers, names in every listed language, legacy forms: built on first use, then shared. */
function baseForms(): Map<string, Entry> {
  if (countryForms) return countryForms;
  const require = createRequire(import.meta.url);
  for (const lang of COUNTRY_NAME_LANGUAGES) countries.registerLocale(require(`i18n-iso-countries/langs/${lang}.json`));
  const map = new Map<string, Entry>();
  // ISO codes first: a name in some language that equals a code does not make it ambiguous.
  for (const [alpha2, alpha3] of Object.entries(countries.getAlpha2Codes() as Record<string, string>)) {
    map.set(normaliseCountryName(alpha3), alpha2);
    map.set(normaliseCountryName(alpha2), alpha2);
  }
  for (const [numeric, alpha2] of Object.entries(countries.getNumericCodes() as Record<string, string>)) {
    map.set(numeric, alpha2);
    map.set(String(Number(numeric)), alpha2); // 276 written as a number, without its leading zeros
  }
  const codes = new Set(map.keys());
  for (const lang of COUNTRY_NAME_LANGUAGES) {
    for (const [alpha2, names] of Object.entries(countries.getNames(lang, { select: 'all' }))) {
      for (const name of names) if (!codes.has(normaliseCountryName(name))) add(map, name, alpha2);
    }
  }
  for (const [alpha2, forms] of Object.entries(LONG_AND_COLLOQUIAL_FORMS)) for (const f of forms) map.set(normaliseCountryName(f), alpha2);
  for (const [form, alpha2] of Object.entries(LEGACY_COUNTRY_FORMS)) map.set(normaliseCountryName(form), alpha2);
  countryForms = map;
  return map;
}

/** Whether `code` is an ISO 3166 alpha-2 code. */
export function isCountryCode(code: string): boolean {
  return countries.isValid(code) && /^[A-Z]{2}$/.test(code);
}

/** What a resolver makes of a value: the alpha-2 code, or why there is none. */
export type CountryReading = string | { unknown: true } | { ambiguous: string[] };

/**
 * A resolver from any country form to its ISO 3166 alpha-2 code. `nationality` adds the
 * demonyms; `extra` the mapping's own legacy forms (`{ ENG: GB }`), which win over the rest.
 * Throws when an `extra` maps to no ISO code. Build it once (at compile time): the shared
 * tables are copied into one Map per resolver.
 * @example countryResolver()('Allemagne') // 'DE'
 *          countryResolver({ nationality: true })('Nederlandse') // 'NL'
 */
export function countryResolver(
  options: { nationality?: boolean; extra?: Record<string, string> } = {},
): (value: string) => CountryReading {
  const map = new Map(baseForms());
  if (options.nationality) {
    for (const [alpha2, names] of Object.entries(DEMONYMS)) for (const n of names) map.set(normaliseCountryName(n), alpha2);
  }
  for (const [form, alpha2] of Object.entries(options.extra ?? {})) {
    if (!isCountryCode(alpha2))
      throw new Error(`extra maps ${JSON.stringify(form)} to ${JSON.stringify(alpha2)}, which is no ISO 3166 alpha-2 code`);
    map.set(normaliseCountryName(form), alpha2);
  }
  const unknown = { unknown: true as const };
  return (value) => {
    const hit = map.get(normaliseCountryName(value));
    if (hit === undefined) return unknown;
    return typeof hit === 'string' ? hit : { ambiguous: hit.ambiguous };
  };
}
