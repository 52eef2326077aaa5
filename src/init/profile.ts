/**
 * Profiling the columns of an export: per column, how often it is empty, which kinds of value
 * it holds (numbers with a decimal comma, dates in which format, e-mail addresses, Dutch
 * postcodes…), its distinct values while they are few (code-list candidates) and whether it is
 * unique and never empty (key candidates). Memory is bounded: distinct values are kept up to
 * DISTINCT_CAP per column, and exact uniqueness only for a few key candidates.
 *
 * `ColumnProfiler` is pure (values in, profile out); `profileFile` feeds it the rows of a file
 * through the product's own source readers, so the dialect is read exactly as `plan` reads it.
 */
import type { SourceDefinition } from '../pipeline/definition/load-pipeline.js';
import { readSourceBatches } from '../pipeline/source/index.js';

/** Distinct values kept per column; beyond it the column is not a code list. */
export const DISTINCT_CAP = 64;
/** Columns whose uniqueness is tracked exactly (the first ones that look unique). */
const KEY_CANDIDATES = 3;

/** Rows kept whole (the first ones) for evidence across columns: a phone number with its row's country. */
export const SAMPLE_ROWS = 1000;

export type ValueKind = 'integer' | 'decimal-comma' | 'decimal-dot' | 'email' | 'postcode-nl' | 'phone' | 'boolean' | `date:${string}`;

export interface ColumnProfile {
  name: string;
  values: number;
  empty: number;
  maxLength: number;
  /** Values by kind (a value may count under one kind at most). */
  kinds: Record<string, number>;
  /** Distinct non-empty values and their counts, while there are at most DISTINCT_CAP. */
  distinct: Map<string, number> | undefined;
  /** Unique and filled but for at most 1% of rows (or 10) (undefined: not tracked). */
  unique: boolean | undefined;
  /** Repeated values of a tracked key candidate (a few are planted defects, not a sign of no key). */
  duplicates: number;
  /** Dates with a one-digit day or month (so `d-m-yyyy` belongs in the formats too). */
  shortDateParts: number;
  /**
   * Numeric dates whose order of day and month the value alone does not say (`n/n/yyyy`), per
   * shape: how many prove day-first (first part over 12), month-first (second part over 12), or
   * neither (both parts 12 or less).
   */
  dateOrder: Record<string, { dayFirst: number; monthFirst: number; either: number }>;
  /** Values exports write for "date not known" (`00000000`, `19000101`, `9999-12-31`…) and their rows: no dates. */
  placeholders: Record<string, number>;
  /** Values written as JSON numbers (where a postcode, phone or key is text, its leading zeros are lost). */
  jsonNumbers: number;
  /** Values in decomposed Unicode (`e` + a combining accent), which the `nfc` transform composes. */
  decomposed: number;
  /** An array of objects in a JSON record (its first item's fields are profiled as `name.0.field`). */
  arrayOfObjects?: number;
}

export interface FileProfile {
  rows: number;
  columns: ColumnProfile[];
  /** The first SAMPLE_ROWS rows as read (column → value). */
  sample: Array<Record<string, string>>;
}

const INTEGER = /^[+-]?\d+$/;
/** The combining-mark blocks decomposed Latin, Greek and Cyrillic text uses (a plain class: no Unicode-property scan). */
const COMBINING = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/;
const DECIMAL_COMMA = /^[+-]?\d{1,3}(\.\d{3})*,\d+$|^[+-]?\d+,\d+$/;
const DECIMAL_DOT = /^[+-]?\d{1,3}(,\d{3})*\.\d+$|^[+-]?\d+\.\d+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const POSTCODE_NL = /^[1-9]\d{3}\s?[A-Za-z]{2}$/;
const PHONE = /^(\+|00)?[\d\s\-()]{8,}$/;
const BOOLEAN = /^(true|false|ja|nee|yes|no|j|n|y|0|1)$/i;
const NUMERIC_DATE = /^(\d{1,4})([-/.])(\d{1,2})\2(\d{4}|\d{2})$/;
/** An ISO 8601 timestamp with a zone (`1980-03-12T00:00:00+01:00`, `…Z`). */
const ZONED_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * What exports write for a date nobody knows: all zeros or nines, the first day of 1900 and the
 * last day of 9999 in the usual notations. Read as unknown by a declared rule (`date.unknown`),
 * never as dates.
 */
export const DATE_PLACEHOLDERS: ReadonlySet<string> = new Set([
  '00000000',
  '99999999',
  '19000101',
  '99991231',
  '1900-01-01',
  '9999-12-31',
  '0000-00-00',
  '01/01/1900',
  '01.01.1900',
  '01-01-1900',
  '1/1/1900',
  '31/12/9999',
  '31.12.9999',
  '12/31/9999',
  '00/00/0000',
  '00.00.0000',
  '00-00-0000',
]);

const MONTH_NAME_DATE = /^(\d{1,2})(\.?)([\s\-/.]+)(\p{L}{3,}\.?)([\s\-/.]+)(\d{4})$/u;

