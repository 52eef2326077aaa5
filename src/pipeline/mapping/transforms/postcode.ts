/**
 * The `postcode` transform: a postcode read by its country's rules, for exports that write
 * postcodes as numbers (JSON numbers, spreadsheet cells) and so lose their leading zeros:
 * Alicante's `03001` arrives as `3001`. Where the country's postcodes are a fixed number of
 * digits and may start with a zero, the missing zeros are certain and put back; a number the
 * country's format cannot make (too long, a country whose postcodes hold letters, a country that
 * never starts with a zero, no country) is refused, never staged as it came. Text that is not
 * all digits is left as written (collapsed spaces, upper case).
 */
import { TransformFailure } from './failure.js';

/**
 * Countries whose postcodes are digits only: how many, whether one may start with 0, and the
 * separator written after the first n digits (`110 00` in Czechia, `12-345` in Poland).
 */
const DIGIT_POSTCODES: Readonly<Record<string, { digits: number; zero: boolean; split?: [number, string] }>> = {
  DE: { digits: 5, zero: true },
  FR: { digits: 5, zero: true },
  ES: { digits: 5, zero: true },
  IT: { digits: 5, zero: true },
  US: { digits: 5, zero: true },
  FI: { digits: 5, zero: true },
  MC: { digits: 5, zero: false },
  HR: { digits: 5, zero: false },
  EE: { digits: 5, zero: false },
  GR: { digits: 5, zero: false, split: [3, ' '] },
  CZ: { digits: 5, zero: false, split: [3, ' '] },
  SK: { digits: 5, zero: true, split: [3, ' '] },
  SE: { digits: 5, zero: false, split: [3, ' '] },
  PL: { digits: 5, zero: true, split: [2, '-'] },
  LT: { digits: 5, zero: false },
  TR: { digits: 5, zero: true },
  MX: { digits: 5, zero: true },
  BE: { digits: 4, zero: false },
  AT: { digits: 4, zero: false },
  CH: { digits: 4, zero: false },
  LU: { digits: 4, zero: false },
  LI: { digits: 4, zero: false },
  DK: { digits: 4, zero: true },
  NO: { digits: 4, zero: true },
  HU: { digits: 4, zero: false },
  SI: { digits: 4, zero: false },
  BG: { digits: 4, zero: false },
  CY: { digits: 4, zero: false },
  AU: { digits: 4, zero: true },
  NZ: { digits: 4, zero: true },
  ZA: { digits: 4, zero: true },
  PT: { digits: 7, zero: false, split: [4, '-'] },
  RO: { digits: 6, zero: true },
  RU: { digits: 6, zero: false },
  IN: { digits: 6, zero: false },
};

/**
 * @example readPostcode('3001', 'ES') // '03001'
 *          readPostcode('11000', 'CZ') // '110 00'
 *          readPostcode('1234', 'NL') // a failure: Dutch postcodes end in two letters
 */
export function readPostcode(value: string, country: string | undefined): string | TransformFailure {
  const text = value.trim().replace(/\s+/g, ' ').toUpperCase();
  if (!/^\d+$/.test(text)) return text;
  if (country === undefined)
    return new TransformFailure('INVALID_FIELD_VALUE', 'a postcode written as a number, and no country to read it by');
  const rule = DIGIT_POSTCODES[country];
  if (!rule)
    return new TransformFailure('INVALID_FIELD_VALUE', `a postcode written as a number, but postcodes of ${country} are not digits only`);
  let digits = text;
  if (digits.length < rule.digits) {
    // Only zeros can have been lost, and only where a postcode can start with one.
    if (!rule.zero)
      return new TransformFailure(
        'INVALID_FIELD_VALUE',
        `${text.length} digits, expected ${rule.digits} for ${country}, whose postcodes never start with 0`,
      );
    digits = digits.padStart(rule.digits, '0');
  } else if (digits.length > rule.digits)
    return new TransformFailure('INVALID_FIELD_VALUE', `${text.length} digits, expected ${rule.digits} for ${country}`);
  return rule.split ? `${digits.slice(0, rule.split[0])}${rule.split[1]}${digits.slice(rule.split[0])}` : digits;
}
