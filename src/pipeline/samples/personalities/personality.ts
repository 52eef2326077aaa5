/**
 * An export *personality*, drawn from a seed: the language its headers are in, how it names its
 * columns (words, abbreviations, a program prefix, units in parentheses, casing), its file
 * format, how it writes dates, amounts, countries and phone numbers, what it uses for "unknown",
 * and whether the income's period and currency are said anywhere. Then its people, row by row,
 * each with the truth: what a correct pipeline stages for that row, and `null` where nothing may
 * be staged (a placeholder date, a period or currency the export never states).
 */
import { birthDate, pad2, phoneNumber, Rng, writePhone } from '../foreign/common.js';
import {
  ABBREVIATIONS,
  COUNTRY_FORMS,
  type FieldRole,
  FIRST_NAMES,
  FREQUENCY_WORDS,
  HEADERS,
  HOMES,
  LANGUAGES,
  type Lang,
  MONTHS,
  PROGRAM_PREFIXES,
  STREETS,
  SURNAMES,
  TOWNS,
} from './vocabulary.js';

export type ExportFormat = 'csv' | 'jsonl' | 'xlsx' | 'fixed-width';
export type Frequency = 'Monthly' | 'Yearly';

/** What a correct pipeline stages for one row; null: nothing may be staged for that field. */
export interface PersonalityTruth {
  key: string;
  /** False for a row that must be refused (a planted defect: no surname). */
  mappable: boolean;
  surname: string;
  sex: 'male' | 'female' | null;
  dateOfBirth: string | null;
  /** E.164. */
  phone: string | null;
  country: string | null;
  postcode: string | null;
  income: { amount: number; currency: string | null; frequency: Frequency | null } | null;
}

export interface Personality {
  seed: number;
  lang: Lang;
  format: ExportFormat;
  naming: { style: 'words' | 'abbreviations'; prefix: string; casing: 'as-is' | 'upper' | 'lower' | 'snake' | 'camel'; units: boolean };
  /** Column header per role present, in file order. */
  columns: Array<[FieldRole, string]>;
  date:
    | { kind: 'text'; format: string; short: boolean }
    | { kind: 'month-name' }
    | { kind: 'timestamp' }
    | { kind: 'cell'; textShare: number; date1904: boolean };
  placeholders: string[];
  amount: { decimal: ',' | '.'; thousands: string; currency: 'header' | 'values' | 'none'; sign: 'overpunch' | 'trailing' | 'none' };
  frequency: 'header-monthly' | 'header-yearly' | 'column' | 'none';
  countryStyle: 'names' | 'iso2' | 'iso3';
  /** JSON Lines: postcodes and phone numbers written as JSON numbers. */
  jsonNumbers: boolean;
  /** Names written in decomposed Unicode (NFD), as some Mac-made exports are. */
  decomposed: boolean;
  home: { countries: readonly string[]; currency: string; symbol: string };
}

const ISO3: Readonly<Record<string, string>> = {
  GB: 'GBR',
  IE: 'IRL',
  US: 'USA',
  NL: 'NLD',
  BE: 'BEL',
  DE: 'DEU',
  AT: 'AUT',
  CH: 'CHE',
  FR: 'FRA',
  LU: 'LUX',
  ES: 'ESP',
  IT: 'ITA',
  PL: 'POL',
  PT: 'PRT',
  CZ: 'CZE',
  SE: 'SWE',
};

/** Writes a header in the export's casing. */
function cased(header: string, casing: Personality['naming']['casing']): string {
  const words = header.split(/[\s_-]+/).filter(Boolean);
  switch (casing) {
    case 'upper':
      return header.toUpperCase();
    case 'lower':
      return header.toLowerCase();
    case 'snake':
      return words.map((w) => w.toLowerCase()).join('_');
    case 'camel':
      return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase())).join('');
    default:
      return header;
  }
}

