/**
 * What the generators of foreign exports share (src/pipeline/samples/foreign/): a seeded person
 * with the truth the generator knows about it (birth date, phone number in E.164, country), phone
 * numbers valid for their region written the ways exports write them, planted defects, and a
 * streamed writer. Each export kind (one module per kind) decides its columns, its language and
 * its notations; the truth is the same for all, so a test compares mapped values with it value by
 * value. Deterministic: the same seed gives the same bytes.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import iconv from 'iconv-lite';
import { isValidPhoneNumber } from 'libphonenumber-js/max/es6';
import { mulberry32 } from '../generate-crm.js';

/** What a mapped record must hold for one legacy key (null: the value is a planted defect, nothing may be mapped). */
export interface TruthRow {
  dateOfBirth: string | null;
  /** E.164. */
  phone: string | null;
  /** ISO 3166 alpha-2. */
  country: string | null;
  /** Yearly income as a number (currency units). */
  income: number;
}

export interface ForeignExport {
  kind: ForeignKind;
  /** The export files written (the first is the one to give `init`). */
  files: string[];
  /** A layout file the user would give `init --layout` (fixed-width only). */
  layout?: string;
  rows: number;
  /** Legacy key → truth (for a repeated key, the first row's). */
  truth: Map<string, TruthRow>;
  /** Planted defects: kind → legacy keys (or lines) of the rows that hold one. */
  defects: Record<string, string[]>;
  bytes: number;
}

export const FOREIGN_KINDS = ['uk-core-banking', 'us-crm', 'german-latin1', 'french-belgian', 'fixed-width'] as const;
export type ForeignKind = (typeof FOREIGN_KINDS)[number];

export interface ForeignOptions {
  /** Folder to write into. */
  out: string;
  rows: number;
  seed?: number;
  /** Planted defects per 1,000 rows of each defect kind (default 5). */
  defectsPer1000?: number;
}

export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
}

export const pad2 = (n: number) => String(n).padStart(2, '0');

/** A birth date between 1935 and 2004, as numbers and ISO. */
export function birthDate(rng: Rng): { y: number; m: number; d: number; iso: string } {
  const y = rng.int(1935, 2004);
  const m = rng.int(1, 12);
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const d = rng.int(1, days);
  return { y, m, d, iso: `${y}-${pad2(m)}-${pad2(d)}` };
}

/** Country calling codes, trunk prefixes and national number shapes of the regions the corpus uses. */
const REGIONS: Record<string, { cc: string; trunk: string; shapes: Array<[prefix: string, length: number]> }> = {
  GB: {
    cc: '44',
    trunk: '0',
    shapes: [
      ['7', 10],
      ['20', 10],
      ['161', 10],
      ['113', 10],
    ],
  },
  IE: {
    cc: '353',
    trunk: '0',
    shapes: [
      ['8', 9],
      ['1', 8],
    ],
  },
  US: { cc: '1', trunk: '', shapes: [['', 10]] },
  DE: {
    cc: '49',
    trunk: '0',
    shapes: [
      ['15', 11],
      ['17', 10],
      ['30', 10],
      ['89', 10],
    ],
  },
  AT: { cc: '43', trunk: '0', shapes: [['664', 10]] },
  CH: {
    cc: '41',
    trunk: '0',
    shapes: [
      ['7', 9],
      ['44', 9],
    ],
  },
  FR: {
    cc: '33',
    trunk: '0',
    shapes: [
      ['6', 9],
      ['1', 9],
      ['4', 9],
    ],
  },
  BE: {
    cc: '32',
    trunk: '0',
    shapes: [
      ['47', 9],
      ['2', 8],
      ['9', 8],
    ],
  },
  NL: {
    cc: '31',
    trunk: '0',
    shapes: [
      ['6', 9],
      ['20', 9],
    ],
  },
  LU: { cc: '352', trunk: '', shapes: [['621', 9]] },
  ES: {
    cc: '34',
    trunk: '',
    shapes: [
      ['6', 9],
      ['91', 9],
    ],
  },
  IT: { cc: '39', trunk: '', shapes: [['3', 10]] },
  PL: {
    cc: '48',
    trunk: '',
    shapes: [
      ['5', 9],
      ['6', 9],
    ],
  },
  CZ: {
    cc: '420',
    trunk: '',
    shapes: [
      ['6', 9],
      ['7', 9],
    ],
  },
  PT: {
    cc: '351',
    trunk: '',
    shapes: [
      ['91', 9],
      ['93', 9],
    ],
  },
  SE: {
    cc: '46',
    trunk: '0',
    shapes: [
      ['70', 9],
      ['73', 9],
    ],
  },
};

/** The regions phoneNumber() and writePhone() know. */
export const PHONE_REGIONS = (): string[] => Object.keys(REGIONS);

/** A national significant number valid for its region (drawn until libphonenumber's full metadata accepts it). */
export function phoneNumber(rng: Rng, region: string): { nsn: string; e164: string } {
  const r = REGIONS[region];
  if (!r) throw new Error(`no phone shapes for region ${region}`);
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const [prefix, length] = rng.pick(r.shapes);
    const nsn = prefix + rng.digits(length - prefix.length);
    const e164 = `+${r.cc}${nsn}`;
    if (isValidPhoneNumber(e164)) return { nsn, e164 };
  }
  throw new Error(`no valid phone number drawn for region ${region}`);
}

