/**
 * What the values of a column prove, for the guesses that must never be silent: which date
 * format (day-first or month-first only when a value proves it), which countries the distinct
 * values are (through the mapping's own country resolver, so `init` places exactly what the
 * `country` transform will read), how amounts are written (decimal comma or point, currency),
 * and which region and check the phone numbers need (tried with libphonenumber on the sampled
 * rows). Pure: profiles in, decisions with their reasons and their TODOs out.
 */
import { isPossiblePhoneNumber, isValidPhoneNumber, type CountryCode } from 'libphonenumber-js/max/es6';
import { countryResolver } from '../pipeline/mapping/index.js';
import type { ColumnProfile, FileProfile } from './profile.js';

/** A YAML value as the generator writes it (flow style). */
export type Y = string | number | boolean | null | Y[] | { [k: string]: Y };

const num = (n: number) => n.toLocaleString('en-US');
const pct = (x: number) => `${Math.round(x * 100)}%`;

export interface DateDecision {
  /** The transform to write, or undefined when the format is left to the user. */
  transform?: Y;
  why: string;
  todo?: string;
  /** When the order is left to the user: the transform to start from once decided. */
  draft?: Y;
}

/**
 * The date transform of a column from its evidence. Formats a value states itself
 * (`yyyy-mm-dd`, `yyyymmdd`, `d mmm yyyy`) are taken as seen; for `n/n/yyyy` a first part over
 * 12 proves day-first and a second part over 12 month-first: one order proven → that order
 * alone; both proven or neither → a TODO with the counts, never a pick — unless a country column
 * says where the rows come from (`hint`), which is written as the hint it is.
 */