/** The personality of seed `seed`: the same seed, the same export. */
export function drawPersonality(seed: number): Personality {
  const rng = new Rng(seed * 7919 + 17);
  const lang = rng.pick(LANGUAGES);
  const format = rng.pick<ExportFormat>(['csv', 'csv', 'jsonl', 'xlsx', 'fixed-width']);
  const abbreviated = format === 'fixed-width' || rng.chance(0.3);
  const naming: Personality['naming'] = {
    style: abbreviated ? 'abbreviations' : 'words',
    prefix: format === 'fixed-width' ? rng.pick(['XX-', 'CM-', 'LNC-', 'KL-']) : rng.chance(0.3) ? rng.pick(PROGRAM_PREFIXES) : '',
    casing: abbreviated ? 'upper' : rng.pick(['as-is', 'as-is', 'upper', 'lower', 'snake', 'camel']),
    units: !abbreviated && rng.chance(0.5),
  };
  const frequency = rng.pick<Personality['frequency']>(['header-monthly', 'header-monthly', 'header-yearly', 'column', 'none']);
  const amount: Personality['amount'] =
    format === 'fixed-width'
      ? { decimal: '.', thousands: '', currency: 'none', sign: rng.pick(['overpunch', 'trailing', 'none']) }
      : rng.pick([
          { decimal: '.', thousands: ',', currency: 'header', sign: 'none' },
          { decimal: ',', thousands: '.', currency: 'values', sign: 'none' },
          { decimal: ',', thousands: ' ', currency: 'header', sign: 'none' },
          { decimal: ',', thousands: '\u00a0', currency: 'header', sign: 'none' },
          { decimal: '.', thousands: "'", currency: 'header', sign: 'none' },
          { decimal: ',', thousands: '', currency: 'none', sign: 'none' },
          { decimal: '.', thousands: '', currency: 'values', sign: 'none' },
        ]);
  const date = drawDate(rng, lang, format);
  const placeholders =
    format === 'fixed-width'
      ? rng.pick([['00000000', '99999999'], ['19000101'], ['00000000']])
      : rng.pick([['00000000', '99999999'], ['19000101'], ['1900-01-01'], ['9999-12-31'], [''], ['01/01/1900']]);
  const home = HOMES[lang];
  const p: Personality = {
    seed,
    lang,
    format,
    naming,
    columns: [],
    date,
    placeholders,
    amount,
    frequency,
    countryStyle: format === 'fixed-width' ? rng.pick(['iso2', 'iso3']) : rng.pick(['names', 'names', 'iso2', 'iso3']),
    jsonNumbers: format === 'jsonl' && rng.chance(0.7),
    decomposed: format !== 'fixed-width' && rng.chance(0.2),
    home,
  };
  p.columns = drawColumns(rng, p);
  return p;
}

function drawDate(rng: Rng, lang: Lang, format: ExportFormat): Personality['date'] {
  if (format === 'fixed-width') return { kind: 'text', format: 'yyyymmdd', short: false };
  if (format === 'xlsx' && rng.chance(0.7)) return { kind: 'cell', textShare: rng.pick([0, 0.1]), date1904: rng.chance(0.3) };
  if (format === 'jsonl' && rng.chance(0.5)) return { kind: 'timestamp' };
  if (MONTHS[lang] && rng.chance(0.2)) return { kind: 'month-name' };
  const formats = lang === 'en' ? ['dd/mm/yyyy', 'mm/dd/yyyy', 'yyyy-mm-dd'] : ['dd/mm/yyyy', 'dd.mm.yyyy', 'dd-mm-yyyy', 'yyyy-mm-dd'];
  return { kind: 'text', format: rng.pick(formats), short: rng.chance(0.25) };
}

