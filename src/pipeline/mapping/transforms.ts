/**
 * The transforms legacy data needs, as pure functions (each testable alone), and the compiler
 * that turns a declared transform into a step once, before any row is read: formats and
 * regular expressions are compiled here, never per row.
 */
import type { Transform } from './schema.js';

/** Result of a step that refused its input; the reason is in `TransformFailure`. */
export class TransformFailure {
  constructor(
    readonly code: 'INVALID_FIELD_VALUE' | 'UNKNOWN_CODE',
    readonly message: string,
  ) {}
}

/** A compiled transform: value in, value out, or a failure. Empty input never reaches it (except `default`). */
export type Step = (value: unknown) => unknown;

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
// Dates

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** A compiled date format: `dd-mm-yyyy` → a matcher giving [year, month, day] positions. */
interface DateFormat {
  format: string;
  regex: RegExp;
  order: ('y' | 'm' | 'd')[];
}

export function compileDateFormat(format: string): DateFormat {
  const order: DateFormat['order'] = [];
  let source = '^';
  const tokens = /yyyy|dd|d|mm|m/y;
  for (let i = 0; i < format.length; ) {
    tokens.lastIndex = i;
    const m = tokens.exec(format);
    if (m) {
      const t = m[0];
      source += t === 'yyyy' ? '(\\d{4})' : t.length === 2 ? '(\\d{2})' : '(\\d{1,2})';
      order.push(t[0] as 'y' | 'm' | 'd');
      i += t.length;
    } else {
      source += format[i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      i++;
    }
  }
  if (!order.includes('y') || !order.includes('m') || !order.includes('d') || order.length !== 3) {
    throw new Error(`date format ${JSON.stringify(format)} must contain a day (dd or d), a month (mm or m) and a year (yyyy) once each`);
  }
  return { format, regex: new RegExp(`${source}$`), order };
}

/**
 * Parses a date in one of the given formats into ISO `yyyy-mm-dd`; `undefined` when no format
 * matches or the date does not exist (31-02-1980).
 * @example parseDate('7-3-1980', [compileDateFormat('d-m-yyyy')]) // '1980-03-07'
 */
export function parseDate(text: string, formats: DateFormat[]): string | undefined {
  for (const f of formats) {
    const m = f.regex.exec(text);
    if (!m) continue;
    let y = 0;
    let mo = 0;
    let d = 0;
    for (let i = 0; i < 3; i++) {
      const n = Number(m[i + 1]);
      const which = f.order[i];
      if (which === 'y') y = n;
      else if (which === 'm') mo = n;
      else d = n;
    }
    if (mo < 1 || mo > 12 || d < 1) return undefined;
    const max = mo === 2 && isLeap(y) ? 29 : DAYS[mo - 1]!;
    if (d > max) return undefined;
    return `${String(y).padStart(4, '0')}-${mo < 10 ? '0' : ''}${mo}-${d < 10 ? '0' : ''}${d}`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Numbers

export interface NumberFormat {
  decimal: ',' | '.';
  thousands: '.' | ',' | ' ' | '';
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
  return (text) => {
    const n = text.length;
    const sign = text.charCodeAt(0);
    let i = sign === 0x2d || sign === 0x2b ? 1 : 0;
    const start = i;
    while (isDigit(text.charCodeAt(i))) i++;
    if (i === start) return undefined;
    let whole = text.slice(start, i);
    if (text.charCodeAt(i) === T) {
      // Grouped: one to three digits, then groups of exactly three.
      if (i - start > 3) return undefined;
      while (text.charCodeAt(i) === T) {
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

const CALLING_CODES: Record<string, string> = {
  NL: '31',
  BE: '32',
  DE: '49',
  FR: '33',
  GB: '44',
  LU: '352',
  ES: '34',
  IT: '39',
  AT: '43',
  CH: '41',
  US: '1',
};

/**
 * Normalises a phone number to E.164. Numbers without an international prefix are read as
 * numbers of `country` (Dutch: 0 + 9 digits). `undefined` when it cannot be a phone number.
 * @example normalisePhone('06-12 34 56 78') // '+31612345678'
 */
export function normalisePhone(text: string, country = 'NL'): string | undefined {
  let s = text.replace(/[\s\-()./]/g, '');
  if (s.startsWith('00')) s = `+${s.slice(2)}`;
  if (s.startsWith('+')) {
    // "+31 (0)6…" written with the trunk zero kept
    if (s.startsWith('+310')) s = `+31${s.slice(4)}`;
    return /^\+[1-9]\d{7,14}$/.test(s) ? s : undefined;
  }
  if (!/^\d+$/.test(s)) return undefined;
  const cc = CALLING_CODES[country.toUpperCase()];
  if (!cc) return undefined;
  if (cc === '31') return /^0\d{9}$/.test(s) ? `+31${s.slice(1)}` : undefined;
  const national = s.replace(/^0/, '');
  return national.length >= 6 && national.length <= 12 ? `+${cc}${national}` : undefined;
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

/**
 * Compiles one declared transform into a step. Throws (at load time) when the declaration
 * itself is wrong: an unknown code table, a bad date format, a bad regular expression.
 */
export function compileTransform(t: Transform, codes: CodeTables): { step: Step; acceptsEmpty: boolean } {
  if (typeof t === 'string') return { step: NAMED[t], acceptsEmpty: false };
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
  if ('date' in t) {
    const list = Array.isArray(t.date) ? t.date : [t.date];
    const formats = list.map(compileDateFormat);
    const expected = list.join(' or ');
    return {
      step: (v) =>
        parseDate(asText(v).trim(), formats) ?? new TransformFailure('INVALID_FIELD_VALUE', `not a valid date, expected ${expected}`),
      acceptsEmpty: false,
    };
  }
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
    const country = t.phone.country;
    return {
      step: (v) =>
        normalisePhone(asText(v), country) ??
        new TransformFailure('INVALID_FIELD_VALUE', `not a phone number, expected a ${country} or international number`),
      acceptsEmpty: false,
    };
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
  if ('date' in t) return `date(${(Array.isArray(t.date) ? t.date : [t.date]).join(' or ')})`;
  if ('number' in t) return `number(decimal "${t.number.decimal}", thousands "${t.number.thousands}")`;
  if ('split' in t) return `split(${JSON.stringify(t.split.separator)}${t.split.index !== undefined ? `, ${t.split.index}` : ''})`;
  if ('join' in t) return `join(${JSON.stringify(t.join)})`;
  if ('phone' in t) return `phone(${t.phone.country})`;
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

const NAMED: Record<Exclude<Transform, object>, Step> = {
  trim: (v) => (typeof v === 'string' ? v.trim() : v),
  upper: (v) => asText(v).toUpperCase(),
  lower: (v) => asText(v).toLowerCase(),
  title: (v) => titleCase(asText(v)),
  'collapse-spaces': (v) => collapseSpaces(asText(v)),
  initials: (v) => initials(asText(v)),
  email: (v) => normaliseEmail(asText(v)) ?? new TransformFailure('INVALID_FIELD_VALUE', 'not an e-mail address, expected name@domain.tld'),
  phone: (v) =>
    normalisePhone(asText(v)) ?? new TransformFailure('INVALID_FIELD_VALUE', 'not a phone number, expected a NL or international number'),
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
