/**
 * The `date` transform: a legacy date in one of the formats a mapping lists, into ISO
 * `yyyy-mm-dd`. Every listed format is tried in full, so a value only a later format reads is
 * read by it, and a value two formats read as different dates is refused as ambiguous (naming
 * both readings) unless the mapping says which format wins (`prefer`). A refusal says whether
 * the value is in none of the formats or in a format but no date (31-02-1980). Formats are
 * compiled into regular expressions once, when the mapping loads.
 */
import { TransformFailure } from './failure.js';

/** What a mapping declares: `{ date: [dd-mm-yyyy, d-m-yyyy] }` or `{ date: { formats, prefer, pivot, excelSerial } }`. */
export interface DateSpec {
  formats: string[];
  /** The format whose reading wins when two formats read a value as different dates. */
  prefer?: string | undefined;
  /** Two-digit years: yy < pivot is 20yy, otherwise 19yy. Required by a format with `yy`. */
  pivot?: number | undefined;
  /** A whole number is an Excel (1900 system) serial day number. */
  excelSerial?: boolean | undefined;
  /**
   * Values that mean "not known" (`00000000`, `19000101`, `9999-12-31`, a copybook's 88-level
   * values): read as no date, so the field is left out, never staged as a date nor refused.
   */
  unknown?: readonly string[] | undefined;
  /**
   * An ISO 8601 timestamp with a zone (`1980-03-12T00:00:00+01:00`, `…Z`) is read as its
   * calendar date in the zone it states; read in another zone it can be a day off.
   */
  zoned?: boolean | undefined;
}