/** The export's columns, in order, each with its header as this export writes it. */
function drawColumns(rng: Rng, p: Personality): Array<[FieldRole, string]> {
  const roles: FieldRole[] = ['key', 'initials', 'firstName', 'surname', 'sex', 'dateOfBirth', 'street', 'postcode', 'town'];
  roles.push('country', 'phone');
  if (p.format !== 'fixed-width') roles.push('email');
  roles.push('income');
  if (p.frequency === 'column') roles.push('frequency');
  roles.push('status');
  if (rng.chance(0.5)) roles.splice(roles.indexOf('initials'), 1);
  const words = HEADERS[p.lang];
  const abbr = { ...ABBREVIATIONS.en, ...(ABBREVIATIONS[p.lang] ?? {}) };
  return roles.map((role) => {
    let h: string;
    if (p.naming.style === 'abbreviations') {
      const key = role === 'income' ? (p.frequency === 'header-yearly' ? 'incomeYearly' : 'incomeMonthly') : role;
      h = role === 'income' && p.frequency !== 'header-monthly' && p.frequency !== 'header-yearly' ? 'INCOME' : rng.pick(abbr[key]!);
    } else if (role === 'income') {
      const forms =
        p.frequency === 'header-monthly'
          ? words.income.monthly
          : p.frequency === 'header-yearly'
            ? words.income.yearly
            : words.income.plain;
      h = rng.pick(forms);
      if (p.naming.units && p.amount.currency === 'header') h += ` (${rng.chance(0.5) ? p.home.currency : p.home.symbol})`;
    } else {
      h = rng.pick(words[role]);
      if (role === 'dateOfBirth' && p.naming.units && p.date.kind === 'text') h += ` (${p.date.format})`;
    }
    if (role === 'income' && p.amount.currency === 'header' && !/\(/.test(h)) h += ` (${p.home.currency})`;
    const withPrefix = p.naming.prefix + cased(h, p.naming.casing);
    return [role, p.format === 'fixed-width' ? withPrefix.toUpperCase().replace(/[^A-Z0-9-]+/g, '-') : withPrefix];
  });
}

/** A postcode of `country` as its post office writes it. */
function postcode(rng: Rng, country: string): string {
  const L = () => String.fromCharCode(65 + rng.int(0, 25));
  switch (country) {
    case 'GB':
      return `${L()}${L()}${rng.int(1, 20)} ${rng.int(1, 9)}${L()}${L()}`;
    case 'IE':
      return `D${pad2(rng.int(1, 24))} ${L()}${rng.digits(3)}`;
    case 'NL':
      return `${rng.int(1000, 9999)} ${L()}${L()}`;
    case 'PL':
      return `${rng.digits(2)}-${rng.digits(3)}`;
    case 'PT':
      return `${rng.int(1000, 9999)}-${rng.digits(3)}`;
    case 'CZ':
    case 'SE':
      return `${rng.int(100, 999)} ${rng.digits(2)}`;
    case 'BE':
    case 'AT':
    case 'CH':
    case 'LU':
      return String(rng.int(1000, 9999));
    default:
      // Five digits, a leading zero in one in five (Alicante 03001, Dresden 01067, Ain 01000).
      return rng.chance(0.2) ? `0${rng.int(1000, 9999)}` : String(rng.int(10000, 99999));
  }
}

/** How this export writes a country. */
function writeCountry(rng: Rng, p: Personality, country: string): string {
  if (p.countryStyle === 'iso2') return country;
  if (p.countryStyle === 'iso3') return ISO3[country] ?? country;
  return rng.pick(COUNTRY_FORMS[country] ?? [country]);
}

/** One row of the export in neutral form (the writers put it in the file's notation), with its truth. */
export interface PersonRow {
  truth: PersonalityTruth;
  /** Values per role, as text (the writer decides cells and JSON types). */
  text: Partial<Record<FieldRole, string>>;
  dob: { y: number; m: number; d: number } | undefined;
  /** The income in cents as the export states it (per period). */
  incomeCents: number;
  /** The placeholder written instead of the birth date, if any. */
  placeholder: string | undefined;
}

/** The rows of personality `p`: the same personality and count, the same rows. */
export function* personRows(p: Personality, rows: number): Generator<PersonRow> {
  const rng = new Rng(p.seed * 104729 + 3);
  const words = FREQUENCY_WORDS[p.lang];
  for (let i = 0; i < rows; i++) {
    const country = rng.chance(0.8) ? p.home.countries[0]! : rng.pick(p.home.countries);
    const female = rng.chance(0.5);
    const first = rng.pick(FIRST_NAMES[p.lang]);
    const surname = rng.pick(SURNAMES[p.lang]);
    const missingSurname = i > 0 && rng.chance(0.005);
    const dob = birthDate(rng);
    const placeholder = rng.chance(0.03) ? rng.pick(p.placeholders) : undefined;
    const phone = phoneNumber(rng, country);
    const monthly = p.frequency === 'header-monthly' || (p.frequency !== 'header-yearly' && rng.chance(0.7));
    const incomeCents = monthly ? rng.int(150_000, 900_000) : rng.int(1_800_000, 12_000_000);
    const pc = postcode(rng, country);
    const key = p.format === 'fixed-width' ? String(10_000_001 + i) : `${rng.chance(0.5) ? '' : 'C'}${100_001 + i}`;
    const frequency: Frequency | null = p.frequency === 'none' ? null : monthly ? 'Monthly' : 'Yearly';
    const currency = p.amount.currency === 'none' ? null : p.home.currency;
    const nfd = (s: string) => (p.decomposed ? s.normalize('NFD') : s);
    const truth: PersonalityTruth = {
      key,
      mappable: !missingSurname,
      surname,
      sex: female ? 'female' : 'male',
      dateOfBirth: placeholder !== undefined ? null : dob.iso,
      phone: phone.e164,
      country,
      postcode: pc,
      income: { amount: incomeCents / 100, currency, frequency },
    };
    const text: PersonRow['text'] = {
      key,
      initials: `${first[0]}.`,
      firstName: nfd(first),
      surname: missingSurname ? '' : nfd(surname),
      sex: sexWord(p.lang, female),
      street: `${rng.pick(STREETS[p.lang])} ${rng.int(1, 150)}`,
      postcode: pc,
      town: rng.pick(TOWNS[country] ?? ['-']),
      country: writeCountry(rng, p, country),
      phone: writePhone(rng, country, phone.nsn),
      email: `${String(first)
        .normalize('NFD')
        .replace(/[^A-Za-z]/g, '')
        .toLowerCase()}.${i}@example.com`,
      frequency: monthly ? rng.pick(words.monthly) : rng.pick(words.yearly),
      status: rng.pick(['A', 'A', 'A', 'I']),
    };
    yield { truth, text, dob: placeholder !== undefined ? undefined : dob, incomeCents, placeholder };
  }
}

/** Sex as each language's exports write it: letters where they are unambiguous, else words. */
function sexWord(lang: Lang, female: boolean): string {
  const words: Record<Lang, [string, string]> = {
    en: ['M', 'F'],
    nl: ['M', 'V'],
    de: ['M', 'W'],
    fr: ['Masculin', 'Féminin'],
    es: ['Hombre', 'Mujer'],
    it: ['Maschio', 'Femmina'],
    pl: ['Mężczyzna', 'Kobieta'],
    pt: ['Masculino', 'Feminino'],
    cs: ['Muž', 'Žena'],
    sv: ['Man', 'Kvinna'],
  };
  return words[lang][female ? 1 : 0];
}

/** A birth date as text in the export's notation (not for workbook date cells). */
export function writeDate(rng: Rng, p: Personality, d: { y: number; m: number; d: number }): string {
  const iso = `${d.y}-${pad2(d.m)}-${pad2(d.d)}`;
  if (p.date.kind === 'timestamp') {
    // The calendar date in the zone written is the birth date; at UTC it is a day early west of it.
    return rng.pick([
      `${iso}T00:00:00Z`,
      `${iso}T00:00:00.000Z`,
      `${iso}T00:00:00+01:00`,
      `${iso}T00:00:00+02:00`,
      `${iso}T12:00:00-05:00`,
    ]);
  }
  if (p.date.kind === 'month-name') {
    const months = MONTHS[p.lang]!;
    return p.lang === 'de' ? `${d.d}. ${months[d.m - 1]} ${d.y}` : `${d.d} ${months[d.m - 1]} ${d.y}`;
  }
  const f = p.date.kind === 'text' ? p.date.format : 'dd/mm/yyyy';
  const short = p.date.kind === 'text' && p.date.short;
  const dd = short ? String(d.d) : pad2(d.d);
  const mm = short ? String(d.m) : pad2(d.m);
  return f.replace('yyyy', String(d.y)).replace('dd', dd).replace('mm', mm);
}

/** An amount of cents in the export's notation (not for numbers in cells or JSON). */
export function writeAmountText(rng: Rng, p: Personality, cents: number): string {
  const whole = String(Math.floor(cents / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, p.amount.thousands);
  const text = `${whole}${p.amount.decimal}${pad2(cents % 100)}`;
  if (p.amount.currency !== 'values') return text;
  return rng.chance(0.5) ? `${p.home.symbol} ${text}` : `${text} ${p.home.currency}`;
}
