/**
 * The `phone` transform: a phone number in any national or international notation (`06-12 34
 * 56 78`, `+44 (0)7911 123456`, `0044 …`, `(212) 555-0123`) as E.164, through libphonenumber-js
 * (Google's libphonenumber metadata) rather than rules of our own. The `max` metadata is used:
 * `min` checks only a number's length, so it would pass numbers of ranges that are never issued
 * (docs/mappings.md). A national number needs a region: the one the mapping declares, or the
 * row's country column (`regionColumn`, read through the country resolver) falling back to the
 * declared one. Nothing is assumed: without a region only international numbers are read.
 */
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { CountryReading } from './country.js';
import { TransformFailure } from './failure.js';

/**
 * How strictly a number is held to its region: `valid`, in a range the numbering plan issues
 * (libphonenumber's isValid); `possible`, of a length the plan has (isPossible), for exports
 * whose numbers are made up, as test data is.
 */
export type PhoneCheck = 'valid' | 'possible';

const NO_REGION = 'declare one ({ phone: { region: NL } }) or read it from a column (regionColumn)';

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
): string | TransformFailure {
  let s = text.trim();
  // Without a region there is no international call prefix to know; 00 is the one most of the world dials.
  if (region === undefined && s.startsWith('00')) s = `+${s.slice(2)}`;
  if (region === undefined && !s.startsWith('+')) {
    return new TransformFailure('INVALID_FIELD_VALUE', `a national phone number, but no region is known: ${noRegion}`);
  }
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
}

/** Whether libphonenumber knows the numbering plan of a region (ISO 3166 alpha-2). */
export function isPhoneRegion(region: string): boolean {
  return isSupportedCountry(region);
}

export interface PhoneSpec {
  check?: PhoneCheck | undefined;
  /** Region of numbers written without an international prefix (when the row names none). */
  region?: string | undefined;
  /** Reads the row's region column (an `accessor`), with its name for messages. */
  regionColumn?: { name: string; get: (row: Record<string, unknown>) => unknown } | undefined;
}

/**
 * Compiles a phone declaration into a step. With a region column the step reads the row; a
 * country form the resolver does not know is refused (a national number's region would be a guess).
 * Throws when the declared region has no numbering plan.
 */
export function compilePhone(
  spec: PhoneSpec,
  resolveCountry: () => (value: string) => CountryReading,
): (value: unknown, row: Record<string, unknown>) => string | TransformFailure {
  const { region, regionColumn, check = 'valid' } = spec;
  if (region !== undefined && !isPhoneRegion(region))
    throw new Error(`phone region ${JSON.stringify(region)} is no ISO 3166 alpha-2 code with a numbering plan`);
  const asText = (v: unknown) => (typeof v === 'string' ? v : String(v));
  if (regionColumn === undefined) return (v) => readPhone(asText(v), region, check);
  const resolve = resolveCountry();
  const { name, get } = regionColumn;
  const emptyColumn = `column ${name} is empty and the mapping declares no region ({ phone: { regionColumn: ${name}, region: NL } })`;
  return (v, row) => {
    const cell = get(row);
    const text = cell === undefined || cell === null ? '' : asText(cell).trim();
    if (text === '') return readPhone(asText(v), region, check, emptyColumn);
    const read = resolve(text);
    if (typeof read !== 'string' || !isPhoneRegion(read)) {
      return new TransformFailure(
        'INVALID_FIELD_VALUE',
        `the region column ${name} holds \`${text}\`, which is no country with a numbering plan`,
      );
    }
    return readPhone(asText(v), read, check);
  };
}
