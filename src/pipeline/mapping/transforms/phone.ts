/**
 * The `phone` transform: a phone number in any national or international notation (`06-12 34
 * 56 78`, `+44 (0)7911 123456`, `0044 …`, `(212) 555-0123`) as E.164, through libphonenumber-js
 * (Google's libphonenumber metadata) rather than rules of our own. The `max` metadata is used:
 * `min` checks only a number's length, so it would pass numbers of ranges that are never issued
 * (docs/mappings.md). It is imported from the library's ES2015 build (`max/es6`, the same code
 * and metadata without the transpiled object spreads of its older build): 2.9 instead of 4.8 µs
 * a Dutch number, the same answers (test/unit/transform-phone.test.ts checks against the other). A national number needs a region: the one the mapping declares, or the
 * row's country column (`regionColumn`, read through the country resolver) falling back to the
 * declared one. Nothing is assumed: without a region only international numbers are read.
 *
 * Reading a number is two parts: the text and its region (cheap, read from the row), and the
 * library's parse (`parsePhone`, 9-30 µs, a pure function of text, region and check). A step
 * asks its parses of a `PhoneParser`: `parsePhone` itself, or `PhoneAnswers`, which looks them
 * up among the answers the phone worker (parallel/phone-worker.ts) gave ahead of mapping.
 */
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max/es6';
import type { CountryReading } from './country.js';
import { TransformFailure } from './failure.js';

/**
 * How strictly a number is held to its region: `valid`, in a range the numbering plan issues
 * (libphonenumber's isValid); `possible`, of a length the plan has (isPossible), for exports
 * whose numbers are made up, as test data is.
 */
export type PhoneCheck = 'valid' | 'possible';

const NO_REGION = 'declare one ({ phone: { region: NL } }) or read it from a column (regionColumn)';

/** The library's part of reading a number: `s` (trimmed, `00` read as `+` when there is no region) as E.164, or why not. */
export type PhoneParser = (s: string, region: string | undefined, check: PhoneCheck) => string | TransformFailure;

/**
 * The text libphonenumber is given, or the refusal of a national number without a region
 * (which needs no parse). Without a region there is no international call prefix to know; 00
 * is the one most of the world dials.
 */
function phoneText(text: string, region: string | undefined, noRegion: string): string | TransformFailure {
  const s = text.trim();
  if (region !== undefined) return s;
  if (s.startsWith('00')) return `+${s.slice(2)}`;
  if (s.startsWith('+')) return s;
  return new TransformFailure('INVALID_FIELD_VALUE', `a national phone number, but no region is known: ${noRegion}`);
}

/** libphonenumber's reading of a number's text (see PhoneParser): what the phone worker runs. */
export const parsePhone: PhoneParser = (s, region, check) => {
  const parsed = parsePhoneNumberFromString(
    s,
    region === undefined ? { extract: false } : { defaultCountry: region as CountryCode, extract: false },
  );
  if (parsed === undefined) {
    return new TransformFailure(
      'INVALID_FIELD_VALUE',
      region === undefined
        ? 'not a phone number, expected an international number (+…)'
        : `not a phone number, expected a number of region ${region} or an international one`,
    );
  }
  if (parsed.ext !== undefined)
    return new TransformFailure(
      'INVALID_FIELD_VALUE',
      'a phone number with an extension, which E.164 cannot hold; expected the number alone',
    );
  if (check === 'valid' ? !parsed.isValid() : !parsed.isPossible()) {
    const own = parsed.country ?? `+${parsed.countryCallingCode}`;
    return new TransformFailure(
      'INVALID_FIELD_VALUE',
      check === 'valid' ? `not a valid phone number for region ${own}` : `not a possible phone number for region ${own} (its length)`,
    );
  }
  return parsed.number;
};

/**
 * A phone number as E.164, or why not. `region`: ISO 3166 alpha-2 of a number written without
 * an international prefix; without one, such a number is refused (`00` is read as `+`).
 * @example readPhone('06-12 34 56 78', 'NL') // '+31612345678'
 *          readPhone('+44 (0)7911 123456') // '+447911123456'
 */
export function readPhone(
  text: string,
  region: string | undefined,
  check: PhoneCheck = 'valid',
  noRegion = NO_REGION,
  parse: PhoneParser = parsePhone,
): string | TransformFailure {
  const s = phoneText(text, region, noRegion);
  return typeof s === 'string' ? parse(s, region, check) : s;
}

/** Whether libphonenumber knows the numbering plan of a region (ISO 3166 alpha-2). */
export function isPhoneRegion(region: string): boolean {
  return isSupportedCountry(region);
}