export function decideDate(
  c: ColumnProfile,
  hint?: { monthFirst: boolean; why: string },
  /** Values the layout names "not known" (a copybook's 88-levels), besides those the column holds. */
  moreUnknown: readonly string[] = [],
): DateDecision {
  const dates = Object.entries(c.kinds).filter(([k]) => k.startsWith('date:'));
  const total = dates.reduce((n, [, k]) => n + k, 0);
  const unknown = [...new Set([...Object.keys(c.placeholders ?? {}), ...moreUnknown])].sort();
  let zoned = false;
  if (total === 0) return { why: '', todo: `${c.name} holds no values that read as dates; give its format ({ date: [dd-mm-yyyy] })` };
  const formats: string[] = [];
  const reasons: string[] = [];
  const todos: string[] = [];
  let pivot: number | undefined;
  let draft: Y | undefined;
  for (const [kind, n] of dates.sort((a, b) => b[1] - a[1])) {
    if (n / total < 0.05) continue;
    const shape = kind.slice(5);
    if (shape === 'timestamp') {
      // The calendar date in the zone the value states: read in another zone it can be a day off.
      zoned = true;
      reasons.push(`${num(n)} ISO timestamps with a zone, read as their date in that zone`);
      continue;
    }
    const order = c.dateOrder[shape];
    if (!order) {
      formats.push(...withShort(shape, c));
      reasons.push(`${num(n)} in ${shape}`);
      continue;
    }
    const sep = shape[1]!;
    const year = shape.endsWith('yyyy') ? 'yyyy' : 'yy';
    const dayFirst = `dd${sep}mm${sep}${year}`;
    const monthFirst = `mm${sep}dd${sep}${year}`;
    const counts = `${num(order.dayFirst)} with a first part over 12 (day-first), ${num(order.monthFirst)} with a second part over 12 (month-first), ${num(order.either)} either way`;
    let chosen: string | undefined;
    if (order.dayFirst > 0 && order.monthFirst === 0) chosen = dayFirst;
    else if (order.monthFirst > 0 && order.dayFirst === 0) chosen = monthFirst;
    else if (order.dayFirst === 0 && order.monthFirst === 0 && hint) {
      chosen = hint.monthFirst ? monthFirst : dayFirst;
      todos.push(
        `${c.name}: no value proves the order of day and month (${counts}); ${chosen} is taken from a hint (${hint.why}): confirm it`,
      );
    } else {
      todos.push(
        `${c.name}: ${order.dayFirst > 0 ? 'both orders of day and month are proven (a mixed column)' : 'no value proves the order of day and month'} (${counts}); write its format, e.g. { date: { formats: [${dayFirst}, ${monthFirst}], prefer: ${dayFirst} } }`,
      );
      draft ??= { date: [dayFirst, monthFirst] };
      continue;
    }
    formats.push(...withShort(chosen, c));
    reasons.push(`${num(n)} in ${shape} (${counts})`);
    if (year === 'yy') {
      pivot = (new Date().getUTCFullYear() % 100) + 1;
      todos.push(
        `${c.name}: two-digit years are read with pivot ${pivot} (below it 20yy, else 19yy), as birth dates are in the past: confirm it`,
      );
    }
  }
  const todo = todos.length > 0 ? todos.join('; ') : undefined;
  const unknownWhy =
    unknown.length > 0 ? `; ${unknown.map((u) => `\`${u}\``).join(', ')} read as "not known" (${placeholderRows(c, unknown)})` : '';
  if (formats.length === 0 && !zoned) {
    const withUnknown = draft && unknown.length > 0 ? { date: { formats: (draft as { date: string[] }).date, unknown } } : draft;
    return { why: '', ...(todo ? { todo } : {}), ...(withUnknown ? { draft: withUnknown } : {}) };
  }
  const unique = [...new Set(formats)];
  const plain = pivot === undefined && !zoned && unknown.length === 0;
  const transform: Y = {
    date: plain
      ? unique
      : {
          formats: unique,
          ...(pivot !== undefined ? { pivot } : {}),
          ...(zoned ? { zoned: true } : {}),
          ...(unknown.length > 0 ? { unknown } : {}),
        },
  };
  return {
    transform,
    why: `${pct(total / Math.max(1, c.values - c.empty))} of its values are dates${unique.length > 0 ? ` in ${unique.join(' or ')}` : ''}: ${reasons.join('; ')}${unknownWhy}`,
    ...(todo ? { todo } : {}),
  };
}

/** The rows of a column that hold its placeholders: `12 rows`. */
function placeholderRows(c: ColumnProfile, unknown: readonly string[]): string {
  const n = unknown.reduce((sum, u) => sum + (c.placeholders?.[u] ?? 0), 0);
  return `${num(n)} row${n === 1 ? '' : 's'}`;
}

/** A format with one-digit days or months seen gets its short form too (`d-m-yyyy`: the same reading). */
function withShort(format: string, c: ColumnProfile): string[] {
  if (c.shortDateParts === 0 || !/dd|mm(?!m)/.test(format)) return [format];
  return [format, format.replace('dd', 'd').replace(/mm(?!m)/, 'm')];
}

const resolveCountry = countryResolver({});
const resolveNationality = countryResolver({ nationality: true });

export interface CodeEvidence {
  /** Distinct values read, value → code. */
  placed: Map<string, string>;
  /** Values it cannot place and the rows that hold each. */
  unknown: Array<[string, number]>;
  /** The country most filled rows hold, and its share of them. */
  dominant?: { code: string; share: number };
}

/** The distinct values of a country or nationality column as the `country`/`nationality` transform reads them. */
export function countryEvidence(c: ColumnProfile, nationality = false): CodeEvidence {
  const resolve = nationality ? resolveNationality : resolveCountry;
  const placed = new Map<string, string>();
  const unknown: Array<[string, number]> = [];
  const byCode = new Map<string, number>();
  for (const [v, n] of c.distinct ?? []) {
    const r = resolve(v);
    if (typeof r === 'string') {
      placed.set(v, r);
      byCode.set(r, (byCode.get(r) ?? 0) + n);
    } else unknown.push([v, n]);
  }
  const filled = c.values - c.empty;
  const top = [...byCode].sort((a, b) => b[1] - a[1])[0];
  return { placed, unknown, ...(top && filled > 0 ? { dominant: { code: top[0], share: top[1] / filled } } : {}) };
}

/** Whether a column's values read as countries (nine in ten distinct values, by rows). */
export function looksLikeCountries(c: ColumnProfile): boolean {
  if (!c.distinct || c.distinct.size === 0 || c.maxLength > 40) return false;
  // One-letter values (M/F, A/I, J/N) are codes of something else far more often than vehicle
  // codes of countries (M→MT, F→FR): never a country column by its values alone.
  if (c.maxLength <= 1) return false;
  const filled = c.values - c.empty;
  let rows = 0;
  for (const [v, n] of c.distinct) if (typeof resolveCountry(v) === 'string' && !/^\d+$/.test(v)) rows += n;
  return filled > 0 && rows / filled >= 0.9 && c.distinct.size >= 2;
}

/** Unknown code values as a TODO's list: `` `Atlantis` (3 rows), `XX` (1 row) ``. */
export function valuesWithCounts(values: Array<[string, number]>): string {
  return values
    .sort((a, b) => b[1] - a[1])
    .map(([v, n]) => `\`${v}\` (${num(n)} row${n === 1 ? '' : 's'})`)
    .join(', ');
}

export interface AmountDecision {
  number: { decimal: ',' | '.'; thousands: '.' | ',' | ' ' | "'" | '' };
  /** Symbols and codes to strip before the number is read. */
  strip?: string;
  currency?: string;
  why: string;
}

/**
 * Currency symbols that name one currency (`kr` names four, `$` is taken as USD as before), and
 * every ISO 4217 code the runtime knows (Intl), so `(PLN)` or `1 234,56 CZK` decide the currency.
 */
const CURRENCIES: Readonly<Record<string, string>> = {
  '€': 'EUR',
  '£': 'GBP',
  $: 'USD',
  zł: 'PLN',
  Kč: 'CZK',
  Ft: 'HUF',
  ...Object.fromEntries(Intl.supportedValuesOf('currency').map((c) => [c, c])),
};
const CURRENCY_IN_TEXT = new RegExp(`(€|£|\\$|zł|Kč|\\bFt\\b|\\b(?:${Intl.supportedValuesOf('currency').join('|')})\\b)`, 'u');

