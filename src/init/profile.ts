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

export const DATE_FORMATS = ['dd-mm-yyyy', 'yyyy-mm-dd', 'dd/mm/yyyy', 'yyyy/mm/dd', 'dd.mm.yyyy', 'mm/dd/yyyy'] as const;

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
  /** An array of objects in a JSON record (its first item's fields are profiled as `name.0.field`). */
  arrayOfObjects?: number;
}

export interface FileProfile {
  rows: number;
  columns: ColumnProfile[];
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL_COMMA = /^[+-]?\d{1,3}(\.\d{3})*,\d+$|^[+-]?\d+,\d+$/;
const DECIMAL_DOT = /^[+-]?\d{1,3}(,\d{3})*\.\d+$|^[+-]?\d+\.\d+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const POSTCODE_NL = /^[1-9]\d{3}\s?[A-Za-z]{2}$/;
const PHONE = /^(\+|00)?[\d\s\-()]{8,}$/;
const BOOLEAN = /^(true|false|ja|nee|yes|no|j|n|y|0|1)$/i;
const DATE = /^(\d{1,4})([-/.])(\d{1,2})\2(\d{1,4})$/;

/** The date format of a value (day-first where the order is ambiguous, as Dutch and German exports write). */
function dateFormat(v: string): { format: string; short: boolean } | undefined {
  const m = DATE.exec(v);
  if (!m) return undefined;
  const [, a, sep, b, c] = m as unknown as [string, string, string, string, string];
  if (a.length === 4 && c.length <= 2) return { format: `yyyy${sep}mm${sep}dd`, short: b.length === 1 || c.length === 1 };
  if (c.length !== 4 || a.length > 2) return undefined;
  const first = Number(a);
  const second = Number(b);
  if (second > 12 && first <= 12 && sep === '/') return { format: 'mm/dd/yyyy', short: a.length === 1 || b.length === 1 };
  if (first > 31 || second > 12) return undefined;
  return { format: `dd${sep}mm${sep}yyyy`, short: a.length === 1 || b.length === 1 };
}

/** The kind of one non-empty value. */
export function kindOf(v: string): { kind: ValueKind; short?: boolean } | undefined {
  if (INTEGER.test(v)) return { kind: 'integer' };
  const date = dateFormat(v);
  if (date) return { kind: `date:${date.format}`, short: date.short };
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
      };
      this.columns.set(name, p);
      if (this.rows === 1 && (this.uniques.size < KEY_CANDIDATES || this.keyHint(name))) this.uniques.set(name, new Set());
    }
    return p;
  }

  private addValue(name: string, raw: string): void {
    const p = this.column(name);
    p.values++;
    const v = raw.trim();
    const unique = this.uniques.get(name);
    if (v === '') {
      p.empty++;
      if (unique) this.checkCandidate(name, p);
      return;
    }
    if (v.length > p.maxLength) p.maxLength = v.length;
    const k = kindOf(v);
    if (k) {
      p.kinds[k.kind] = (p.kinds[k.kind] ?? 0) + 1;
      if (k.short) p.shortDateParts++;
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
    return { rows: this.rows, columns: [...this.columns.values()] };
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

/** The dominant date formats of a column (covering at least 90% of its dates), for a `date:` transform. */
export function dateFormatsOf(p: ColumnProfile): string[] {
  const dates = Object.entries(p.kinds).filter(([k]) => k.startsWith('date:'));
  const total = dates.reduce((n, [, c]) => n + c, 0);
  const formats: string[] = [];
  for (const [k, c] of dates.sort((a, b) => b[1] - a[1])) if (c / total >= 0.05) formats.push(k.slice(5));
  const withShort = formats.flatMap((f) =>
    p.shortDateParts > 0 && /dd.mm|mm.dd/.test(f) ? [f, f.replace('dd', 'd').replace('mm', 'm')] : [f],
  );
  return [...new Set(withShort)];
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
