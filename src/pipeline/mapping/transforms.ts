/**
 * The transforms legacy data needs, as pure functions (each testable alone), and the compiler
 * that turns a declared transform into a step once, before any row is read: formats and
 * regular expressions are compiled here, never per row. The transforms with tables or a
 * library of their own live beside it in transforms/: dates, phone numbers, countries.
 */
import type { Transform } from './schema.js';
import { TransformFailure } from './transforms/failure.js';
import { compileDate, compileDateFormat, excelSerialDate, type DateSpec } from './transforms/date.js';
import { readPostcode } from './transforms/postcode.js';
import { compilePhone, readPhone, type PhoneAnswers, type PhoneStep } from './transforms/phone.js';
import { countryResolver, type CountryReading } from './transforms/country.js';

export { TransformFailure, compileDate, compileDateFormat, excelSerialDate, readPhone, countryResolver };

/** A row (or, inside an `each`, the array item) as the mapping reads it. */
export type Row = Record<string, unknown>;

/**
 * A compiled transform: value in, value out, or a failure. Empty input never reaches it (except
 * `default`). Most steps read only the value; one that reads another column of the row (a phone
 * number's region) gets the row as its second argument.
 */
export type Step = (value: unknown, row: Row) => unknown;

/** A compiled transform, and for a phone number what it will ask libphonenumber (to be asked ahead, see PhoneAnswers). */
export interface CompiledStep {
  step: Step;
  acceptsEmpty: boolean;
  ask?: PhoneStep['ask'];
}

/** How a transform that reads another column gets at it: the compiler registers the column and returns its reader. */
export type ColumnReader = (column: string) => { name: string; get: (row: Row) => unknown };

/** Reads a column of the row by its plain name: for checking a declaration, where no row is read. */
const plainColumn: ColumnReader = (column) => ({ name: column, get: (row) => row[column] });

// ---------------------------------------------------------------------------------------------
// Text

/**
 * Lower case with a capital at the start and after a space, '-', "'", '’' or '.'; Dutch: the
 * digraph IJ is capitalised as a whole (ijsbrand → IJsbrand). Exactly
 * `s.toLowerCase().replace(/(^|[\s\-'’.])(ij|\p{L})/gu, (_, sep, ch) => sep + ch.toUpperCase())`,
 * written as a loop over char codes because that replace, one callback per word, took twice as
 * long (0.72 against 0.34 µs on the sample's names; test/unit/pipeline-mapping.test.ts holds
 * the two to the same results).
 * @example titleCase('jan-pieter VAN dijk') // 'Jan-Pieter Van Dijk'
 */
export function titleCase(s: string): string {
  const lower = s.toLowerCase();
  let out = '';
  let copied = 0; // lower[copied…] is not in `out` yet
  let wordStart = true; // at the start or after a separator
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if (wordStart) {
      let capital: string | undefined;
      let width = 1;
      if (c >= 0x61 && c <= 0x7a) {
        if (c === 0x69 && lower.charCodeAt(i + 1) === 0x6a) [capital, width] = ['IJ', 2];
        else capital = String.fromCharCode(c - 32);
      } else if (c >= 0x80) {
        const ch = String.fromCodePoint(lower.codePointAt(i)!);
        if (LETTER.test(ch)) [capital, width] = [ch.toUpperCase(), ch.length];
      }
      if (capital !== undefined) {
        out += lower.slice(copied, i) + capital;
        i += width - 1;
        copied = i + 1;
        wordStart = false;
        continue;
      }
    }
    wordStart = c === 0x2d || c === 0x27 || c === 0x2019 || c === 0x2e || isSpaceCode(c);
  }
  return copied === 0 ? lower : out + lower.slice(copied);
}

const LETTER = /\p{L}/u;

/** Whether a UTF-16 code unit is whitespace as `\s` reads it. */
function isSpaceCode(c: number): boolean {
  return (
    c === 0x20 ||
    (c >= 0x09 && c <= 0x0d) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Runs of whitespace as one space, none at the ends: `s.replace(/\s+/g, ' ').trim()`. Most
 * legacy values are clean already (single spaces between words), and are returned as they are
 * after one look at their char codes (0.17 against 0.25 µs; eight columns a person use it).
 * @example collapseSpaces('  Jan \t  Pieter ') // 'Jan Pieter'
 */
export function collapseSpaces(s: string): string {
  let afterSpace = true; // a space at the start is one too many
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x20) {
      if (afterSpace) return s.replace(/\s+/g, ' ').trim();
      afterSpace = true;
    } else if (c < 0x20 || (c >= 0xa0 && isSpaceCode(c))) return s.replace(/\s+/g, ' ').trim();
    else afterSpace = false;
  }
  return afterSpace && s.length > 0 ? s.replace(/\s+/g, ' ').trim() : s;
}