/**
 * The date shape of a value: a format when the value says it (`yyyy-mm-dd`, `yyyymmdd`,
 * `d mmm yyyy`), else a shape whose order of day and month is open (`n/n/yyyy`) with the
 * parts, so the profile can count the evidence for each order.
 */
export function dateShape(v: string): { shape: string; first?: number; second?: number; short: boolean } | undefined {
  if (/^\d{8}$/.test(v)) {
    const y = Number(v.slice(0, 4));
    const m = Number(v.slice(4, 6));
    const d = Number(v.slice(6, 8));
    return y >= 1850 && y <= 2100 && m >= 1 && m <= 12 && d >= 1 && d <= 31 ? { shape: 'yyyymmdd', short: false } : undefined;
  }
  const n = NUMERIC_DATE.exec(v);
  if (n) {
    const [, a, sep, b, c] = n as unknown as [string, string, string, string, string];
    if (a.length === 4) return c.length <= 2 ? { shape: `yyyy${sep}mm${sep}dd`, short: b.length === 1 || c.length === 1 } : undefined;
    if (a.length > 2) return undefined;
    const first = Number(a);
    const second = Number(b);
    if (first < 1 || second < 1 || first > 31 || second > 31 || (first > 12 && second > 12)) return undefined;
    return { shape: `n${sep}n${sep}${c.length === 4 ? 'yyyy' : 'yy'}`, first, second, short: a.length === 1 || b.length === 1 };
  }
  const w = MONTH_NAME_DATE.exec(v);
  if (w) {
    const [, , dot, sep1, , sep2] = w as unknown as [string, string, string, string, string, string, string];
    const lit = (sep: string) => (/^\s+$/.test(sep) ? ' ' : sep.replace(/\s+/g, ' '));
    return { shape: `d${dot}${lit(sep1)}mmm${lit(sep2)}yyyy`, short: false };
  }
  return undefined;
}

/** The kind of one non-empty value. */
export function kindOf(v: string): { kind: ValueKind; short?: boolean } | undefined {
  // A timestamp has its date's dashes and a T or space at 10: checked by character before the regex.
  if (v.length >= 16 && v.charCodeAt(4) === 0x2d && (v[10] === 'T' || v[10] === ' ') && ZONED_TIMESTAMP.test(v))
    return { kind: 'date:timestamp' };
  const date = dateShape(v);
  if (date?.shape === 'yyyymmdd') return { kind: 'date:yyyymmdd' };
  if (INTEGER.test(v)) return { kind: 'integer' };
  if (date) return { kind: `date:${date.shape}`, short: date.short };
  if (DECIMAL_COMMA.test(v)) return { kind: 'decimal-comma' };
  if (DECIMAL_DOT.test(v)) return { kind: 'decimal-dot' };
  if (EMAIL.test(v)) return { kind: 'email' };
  if (POSTCODE_NL.test(v)) return { kind: 'postcode-nl' };
  if (PHONE.test(v)) return { kind: 'phone' };
  if (BOOLEAN.test(v)) return { kind: 'boolean' };
  return undefined;
}

/** Folds rows (column → value) into column profiles. */
export class ColumnProfiler {
  readonly columns = new Map<string, ColumnProfile>();
  readonly sample: Array<Record<string, string>> = [];
  private readonly uniques = new Map<string, Set<string>>();
  rows = 0;

  /** @param keyHint columns whose name says "key" are tracked for uniqueness besides the first few */
  constructor(private readonly keyHint: (name: string) => boolean = () => false) {}

  add(values: Record<string, unknown>): void {
    this.rows++;
    const seen = new Set<string>();
    this.addObject(values, '', seen);
    // A column missing from this row (JSON) counts as empty.
    for (const p of this.columns.values()) if (!seen.has(p.name)) this.addValue(p.name, '');
    if (this.sample.length < SAMPLE_ROWS) this.sample.push(this.current);
    this.current = {};
  }

  private addObject(values: Record<string, unknown>, prefix: string, seen: Set<string>): void {
    for (const [k, v] of Object.entries(values)) {
      const name = prefix + k;
      if (Array.isArray(v)) {
        const objects = v.filter((x) => x !== null && typeof x === 'object' && !Array.isArray(x));
        if (objects.length > 0) {
          const p = this.column(name);
          p.arrayOfObjects = Math.max(p.arrayOfObjects ?? 0, objects.length);
          seen.add(name);
          this.addObject(objects[0] as Record<string, unknown>, `${name}.0.`, seen);
          continue;
        }
        seen.add(name);
        this.addValue(name, v.map(String).join(', '));
      } else if (v !== null && typeof v === 'object') this.addObject(v as Record<string, unknown>, `${name}.`, seen);
      else {
        seen.add(name);
        this.addValue(name, v === null || v === undefined ? '' : String(v));
        if (typeof v === 'number') this.column(name).jsonNumbers++;
      }
    }
  }