/** An ISO 8601 timestamp with its zone: the date as written, then time and zone. */
const ZONED = /^(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

type Part = 'y' | 'yy' | 'm' | 'mmm' | 'd';

/** A compiled date format: `dd-mm-yyyy` → a regular expression and what each group holds. */
export interface DateFormat {
  format: string;
  regex: RegExp;
  parts: Part[];
  /** The format as tokens and literals, each token with the widths it reads (`d`: 1-2), for `readsAllOf`. */
  shape: string[];
}

const TOKENS = /yyyy|yy|mmm|mm|m|dd|d/y;

/**
 * Compiles one format. Tokens: `d`/`dd` day, `m`/`mm` month, `mmm` month name (Dutch, English,
 * German, French), `yyyy` year, `yy` two-digit year (needs a pivot); anything else is literal,
 * a space standing for one or more spaces. Throws when the format cannot describe a date.
 */
export function compileDateFormat(format: string, pivot?: number): DateFormat {
  const parts: Part[] = [];
  const shape: string[] = [];
  let source = '^';
  for (let i = 0; i < format.length; ) {
    TOKENS.lastIndex = i;
    const m = TOKENS.exec(format);
    if (m) {
      const t = m[0];
      if (t === 'yyyy') source += '(\\d{4})';
      else if (t === 'mmm') source += '(\\p{L}+\\.?)';
      else source += t.length === 2 ? '(\\d{2})' : '(\\d{1,2})';
      parts.push(t === 'yyyy' ? 'y' : t === 'yy' || t === 'mmm' ? t : (t[0] as 'm' | 'd'));
      shape.push(`<${t}>`);
      i += t.length;
    } else {
      const c = format[i]!;
      source += c === ' ' ? '\\s+' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      if (shape.length > 0 && !shape.at(-1)!.startsWith('<')) shape[shape.length - 1] += c;
      else shape.push(c);
      i++;
    }
  }
  const count = (p: Part[]) => parts.filter((x) => p.includes(x)).length;
  if (parts.length !== 3 || count(['y', 'yy']) !== 1 || count(['m', 'mmm']) !== 1 || count(['d']) !== 1) {
    throw new Error(
      `date format ${JSON.stringify(format)} must contain a day (dd or d), a month (mm, m or mmm) and a year (yyyy or yy) once each`,
    );
  }
  if (parts.includes('yy') && pivot === undefined) {
    throw new Error(
      `date format ${JSON.stringify(format)} has a two-digit year: say which century with pivot (e.g. { date: { formats: [${format}], pivot: 30 } } reads 29 as 2029 and 30 as 1930)`,
    );
  }
  return { format, regex: new RegExp(`${source}$`, 'iu'), parts, shape };
}

/**
 * Whether `wide` reads every value `narrow` reads, as the same date: the same tokens in the same
 * order between the same literals, each of `wide`'s tokens reading the widths of `narrow`'s
 * (`d` reads what `dd` reads), and a literal between any two tokens (without one, `mdd` could
 * split digits otherwise than `mmdd`). `d-m-yyyy` reads all of `dd-mm-yyyy`; then trying
 * `dd-mm-yyyy` as well could only find the same date again.
 */
function readsAllOf(wide: DateFormat, narrow: DateFormat): boolean {
  if (wide.shape.length !== narrow.shape.length) return false;
  const widths: Record<string, string> = { '<dd>': '<d>', '<mm>': '<m>' };
  return wide.shape.every((w, i) => {
    const n = narrow.shape[i]!;
    if (i > 0 && w.startsWith('<') && wide.shape[i - 1]!.startsWith('<')) return false;
    return w === n || (w.startsWith('<') && widths[n] === w);
  });
}

/**
 * Month names and their usual abbreviations in Dutch, English, German and French, written as
 * normaliseMonth leaves them (lower case, no accents, no trailing dot). Listed by hand rather
 * than taken from Intl so that the tests, which render dates with Intl, check an independent table.
 */
const MONTH_NAMES: readonly string[][] = [
  ['januari', 'january', 'januar', 'janner', 'janvier', 'jan', 'janv'],
  ['februari', 'february', 'februar', 'fevrier', 'feb', 'febr', 'fevr', 'fev'],
  ['maart', 'march', 'marz', 'maerz', 'mars', 'mrt', 'mar', 'mrz'],
  ['april', 'avril', 'apr', 'avr'],
  ['mei', 'may', 'mai'],
  ['juni', 'june', 'juin', 'jun'],
  ['juli', 'july', 'juillet', 'jul', 'juil'],
  ['augustus', 'august', 'aout', 'aug'],
  ['september', 'septembre', 'sep', 'sept'],
  ['oktober', 'october', 'octobre', 'okt', 'oct'],
  ['november', 'novembre', 'nov'],
  ['december', 'dezember', 'decembre', 'dec', 'dez'],
];
const MONTHS = new Map(MONTH_NAMES.flatMap((names, i) => names.map((n) => [n, i + 1] as const)));

/** `März.` → `marz`: lower case, accents and a trailing dot dropped. */
function normaliseMonth(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MONTH_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Why y-m-d is no date, or undefined when it is one. The reasons name no digits of the value (they are masked in messages). */
function dateProblem(y: number, m: number, d: number): string | undefined {
  if (m < 1 || m > 12) return 'a month runs from 1 to 12';
  if (d < 1) return 'a day starts at 1';
  if (d <= DAYS[m - 1]! || (m === 2 && d === 29 && isLeap(y))) return undefined;
  if (m === 2) return d === 29 && !isLeap(y) ? 'February has 29 days only in a leap year' : 'February has 28 or 29 days';
  return `${MONTH_EN[m - 1]} has ${DAYS[m - 1]} days`;
}

const iso = (y: number, m: number, d: number) => `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;

/** One format's reading: the date, a reason the matched value is no date, or null when the value is not in the format. */
function readFormat(text: string, f: DateFormat, pivot: number): { y: number; m: number; d: number } | string | null {
  const match = f.regex.exec(text);
  if (!match) return null;
  let y = 0;
  let m = 0;
  let d = 0;
  for (let i = 0; i < 3; i++) {
    const s = match[i + 1]!;
    const p = f.parts[i];
    if (p === 'y') y = Number(s);
    else if (p === 'yy') y = Number(s) + (Number(s) < pivot ? 2000 : 1900);
    else if (p === 'm') m = Number(s);
    else if (p === 'mmm') {
      const n = MONTHS.get(normaliseMonth(s));
      if (n === undefined) return 'the month name is not one in Dutch, English, German or French';
      m = n;
    } else d = Number(s);
  }
  return dateProblem(y, m, d) ?? { y, m, d };
}

/** Excel's serial day numbers (1900 system) run to 9999-12-31. */
const MAX_EXCEL_SERIAL = 2_958_465;
const DAY_MS = 86_400_000;

/** Why an Excel serial is no date, or undefined when it is one. */
function excelSerialProblem(serial: number): string | undefined {
  if (serial === 60) return "Excel serial 60 is 29 February 1900, a day that never was (Excel's leap-year bug)";
  if (serial < 1 || serial > MAX_EXCEL_SERIAL) return `an Excel serial runs from 1 (1900-01-01) to ${MAX_EXCEL_SERIAL} (9999-12-31)`;
  return undefined;
}

/**
 * An Excel (1900 system) serial day number as an ISO date; `excelSerialProblem` first. Excel
 * counts 1900 as a leap year (a bug kept from Lotus 1-2-3): serial 60 is the 29 February 1900
 * that never was, 59 is 28 February and 61 is 1 March 1900.
 * @example excelSerialDate(29287) // '1980-03-07'
 */
export function excelSerialDate(serial: number): string {
  // Day 0 is 1899-12-31 before the fictitious day, 1899-12-30 after it.
  return new Date(Date.UTC(1899, 11, serial < 60 ? 31 : 30) + serial * DAY_MS).toISOString().slice(0, 10);
}

/** Whole numbers in text, as an Excel serial is written. */
const WHOLE = /^\d+$/;
const EXCEL = 'an Excel serial';

/**
 * Compiles a date declaration into a reader: text (or, with excelSerial, a number) in, ISO
 * date or a failure out. Throws when the declaration is wrong (a bad format, `prefer` naming
 * no listed format, `yy` without a pivot).
 * @example compileDate({ formats: ['dd/mm/yyyy', 'mm/dd/yyyy'] })('09/25/1982') // '1982-09-25'
 */
export function compileDate(spec: DateSpec): (value: unknown) => string | TransformFailure {
  const { prefer, pivot, excelSerial = false, zoned = false } = spec;
  if (spec.formats.length === 0 && !excelSerial && !zoned)
    throw new Error('a date needs at least one format (or excelSerial or zoned: true)');
  const unknown = new Set((spec.unknown ?? []).map((u) => u.trim()));
  const all = spec.formats.map((f) => compileDateFormat(f, pivot));
  // A format another listed one reads in full is not tried: its reading would be the same.
  // It still names that reading, for prefer (a Dutch [dd-mm-yyyy, d-m-yyyy] tries one pattern).
  const formats = all
    .filter((f, i) => !all.some((g, j) => j !== i && readsAllOf(g, f) && !(readsAllOf(f, g) && j > i)))
    .map((f) => ({ ...f, names: all.filter((g) => g === f || readsAllOf(f, g)).map((g) => g.format) }));
  if (prefer !== undefined && !spec.formats.includes(prefer))
    throw new Error(`prefer names ${JSON.stringify(prefer)}, which is not one of the formats ${spec.formats.join(', ')}`);
  const preferFormat = all.find((f) => f.format === prefer);
  const expected = [...spec.formats, ...(excelSerial ? [EXCEL] : []), ...(zoned ? ['an ISO timestamp with its zone'] : [])].join(' or ');
  const noMatch = new TransformFailure('INVALID_FIELD_VALUE', `does not match the date format ${expected}`);
  const p = pivot ?? 0;
  return (value) => {
    if (excelSerial && typeof value === 'number') {
      if (!Number.isInteger(value))
        return new TransformFailure('INVALID_FIELD_VALUE', 'not a date: an Excel serial with a time of day, expected a whole day number');
      const why = excelSerialProblem(value);
      return why === undefined ? excelSerialDate(value) : new TransformFailure('INVALID_FIELD_VALUE', `not a date: ${why}`);
    }
    const text = (typeof value === 'string' ? value : String(value)).trim();
    if (unknown.has(text)) return '';
    if (zoned) {
      const z = ZONED.exec(text);
      if (z) {
        const [y, m, d] = [Number(z[1]), Number(z[2]), Number(z[3])];
        const why = dateProblem(y, m, d);
        return why === undefined ? iso(y, m, d) : new TransformFailure('INVALID_FIELD_VALUE', `not a date: ${why}`);
      }
    }
    // The common case, one reading, allocates nothing but the result.
    let first: { y: number; m: number; d: number } | undefined;
    let firstFormat: { format: string; names: string[] } | undefined;
    let others: { format: string; names: string[]; date: string }[] | undefined;
    let problem: string | undefined;
    for (const f of formats) {
      const r = readFormat(text, f, p);
      if (r === null) continue;
      if (typeof r === 'string') {
        problem ??= r;
        continue;
      }
      if (first === undefined) [first, firstFormat] = [r, f];
      else if (r.y !== first.y || r.m !== first.m || r.d !== first.d)
        (others ??= []).push({ format: f.format, names: f.names, date: iso(r.y, r.m, r.d) });
    }
    if (excelSerial && WHOLE.test(text)) {
      const why = excelSerialProblem(Number(text));
      const serial = why === undefined ? excelSerialDate(Number(text)) : undefined;
      if (serial === undefined) problem ??= why;
      else if (first === undefined) return serial;
      else if (serial !== iso(first.y, first.m, first.d)) (others ??= []).push({ format: EXCEL, names: [], date: serial });
    }
    if (first === undefined) return problem !== undefined ? new TransformFailure('INVALID_FIELD_VALUE', `not a date: ${problem}`) : noMatch;
    const date = iso(first.y, first.m, first.d);
    if (others === undefined) return date;
    const readings = [{ format: firstFormat!.format, names: firstFormat!.names, date }, ...others];
    // the preferred format may be one not tried (read in full by another): it wins where it reads the value
    const preferred =
      preferFormat && readings.find((r) => r.format === prefer || (r.names.includes(preferFormat.format) && preferFormat.regex.test(text)));
    if (preferred) return preferred.date;
    return new TransformFailure(
      'INVALID_FIELD_VALUE',
      `ambiguous date: ${readings.map((r) => `${r.format} reads \`${r.date}\``).join(', ')}; state which order wins with prefer`,
    );
  };
}