/** Digits in groups of the sizes given (the rest in the last group). */
const group = (digits: string, sizes: number[]) => {
  const out: string[] = [];
  let at = 0;
  for (const s of sizes) {
    if (at >= digits.length) break;
    out.push(digits.slice(at, at + s));
    at += s;
  }
  if (at < digits.length) out.push(digits.slice(at));
  return out;
};

/**
 * A number written as exports from `region` write it: nationally with the trunk prefix, or
 * internationally (`+44 (0)7700 …`, `0049 …`) — a few notations each, drawn.
 */
export function writePhone(rng: Rng, region: string, nsn: string): string {
  const r = REGIONS[region]!;
  const national = r.trunk + nsn;
  switch (region) {
    case 'US':
      return rng.pick([
        `(${nsn.slice(0, 3)}) ${nsn.slice(3, 6)}-${nsn.slice(6)}`,
        `${nsn.slice(0, 3)}-${nsn.slice(3, 6)}-${nsn.slice(6)}`,
        `+1 ${nsn.slice(0, 3)} ${nsn.slice(3, 6)} ${nsn.slice(6)}`,
        `${nsn.slice(0, 3)}.${nsn.slice(3, 6)}.${nsn.slice(6)}`,
      ]);
    case 'FR':
    case 'BE':
    case 'LU':
      return rng.pick([
        group(national, [2, 2, 2, 2, 2]).join(' '),
        `+${r.cc} ${group(nsn, [1, 2, 2, 2, 2]).join(' ')}`,
        group(national, [2, 2, 2, 2, 2]).join('.'),
      ]);
    case 'DE':
    case 'AT':
    case 'CH':
      return rng.pick([
        `${national.slice(0, 4)} ${national.slice(4)}`,
        `${national.slice(0, 4)}/${national.slice(4)}`,
        `+${r.cc} ${nsn.slice(0, 3)} ${nsn.slice(3)}`,
        `+${r.cc} (0)${nsn.slice(0, 3)} ${nsn.slice(3)}`,
      ]);
    default:
      return rng.pick([
        `${national.slice(0, 5)} ${national.slice(5)}`,
        // `(0)` only where the region dials a trunk prefix nationally.
        r.trunk ? `+${r.cc} (0)${nsn.slice(0, 4)} ${nsn.slice(4)}` : `+${r.cc} ${nsn.slice(0, 3)} ${nsn.slice(3)}`,
        `+${r.cc} ${nsn.slice(0, 4)} ${nsn.slice(4)}`,
        `00${r.cc} ${nsn}`,
      ]);
  }
}

/** The defects every export kind plants, what they are, and what the truth then says. */
export const DEFECTS = ['impossible-date', 'invalid-phone', 'unknown-country', 'duplicate-key', 'missing-surname'] as const;
export type DefectKindForeign = (typeof DEFECTS)[number];

/** Which defect (if any) row i carries: spread evenly, the same rows for the same seed. */
export function defectOf(rng: Rng, per1000: number): DefectKindForeign | undefined {
  if (!rng.chance((per1000 * DEFECTS.length) / 1000)) return undefined;
  return rng.pick(DEFECTS);
}

/** A streamed text file in one encoding, with backpressure. */
export class TextFile {
  private readonly stream;
  private buffer = '';
  bytes = 0;
  private constructor(
    path: string,
    private readonly encoding: 'utf-8' | 'latin1',
  ) {
    this.stream = createWriteStream(path);
  }
  static async open(path: string, encoding: 'utf-8' | 'latin1' = 'utf-8'): Promise<TextFile> {
    await mkdir(dirname(path), { recursive: true });
    return new TextFile(path, encoding);
  }
  async line(text: string, end = '\n'): Promise<void> {
    this.buffer += text + end;
    if (this.buffer.length > 1 << 20) await this.flush();
  }
  private async flush(): Promise<void> {
    const bytes = this.encoding === 'latin1' ? iconv.encode(this.buffer, 'windows-1252') : Buffer.from(this.buffer, 'utf8');
    this.buffer = '';
    this.bytes += bytes.length;
    if (!this.stream.write(bytes)) await new Promise((r) => this.stream.once('drain', () => r(undefined)));
  }
  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => this.stream.end((e?: Error | null) => (e ? reject(e) : resolve())));
  }
}