  private column(name: string): ColumnProfile {
    let p = this.columns.get(name);
    if (!p) {
      // A column first seen late (JSON) was empty in the rows before.
      p = {
        name,
        values: this.rows - 1,
        empty: this.rows - 1,
        maxLength: 0,
        kinds: {},
        distinct: new Map(),
        unique: undefined,
        duplicates: 0,
        shortDateParts: 0,
        dateOrder: {},
        placeholders: {},
        jsonNumbers: 0,
        decomposed: 0,
      };
      this.columns.set(name, p);
      if (this.rows === 1 && (this.uniques.size < KEY_CANDIDATES || this.keyHint(name))) this.uniques.set(name, new Set());
    }
    return p;
  }

  private current: Record<string, string> = {};

  private addValue(name: string, raw: string): void {
    const p = this.column(name);
    if (this.sample.length < SAMPLE_ROWS) this.current[name] = raw;
    p.values++;
    const v = raw.trim();
    const unique = this.uniques.get(name);
    if (v === '') {
      p.empty++;
      if (unique) this.checkCandidate(name, p);
      return;
    }
    if (v.length > p.maxLength) p.maxLength = v.length;
    // Decomposed text holds a combining mark; only then is it normalised to compare.
    if (COMBINING.test(v) && v !== v.normalize('NFC')) p.decomposed++;
    // A placeholder is no date: kept apart, so it neither counts as one nor as evidence of an order.
    const placeholder = DATE_PLACEHOLDERS.has(v);
    if (placeholder) p.placeholders[v] = (p.placeholders[v] ?? 0) + 1;
    const k = placeholder ? undefined : kindOf(v);
    if (k) {
      p.kinds[k.kind] = (p.kinds[k.kind] ?? 0) + 1;
      if (k.short) p.shortDateParts++;
      if (k.kind.startsWith('date:n')) {
        const d = dateShape(v)!;
        const o = (p.dateOrder[d.shape] ??= { dayFirst: 0, monthFirst: 0, either: 0 });
        if (d.first! > 12) o.dayFirst++;
        else if (d.second! > 12) o.monthFirst++;
        else o.either++;
      }
    }
    if (p.distinct) {
      p.distinct.set(v, (p.distinct.get(v) ?? 0) + 1);
      if (p.distinct.size > DISTINCT_CAP) p.distinct = undefined;
    }
    if (unique) {
      if (unique.has(v)) {
        p.duplicates++;
        this.checkCandidate(name, p);
      } else unique.add(v);
    }
  }

  /** A candidate with more than 1% repeated or empty values is no key: stop tracking it. */
  private checkCandidate(name: string, p: ColumnProfile): void {
    if (p.duplicates + p.empty > Math.max(10, p.values / 100)) {
      this.uniques.delete(name);
      p.unique = false;
    }
  }

  /** The profiles, in first-seen order; uniqueness settled. */
  result(): FileProfile {
    for (const [name] of this.uniques) {
      const p = this.columns.get(name)!;
      p.unique = p.values > 0 && p.duplicates + p.empty <= Math.max(10, p.values / 100);
    }
    return { rows: this.rows, columns: [...this.columns.values()], sample: this.sample };
  }
}

/**
 * Profiles one file of a source, read as `plan` would read it (rows the reader refuses are
 * skipped: `plan` reports them).
 * @example const { rows, columns } = await profileFile(source, { path, file });
 */
export async function profileFile(
  source: Pick<SourceDefinition, 'name' | 'format' | 'encoding' | 'csv' | 'json'>,
  file: { path: string; file: string },
  options: { maxRows?: number; signal?: AbortSignal; keyHint?: (name: string) => boolean; onRows?: (rowsRead: number) => void } = {},
): Promise<FileProfile> {
  const profiler = new ColumnProfiler(options.keyHint);
  const max = options.maxRows ?? Number.POSITIVE_INFINITY;
  const def = { ...source, path: file.path, mapping: '', mappingFile: undefined } as unknown as SourceDefinition;
  outer: for await (const batch of readSourceBatches(def, file, {
    hashRows: false,
    ...(options.signal ? { signal: options.signal } : {}),
  })) {
    for (const row of batch) {
      if ('code' in row) continue;
      profiler.add(row.values);
      if (profiler.rows >= max) break outer;
    }
    options.onRows?.(profiler.rows);
  }
  return profiler.result();
}

/** Share of a column's non-empty values of one kind (0..1). */
export function shareOf(p: ColumnProfile, kind: string): number {
  const filled = p.values - p.empty;
  return filled === 0 ? 0 : (p.kinds[kind] ?? 0) / filled;
}

/** Share of a column's non-empty values that are dates, of any format. */
export function dateShare(p: ColumnProfile): number {
  const filled = p.values - p.empty;
  if (filled === 0) return 0;
  return Object.entries(p.kinds).reduce((n, [k, c]) => (k.startsWith('date:') ? n + c : n), 0) / filled;
}