/** One parse, as a key: regions are two letters (isPhoneRegion), so the fields cannot run into each other. */
export function phoneKey(s: string, region: string | undefined, check: PhoneCheck): string {
  return `${check === 'valid' ? 'v' : 'p'}${region ?? '--'}${s}`;
}

/** The parses a batch of rows will ask for, each once: what the phone worker is handed. */
export class PhoneQuestions {
  readonly keys: string[] = [];
  readonly texts: string[] = [];
  readonly regions: (string | undefined)[] = [];
  readonly checks: PhoneCheck[] = [];
  private readonly seen = new Set<string>();

  add(s: string, region: string | undefined, check: PhoneCheck): void {
    const key = phoneKey(s, region, check);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.keys.push(key);
    this.texts.push(s);
    this.regions.push(region);
    this.checks.push(check);
  }
}

/**
 * The parses of the batch being mapped, answered ahead (by `phoneKey`). A parse not among them
 * (a number a row's earlier steps changed past what was asked, one inside an `each`, or any
 * parse while no answers are given, as in a reader worker) is made here by the same function:
 * the values are the same either way, only where the time is spent differs.
 */
export class PhoneAnswers {
  private answers: ReadonlyMap<string, string | TransformFailure> | undefined;

  readonly parse: PhoneParser = (s, region, check) => this.answers?.get(phoneKey(s, region, check)) ?? parsePhone(s, region, check);

  /** The answers of the batch about to be mapped (`undefined`: none, every parse is made here). */
  use(answers: ReadonlyMap<string, string | TransformFailure> | undefined): void {
    this.answers = answers;
  }
}

export interface PhoneSpec {
  check?: PhoneCheck | undefined;
  /** Region of numbers written without an international prefix (when the row names none). */
  region?: string | undefined;
  /** Reads the row's region column (an `accessor`), with its name for messages. */
  regionColumn?: { name: string; get: (row: Record<string, unknown>) => unknown } | undefined;
}

/** A compiled phone declaration: the step, and what it will ask the library for a value (to ask it ahead). */
export interface PhoneStep {
  step: (value: unknown, row: Record<string, unknown>) => string | TransformFailure;
  ask: (value: unknown, row: Record<string, unknown>, questions: PhoneQuestions) => void;
}

/**
 * Compiles a phone declaration into a step. With a region column the step reads the row; a
 * country form the resolver does not know is refused (a national number's region would be a guess).
 * Throws when the declared region has no numbering plan. `parse`: where the step's parses come from.
 */
export function compilePhone(
  spec: PhoneSpec,
  resolveCountry: () => (value: string) => CountryReading,
  parse: PhoneParser = parsePhone,
): PhoneStep {
  const { region, regionColumn, check = 'valid' } = spec;
  if (region !== undefined && !isPhoneRegion(region))
    throw new Error(`phone region ${JSON.stringify(region)} is no ISO 3166 alpha-2 code with a numbering plan`);
  const asText = (v: unknown) => (typeof v === 'string' ? v : String(v));
  const regionOf = regionReader(region, regionColumn, resolveCountry, asText);
  return {
    step: (v, row) => {
      const r = regionOf(row);
      return r instanceof TransformFailure ? r : readPhone(asText(v), r.region, check, r.noRegion, parse);
    },
    ask: (v, row, questions) => {
      const r = regionOf(row);
      if (r instanceof TransformFailure) return;
      const s = phoneText(asText(v), r.region, r.noRegion);
      if (typeof s === 'string') questions.add(s, r.region, check);
    },
  };
}

/** A row's region for its number, with the advice a national number without one gets, or why the row names no region. */
function regionReader(
  region: string | undefined,
  regionColumn: PhoneSpec['regionColumn'],
  resolveCountry: () => (value: string) => CountryReading,
  asText: (v: unknown) => string,
): (row: Record<string, unknown>) => { region: string | undefined; noRegion: string } | TransformFailure {
  const declared = { region, noRegion: NO_REGION };
  if (regionColumn === undefined) return () => declared;
  const resolve = resolveCountry();
  const { name, get } = regionColumn;
  const whenEmpty = {
    region,
    noRegion: `column ${name} is empty and the mapping declares no region ({ phone: { regionColumn: ${name}, region: NL } })`,
  };
  return (row) => {
    const cell = get(row);
    const text = cell === undefined || cell === null ? '' : asText(cell).trim();
    if (text === '') return whenEmpty;
    const read = resolve(text);
    if (typeof read !== 'string' || !isPhoneRegion(read)) {
      return new TransformFailure(
        'INVALID_FIELD_VALUE',
        `the region column ${name} holds \`${text}\`, which is no country with a numbering plan`,
      );
    }
    return { region: read, noRegion: NO_REGION };
  };
}