/**
 * How an amount column writes its numbers, from its sampled values: the separator followed by
 * one or two digits at the end is the decimal one, another separator between groups of three
 * the thousands one; the currency from the header (`Annual Income (GBP)`, `Revenu (€)`) or from
 * symbols and codes in the values.
 */
export function decideAmount(c: ColumnProfile, sample: FileProfile['sample']): AmountDecision {
  let comma = 0;
  let dot = 0;
  const thousands = new Map<string, number>();
  const inValues = new Map<string, number>();
  for (const row of sample) {
    const raw = (row[c.name] ?? '').trim();
    if (raw === '') continue;
    const cur = CURRENCY_IN_TEXT.exec(raw);
    if (cur) inValues.set(CURRENCIES[cur[1]!]!, (inValues.get(CURRENCIES[cur[1]!]!) ?? 0) + 1);
    const v = raw
      .replace(CURRENCY_IN_TEXT, '')
      .replace(/[\u00a0\u202f]/g, ' ')
      .replace(/\u2019/g, "'")
      .trim();
    const dec = /([.,])\d{1,2}$/.exec(v);
    if (dec?.[1] === ',') comma++;
    else if (dec?.[1] === '.') dot++;
    const body = dec ? v.slice(0, dec.index) : v;
    const group = /\d([., '])\d{3}(?!\d)/.exec(body);
    if (group) thousands.set(group[1]!, (thousands.get(group[1]!) ?? 0) + 1);
  }
  const decimal = comma > dot ? ',' : dot > comma ? '.' : undefined;
  const sep = [...thousands].sort((a, b) => b[1] - a[1])[0]?.[0] as '.' | ',' | ' ' | "'" | undefined;
  const d: ',' | '.' = decimal ?? (sep === '.' ? ',' : '.');
  const t = sep && sep !== d ? sep : '';
  const header = CURRENCY_IN_TEXT.exec(c.name);
  const currency = header ? CURRENCIES[header[1]!] : [...inValues].sort((a, b) => b[1] - a[1])[0]?.[0];
  const why = [
    decimal
      ? `decimal ${decimal === ',' ? 'comma' : 'point'} (${num(decimal === ',' ? comma : dot)} of the sampled values end in ${decimal}dd)`
      : `no decimals seen: decimal ${d === ',' ? 'comma' : 'point'} assumed from the thousands separator`,
    t ? `thousands separator ${JSON.stringify(t)}` : 'no thousands separator',
    currency ? `currency ${currency} from the ${header ? 'header' : 'values'}` : 'no currency in the header or the values',
  ].join(', ');
  return {
    number: { decimal: d, thousands: t },
    ...(inValues.size > 0
      ? { strip: `[€£$]|zł|Kč|\\b(?:${[...inValues.keys()].filter((k) => /^[A-Z]{3}$/.test(k)).join('|') || 'EUR'}|Ft)\\b|\\s+$|^\\s+` }
      : {}),
    ...(currency ? { currency } : {}),
    why,
  };
}

export interface PhoneDecision {
  spec: Record<string, Y>;
  why: string;
  todo?: string;
}

/**
 * The phone transform's region and check: the region of each row from its country column when
 * there is one, else `fallback` (for numbers written nationally); `check: possible` only when
 * most sampled numbers are of no range their region issues but of a length it has (made-up test
 * data), written as the choice it is.
 */
export function decidePhone(
  c: ColumnProfile,
  sample: FileProfile['sample'],
  country: ColumnProfile | undefined,
  fallback: { code: string; why: string } | undefined,
): PhoneDecision {
  let valid = 0;
  let possible = 0;
  let tried = 0;
  for (const row of sample) {
    const v = (row[c.name] ?? '').trim();
    if (v === '') continue;
    const fromRow = country ? resolveCountry(row[country.name] ?? '') : undefined;
    const region = (typeof fromRow === 'string' ? fromRow : fallback?.code) as CountryCode | undefined;
    tried++;
    if (isValidPhoneNumber(v, region)) valid++;
    else if (isPossiblePhoneNumber(v, region)) possible++;
  }
  const spec: Record<string, Y> = {};
  const why: string[] = [];
  if (country) {
    spec.regionColumn = country.name;
    why.push(`the region of each row from ${country.name}`);
  }
  if (fallback) {
    spec.region = fallback.code;
    why.push(`${country ? 'else ' : ''}region ${fallback.code} (${fallback.why})`);
  }
  let todo: string | undefined;
  if (!country && !fallback)
    todo = `${c.name}: no country column and no country init could infer: numbers written without +<country code> are refused until you give { phone: { region: XX } }`;
  if (tried > 0 && valid / tried < 0.9 && (valid + possible) / tried >= 0.9) {
    spec.check = 'possible';
    why.push(
      `check possible: only ${valid} of ${tried} sampled numbers are in a range their region issues, ${possible} more have its length (test data?)`,
    );
    todo = `${c.name}: ${tried - valid} of ${tried} sampled numbers are in no range their region issues; check: possible keeps them (made-up numbers?) — use the default check (valid) for real data`;
  } else if (tried > 0) why.push(`${valid} of ${tried} sampled numbers valid for their region`);
  return { spec, why: why.join('; '), ...(todo ? { todo } : {}) };
}