/**
 * Initials from first names, Dutch style: "Jan Pieter" → "J.P.", "IJsbrand" → "IJ.",
 * "jan-willem" → "J.W.".
 * @example initials('Jan Pieter') // 'J.P.'
 */
export function initials(firstNames: string): string {
  let out = '';
  for (const part of firstNames.split(/[\s\-.]+/)) {
    if (!part) continue;
    out += /^ij/i.test(part) ? 'IJ.' : `${part[0]!.toUpperCase()}.`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Numbers

export interface NumberFormat {
  decimal: ',' | '.';
  thousands: '.' | ',' | ' ' | "'" | '';
}

/**
 * Compiles a number format into a parser: "1.234,56" → 1234.56 with decimal "," and thousands ".".
 * Accepts exactly `^[-+]?(\d{1,3}(T\d{3})+|\d+)(D\d+)?$` (T the thousands separator, when there
 * is one; D the decimal one), read as a loop over char codes: the regular expression with its
 * match array and the separators split out took twice as long (0.63 against 0.31 µs an amount;
 * test/unit/pipeline-mapping.test.ts holds the two to the same results).
 */
export function compileNumberFormat(f: NumberFormat): (text: string) => number | undefined {
  if (f.decimal === f.thousands) throw new Error('number format: decimal and thousands separators must differ');
  const T = f.thousands ? f.thousands.charCodeAt(0) : -1;
  const D = f.decimal.charCodeAt(0);
  const isDigit = (c: number) => c >= 0x30 && c <= 0x39; // NaN (past the end) is none
  // A space separator is any of the spaces typesetting uses between groups (no-break, narrow
  // no-break: French and Czech exports), an apostrophe also the typographic one (Swiss exports).
  const isT =
    T === 0x20
      ? (c: number) => c === 0x20 || c === 0xa0 || c === 0x202f
      : T === 0x27
        ? (c: number) => c === 0x27 || c === 0x2019
        : (c: number) => c === T;
  return (text) => {
    const n = text.length;
    const sign = text.charCodeAt(0);
    let i = sign === 0x2d || sign === 0x2b ? 1 : 0;
    const start = i;
    while (isDigit(text.charCodeAt(i))) i++;
    if (i === start) return undefined;
    let whole = text.slice(start, i);
    if (isT(text.charCodeAt(i))) {
      // Grouped: one to three digits, then groups of exactly three.
      if (i - start > 3) return undefined;
      while (isT(text.charCodeAt(i))) {
        if (!isDigit(text.charCodeAt(i + 1)) || !isDigit(text.charCodeAt(i + 2)) || !isDigit(text.charCodeAt(i + 3))) return undefined;
        whole += text.slice(i + 1, i + 4);
        i += 4;
      }
      if (isDigit(text.charCodeAt(i))) return undefined;
    }
    let fraction = '';
    if (i < n) {
      if (text.charCodeAt(i) !== D) return undefined;
      const from = ++i;
      while (isDigit(text.charCodeAt(i))) i++;
      if (i === from || i < n) return undefined;
      fraction = `.${text.slice(from, i)}`;
    }
    const value = Number(`${sign === 0x2d ? '-' : ''}${whole}${fraction}`);
    return Number.isFinite(value) ? value : undefined;
  };
}

// ---------------------------------------------------------------------------------------------
// Phone numbers, e-mail, postcodes

/**
 * A phone number as E.164, or `undefined` (for mapping scripts; the `phone` transform says why).
 * `region`: of a number written without an international prefix; without one only
 * international numbers are read.
 * @example normalisePhone('06-12 34 56 78', 'NL') // '+31612345678'
 */
export function normalisePhone(text: string, region?: string): string | undefined {
  const out = readPhone(text, region);
  return typeof out === 'string' ? out : undefined;
}

const EMAIL_LOCAL = /^[^\s@"(),:;<>[\]\\]+$/;
const EMAIL_DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/;

/**
 * Trims an e-mail address and lower-cases its domain; `undefined` when it is not an address.
 * @example normaliseEmail(' Jan.Jansen@Example.NL ') // 'Jan.Jansen@example.nl'
 */
export function normaliseEmail(text: string): string | undefined {
  const s = text.trim();
  const at = s.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1).toLowerCase();
  if (!EMAIL_LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return undefined;
  return EMAIL_DOMAIN.test(domain) ? `${local}@${domain}` : undefined;
}

const POSTCODE_NL = /^([1-9]\d{3})\s?([A-Za-z]{2})$/;
/** PostNL never gives out these letter pairs, so a postcode holding one is not a real address. */
const UNISSUED_POSTCODE_LETTERS = new Set(['SA', 'SD', 'SS']);

/** Dutch postcode: "1234ab" → "1234 AB"; `undefined` when it is not one (no leading zero, not SA/SD/SS). */
export function postcodeNl(text: string): string | undefined {
  const m = POSTCODE_NL.exec(text.trim());
  if (!m) return undefined;
  const letters = m[2]!.toUpperCase();
  return UNISSUED_POSTCODE_LETTERS.has(letters) ? undefined : `${m[1]} ${letters}`;
}

/** Why `postcodeNl` refused a value: the shape, or a letter pair that is never issued (which needs its own advice). */
function postcodeNlProblem(text: string): string {
  const m = POSTCODE_NL.exec(text.trim());
  if (m && UNISSUED_POSTCODE_LETTERS.has(m[2]!.toUpperCase())) {
    return 'not a Dutch postcode: the letters SA, SD and SS are never issued (to keep such values, use [collapse-spaces, upper] and a pattern check instead of postcode-nl)';
  }
  return 'not a Dutch postcode, expected 1234 AB';
}

// ---------------------------------------------------------------------------------------------
// The compiler

export type CodeTables = Record<string, Record<string, string | null>>;

const asText = (v: unknown): string => (typeof v === 'string' ? v : String(v));

/** The declared date as one spec: the shorthand `{ date: [dd-mm-yyyy, d-m-yyyy] }` or the object form. */
function dateSpec(date: Extract<Transform, { date: unknown }>['date']): DateSpec {
  if (typeof date === 'string') return { formats: [date] };
  if (Array.isArray(date)) return { formats: date };
  return { ...date, formats: typeof date.formats === 'string' ? [date.formats] : date.formats };
}

/** A country or nationality step: the alpha-2 code, or UNKNOWN_CODE naming what was expected. */
function countryStep(what: 'country' | 'nationality', extra?: Record<string, string>): Step {
  const resolve = countryResolver({ nationality: what === 'nationality', ...(extra ? { extra } : {}) });
  const expected =
    what === 'country'
      ? 'expected an ISO 3166 code (DE, DEU, 276), a country name (Germany, Deutschland, Allemagne, Duitsland) or a legacy form (D, UK, Holland)'
      : 'expected an ISO 3166 code, a country name or a nationality (Dutch, Nederlandse, deutsch, française)';
  return (v) => {
    const read: CountryReading = resolve(asText(v));
    if (typeof read === 'string') return read;
    if ('ambiguous' in read)
      return new TransformFailure(
        'UNKNOWN_CODE',
        `not one ${what}: the name stands for ${read.ambiguous.join(' and ')}; say which with { ${what}: { extra: { … } } }`,
      );
    return new TransformFailure('UNKNOWN_CODE', `unknown ${what}, ${expected}`);
  };
}

const memo = <T>(make: () => T): (() => T) => {
  let made: T | undefined;
  return () => (made ??= make());
};

/** A postcode read by the country of its row (`countryColumn`, read as the country transform reads it), else `country`. */
function postcodeStep(
  spec: { countryColumn?: string | undefined; country?: string | undefined },
  column: ColumnReader,
  countries: () => (value: string) => CountryReading,
): Step {
  const from = spec.countryColumn === undefined ? undefined : column(spec.countryColumn);
  return (v, row) => {
    let country = spec.country;
    if (from) {
      const cell = from.get(row);
      const read = cell === undefined || cell === null || cell === '' ? undefined : countries()(asText(cell).trim());
      if (typeof read === 'string') country = read;
    }
    // A Dutch postcode is checked as postcode-nl checks it; others by their country's digits.
    return country === 'NL' ? NAMED['postcode-nl'](v, row) : readPostcode(asText(v), country);
  };
}

/** The country resolver is built once per process and copied per step; a mapping without country steps never builds it. */
const sharedCountryResolver = (() => {
  let resolver: ((value: string) => CountryReading) | undefined;
  return () => (resolver ??= countryResolver());
})();

/**
 * Compiles one declared transform into a step. Throws (at load time) when the declaration
 * itself is wrong: an unknown code table, a bad date format, a bad regular expression.
 * `column` registers and reads a column the transform reads besides its value (a phone's
 * `regionColumn`); without it, columns are read by their plain names. `phones`: where phone
 * steps take their parses (answered ahead), else they make them.
 */
export function compileTransform(
  t: Transform,
  codes: CodeTables,
  column: ColumnReader = plainColumn,
  phones?: PhoneAnswers,
  /** `countryExtra`: the mapping's own country forms, read by every step that reads a country column. */
  context: { countryExtra?: Record<string, string> } = {},
): CompiledStep {
  const extra = context.countryExtra && Object.keys(context.countryExtra).length > 0 ? context.countryExtra : undefined;
  // One table: a region or country column is read as the mapping's country transform reads it.
  const countries = extra ? memo(() => countryResolver({ extra })) : sharedCountryResolver;
  if (typeof t === 'string') {
    if (t === 'country' || t === 'nationality') return { step: countryStep(t), acceptsEmpty: false };
    // No region declared: only international numbers (a national one is refused saying so).
    if (t === 'phone') return { ...compilePhone({}, countries, phones?.parse), acceptsEmpty: false };
    return { step: NAMED[t], acceptsEmpty: false };
  }
  if ('postcode' in t) return { step: postcodeStep(t.postcode, column, countries), acceptsEmpty: false };
  if ('country' in t) return { step: countryStep('country', t.country.extra), acceptsEmpty: false };
  if ('nationality' in t) return { step: countryStep('nationality', t.nationality.extra), acceptsEmpty: false };
  if ('default' in t) {
    const fallback = t.default;
    return { step: (v) => (v === '' || v === undefined || v === null ? fallback : v), acceptsEmpty: true };
  }
  if ('code' in t) {
    const { table: name, unknown } = typeof t.code === 'string' ? { table: t.code, unknown: 'reject' as const } : t.code;
    const table = codes[name];
    if (!table)
      throw new Error(
        `unknown code table ${JSON.stringify(name)}; the mapping's codes: declares ${
          Object.keys(codes)
            .map((k) => JSON.stringify(k))
            .join(', ') || 'none'
        }`,
      );
    const map = new Map(Object.entries(table));
    const known = [...map.keys()].slice(0, 12).join(', ') + (map.size > 12 ? ', …' : '');
    return {
      step: (v) => {
        const key = asText(v);
        const hit = map.get(key);
        if (hit !== undefined) return hit === null ? '' : hit;
        if (unknown === 'keep') return key;
        if (unknown === 'empty') return '';
        return new TransformFailure('UNKNOWN_CODE', `unknown code in table ${name}, expected one of ${known}`);
      },
      acceptsEmpty: false,
    };
  }
  if ('date' in t) return { step: compileDate(dateSpec(t.date)), acceptsEmpty: false };
  if ('number' in t) {
    const parse = compileNumberFormat(t.number);
    const example = `1${t.number.thousands}234${t.number.decimal}56`;
    return {
      step: (v) =>
        typeof v === 'number'
          ? v
          : (parse(asText(v).trim()) ?? new TransformFailure('INVALID_FIELD_VALUE', `not a number, expected a number like ${example}`)),
      acceptsEmpty: false,
    };
  }
  if ('split' in t) {
    const { separator, index } = t.split;
    return {
      step: (v) => {
        const parts = asText(v).split(separator);
        if (index === undefined) return parts;
        return parts.at(index) ?? '';
      },
      acceptsEmpty: false,
    };
  }
  if ('join' in t) {
    const sep = t.join;
    return {
      step: (v) => (Array.isArray(v) ? v.filter((x) => x !== '' && x !== undefined && x !== null).join(sep) : v),
      acceptsEmpty: false,
    };
  }
  if ('phone' in t) {
    const { country, region = country, regionColumn, check } = t.phone;
    if (country !== undefined && t.phone.region !== undefined && country !== t.phone.region)
      throw new Error(`phone: region ${t.phone.region} and country ${country} name the same thing; keep one`);
    const phone = compilePhone(
      { region, check, regionColumn: regionColumn === undefined ? undefined : column(regionColumn) },
      countries,
      phones?.parse,
    );
    return { ...phone, acceptsEmpty: false };
  }
  if ('pattern' in t) {
    const regex = new RegExp(t.pattern.regex, 'u');
    const message = t.pattern.message ?? `does not match ${t.pattern.regex}`;
    return { step: (v) => (regex.test(asText(v)) ? v : new TransformFailure('INVALID_FIELD_VALUE', message)), acceptsEmpty: false };
  }
  const regex = new RegExp(t.replace.regex, 'gu');
  const replacement = t.replace.with;
  return { step: (v) => asText(v).replace(regex, replacement), acceptsEmpty: false };
}

/**
 * A transform as one short label, for the chain `plan` shows of a refused value.
 * @example transformLabel({ date: ['dd-mm-yyyy', 'd-m-yyyy'] }) // 'date(dd-mm-yyyy or d-m-yyyy)'
 */
export function transformLabel(t: Transform): string {
  if (typeof t === 'string') return t;
  if ('default' in t) return `default(${JSON.stringify(t.default)})`;
  if ('code' in t) return `code(${typeof t.code === 'string' ? t.code : t.code.table})`;
  if ('date' in t) {
    const spec = dateSpec(t.date);
    const extras = [
      ...(spec.prefer !== undefined ? [`prefer ${spec.prefer}`] : []),
      ...(spec.pivot !== undefined ? [`pivot ${spec.pivot}`] : []),
      ...(spec.excelSerial ? ['Excel serial'] : []),
      ...(spec.zoned ? ['zoned timestamps'] : []),
      ...(spec.unknown?.length ? [`unknown ${spec.unknown.join(', ')}`] : []),
    ];
    return `date(${[spec.formats.join(' or '), ...extras].filter((x) => x !== '').join('; ')})`;
  }
  if ('number' in t) return `number(decimal "${t.number.decimal}", thousands "${t.number.thousands}")`;
  if ('split' in t) return `split(${JSON.stringify(t.split.separator)}${t.split.index !== undefined ? `, ${t.split.index}` : ''})`;
  if ('join' in t) return `join(${JSON.stringify(t.join)})`;
  if ('phone' in t) {
    const { region = t.phone.country, regionColumn, check } = t.phone;
    const parts = [
      ...(regionColumn !== undefined ? [`region from column ${regionColumn}`] : []),
      ...(region !== undefined ? [region] : []),
    ];
    return `phone(${parts.join(', else ') || 'international'}${check === 'possible' ? '; possible' : ''})`;
  }
  if ('country' in t) return 'country(+ extra)';
  if ('postcode' in t)
    return `postcode(${[t.postcode.countryColumn && `country from column ${t.postcode.countryColumn}`, t.postcode.country].filter(Boolean).join(', else ')})`;
  if ('nationality' in t) return 'nationality(+ extra)';
  if ('pattern' in t) return `pattern(/${t.pattern.regex}/)`;
  return `replace(/${t.replace.regex}/)`;
}

const BOOLEANS = new Map<string, boolean>([
  ['true', true],
  ['false', false],
  ['j', true],
  ['n', false],
  ['ja', true],
  ['nee', false],
  ['y', true],
  ['yes', true],
  ['no', false],
  ['1', true],
  ['0', false],
]);

const NAMED: Record<Exclude<Transform, object | 'country' | 'nationality' | 'phone'>, Step> = {
  trim: (v) => (typeof v === 'string' ? v.trim() : v),
  // Composed Unicode: `e` + a combining accent (a Mac's decomposed export) becomes `é`, as the platform compares it.
  nfc: (v) => asText(v).normalize('NFC'),
  upper: (v) => asText(v).toUpperCase(),
  lower: (v) => asText(v).toLowerCase(),
  title: (v) => titleCase(asText(v)),
  'collapse-spaces': (v) => collapseSpaces(asText(v)),
  initials: (v) => initials(asText(v)),
  email: (v) => normaliseEmail(asText(v)) ?? new TransformFailure('INVALID_FIELD_VALUE', 'not an e-mail address, expected name@domain.tld'),
  'postcode-nl': (v) => {
    const text = asText(v);
    return postcodeNl(text) ?? new TransformFailure('INVALID_FIELD_VALUE', postcodeNlProblem(text));
  },
  boolean: (v) =>
    typeof v === 'boolean'
      ? v
      : (BOOLEANS.get(asText(v).trim().toLowerCase()) ??
        new TransformFailure('INVALID_FIELD_VALUE', 'not a yes/no value, expected true/false, j/n, ja/nee, y/n or 1/0')),
};
