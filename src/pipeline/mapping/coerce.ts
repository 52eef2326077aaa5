/**
 * Coercion: a value of one JSON type where staging takes another. A legacy JSON export writes
 * house numbers as numbers (`huisnummer: 3`) and flags as booleans; staging takes text where
 * the platform does, numbers for amounts, booleans for flags. What can be converted without
 * guessing is converted; anything else is refused saying what was expected and what came.
 */
import type { TargetKind } from './schema.js';
import { TransformFailure } from './transforms/failure.js';
import { cutText } from '../../contract/cut.js';

/** A value in a message: in backticks (where the redactor masks it), cut to 60 characters. */
export function describeValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return `\`${s === undefined ? s : showInvisible(cutText(s))}\``;
}

/** Characters a reader cannot see or tell from a space: no-break and other spaces, zero-width and control characters, soft hyphens. */
const INVISIBLE = /[\p{Cc}\p{Cf}\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/gu;

/**
 * A value as a message shows it: every invisible character written as its escape, so a reason
 * that hangs on one can be seen (`45\u00a0000,00`: a no-break space, not a space).
 * @example showInvisible('45\u00a0000') // '45\\u00a0000'
 */
export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What a value is, for "expected a string, got the number `3`". */
export function kindOf(v: unknown): string {
  if (typeof v === 'string') return `the text ${describeValue(v)}`;
  if (typeof v === 'number') return `the number ${describeValue(v)}`;
  if (typeof v === 'boolean') return `the boolean ${describeValue(v)}`;
  if (Array.isArray(v)) return `a list ${describeValue(v)}`;
  return `an object ${describeValue(v)}`;
}

const PLAIN_INTEGER = /^[-+]?\d+$/;
/** One separator, either: a decimal one unless it could group thousands (1 to 3 digits, then exactly 3). */
const ONE_SEPARATOR = /^([-+]?)(\d+)[.,](\d+)$/;

/**
 * `v` as staging takes it at a place of kind `kind`, or a failure. Text: a number becomes its
 * digits ("3"); a boolean is refused, since "true" is no house number nor name (a code table
 * with keys true and false says what it means). Number: text that is a number whatever the
 * decimal separator ("12", "-3", "12,5", "12.50"); "1.234" could be 1234 or 1.234 and is refused
 * (a `number` transform says which). Boolean: the text "true" or "false"; anything else is left
 * to the `boolean` transform, which knows j/n, ja/nee.
 * @example coerceTo('string', 3) // '3'
 *          coerceTo('number', '1.234') // TransformFailure('… ambiguous …')
 */
export function coerceTo(kind: TargetKind, v: unknown): unknown {
  if (typeof v === kind) return v;
  if (kind === 'string') {
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    return new TransformFailure(
      'INVALID_FIELD_VALUE',
      `expected a string, got ${kindOf(v)}${typeof v === 'boolean' ? ' (a { code: … } table can say what it stands for)' : ''}`,
    );
  }
  if (kind === 'number') {
    if (typeof v === 'string') {
      const s = v.trim();
      if (PLAIN_INTEGER.test(s)) return Number(s);
      const m = ONE_SEPARATOR.exec(s);
      if (m && !(m[2]!.length <= 3 && m[3]!.length === 3)) return Number(`${m[1]}${m[2]}.${m[3]}`);
      if (m)
        return new TransformFailure(
          'INVALID_FIELD_VALUE',
          `expected a number, got ${kindOf(v)}, which reads as a thousand or as a fraction; say which with { number: { decimal, thousands } }`,
        );
      return new TransformFailure('INVALID_FIELD_VALUE', `expected a number, got ${kindOf(v)} (a { number: … } transform reads 1.234,56)`);
    }
    return new TransformFailure('INVALID_FIELD_VALUE', `expected a number, got ${kindOf(v)}`);
  }
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true' || s === 'false') return s === 'true';
    return new TransformFailure(
      'INVALID_FIELD_VALUE',
      `expected true or false, got ${kindOf(v)} (the boolean transform reads j/n, ja/nee, y/n, 1/0)`,
    );
  }
  return new TransformFailure('INVALID_FIELD_VALUE', `expected true or false, got ${kindOf(v)}`);
}