/** One CSV field: quoted when it holds the delimiter, a quote or a line break. */
export function csvField(v: string, delimiter: string): string {
  return v.includes(delimiter) || /["\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One generated person before it is written: what the export's row says, in neutral form. */
export interface Person {
  key: string;
  sex: 'M' | 'F';
  firstName: string;
  surname: string;
  dob: { y: number; m: number; d: number; iso: string };
  /** The country it lives in (alpha-2) and how the export writes it. */
  country: string;
  countryWritten: string;
  phone: string;
  email: string;
  /** Yearly income in whole cents. */
  incomeCents: number;
  defect: DefectKindForeign | undefined;
  truth: TruthRow;
}

/** What a kind of export says about its people: names, countries (alpha-2 → written forms, by weight), notations. */
export interface PeopleSpec {
  home: string;
  countries: Array<[alpha2: string, weight: number, written: readonly string[]]>;
  maleNames: readonly string[];
  femaleNames: readonly string[];
  surnames: readonly string[];
  domains: readonly string[];
  /** The legacy key of row i. */
  key: (i: number) => string;
  /** A birth date as the export writes it (also given impossible dates: 31 February). */
  date: (y: number, m: number, d: number) => string;
}

const asciiLocal = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/[^a-z]/g, '');

/**
 * The people of an export, row by row, with the planted defects and the truth: the same seed,
 * the same people. A defect row's truth says null where the written value is broken.
 */
export function* people(spec: PeopleSpec, options: ForeignOptions): Generator<Person> {
  const rng = new Rng(options.seed ?? 29);
  const per1000 = options.defectsPer1000 ?? 5;
  const totalWeight = spec.countries.reduce((n, [, w]) => n + w, 0);
  let previousKey: string | undefined;
  for (let i = 0; i < options.rows; i++) {
    const sex = rng.chance(0.5) ? 'M' : 'F';
    const firstName = rng.pick(sex === 'M' ? spec.maleNames : spec.femaleNames);
    const surname = rng.pick(spec.surnames);
    let w = rng.next() * totalWeight;
    let entry = spec.countries[0]!;
    for (const c of spec.countries) {
      w -= c[1];
      if (w <= 0) {
        entry = c;
        break;
      }
    }
    const dob = birthDate(rng);
    const defect = i > 0 ? defectOf(rng, per1000) : undefined;
    // An unknown country is planted on someone living in the export's home country, so a phone
    // number written nationally still has one right reading (the mapping's fallback region).
    const country = defect === 'unknown-country' ? spec.home : entry[0];
    const phone = phoneNumber(rng, country);
    const person: Person = {
      key: defect === 'duplicate-key' && previousKey ? previousKey : spec.key(i),
      sex,
      firstName,
      surname: defect === 'missing-surname' ? '' : surname,
      dob,
      country,
      countryWritten: defect === 'unknown-country' ? rng.pick(['Atlantis', 'Narnia', 'XX']) : rng.pick(entry[2]),
      // Broken in every region (`12345` was not: in Austria it is a Vienna number, 01 2345).
      phone: defect === 'invalid-phone' ? rng.pick(['000 000', '+44 12', '99']) : writePhone(rng, country, phone.nsn),
      email: `${asciiLocal(firstName)}.${asciiLocal(surname)}${rng.int(1, 99)}@${rng.pick(spec.domains)}`,
      incomeCents: ((c) => (rng.chance(0.5) ? c - (c % 100) : c))(rng.int(1_200_000, 12_000_000)),
      defect,
      truth: {
        dateOfBirth: defect === 'impossible-date' ? null : dob.iso,
        // Broken in every region (`12345` was not: in Austria it is a Vienna number, 01 2345).
        phone: defect === 'invalid-phone' ? null : phone.e164,
        country: defect === 'unknown-country' ? null : country,
        income: 0,
      },
    };
    person.truth.income = person.incomeCents / 100;
    if (defect === 'impossible-date') person.dob = { y: dob.y, m: 2, d: 31, iso: '' };
    previousKey = person.key;
    yield person;
  }
}

/** Writes a CSV export of `people`, one row a person, and returns what the generator knows. */
export async function writeCsvExport(
  kind: ForeignKind,
  path: string,
  spec: PeopleSpec,
  options: ForeignOptions,
  layout: { delimiter: string; encoding: 'utf-8' | 'latin1'; lineEnd: string; header: string[]; row: (p: Person, rng: Rng) => string[] },
): Promise<ForeignExport> {
  const file = await TextFile.open(path, layout.encoding);
  const rng = new Rng((options.seed ?? 29) + 1);
  const truth = new Map<string, TruthRow>();
  const defects: Record<string, string[]> = {};
  await file.line(layout.header.map((h) => csvField(h, layout.delimiter)).join(layout.delimiter), layout.lineEnd);
  let rows = 0;
  for (const p of people(spec, options)) {
    rows++;
    if (!truth.has(p.key)) truth.set(p.key, p.truth);
    if (p.defect) (defects[p.defect] ??= []).push(p.key);
    await file.line(
      layout
        .row(p, rng)
        .map((v) => csvField(v, layout.delimiter))
        .join(layout.delimiter),
      layout.lineEnd,
    );
  }
  await file.close();
  return { kind, files: [path], rows, truth, defects, bytes: file.bytes };
}

/** An amount of cents written with the separators given: `68,000.00`, `68.000,00`, `68 000,00`. */
export function writeAmount(cents: number, decimal: string, thousands: string): string {
  const whole = String(Math.floor(cents / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, thousands);
  return `${whole}${decimal}${String(cents % 100).padStart(2, '0')}`;
}
