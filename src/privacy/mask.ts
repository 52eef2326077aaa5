/**
 * How a value of a personal field is shown where it must not be read in the clear (reports,
 * terminal output, logs): masked so that a person fixing the data still recognises its shape
 * (`J. v** d** B***`, `**-**-19**`, `s***@p***.nl`), or replaced by a keyed hash so that two
 * reports of the same migration can be compared value by value without showing it.
 *
 * Pure string functions; who decides *which* values are personal is `redact.ts`.
 */
import { createHmac } from 'node:crypto';

/** How far a masked word keeps its length: never more than this many stars, so length leaks little. */
const MAX_STARS = 3;

const DATE = /^(\d{1,4})([-/.])(\d{1,2})\2(\d{1,4})(.*)$/;
const EMAIL = /^([^@\s]+)@([^@\s]+)$/;

/** Grapheme clusters (a letter with its combining marks is one): masking never splits a character. */
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** A cluster that belongs to a word: it begins with a letter or a digit (its marks follow it). */
const WORD_CLUSTER = /^[\p{L}\p{N}]/u;

/**
 * A word's first letter or digit, then stars: `Boer` → `B***`, `van` → `v**`, `J.` → `J.`.
 * Counted in grapheme clusters, so a decomposed `é` (e + U+0301) is one character, kept whole or
 * starred whole, never a star beside a lone combining mark.
 */
function maskWords(text: string): string {
  let out = '';
  let inWord = 0;
  for (const { segment } of GRAPHEMES.segment(text)) {
    if (!WORD_CLUSTER.test(segment)) {
      inWord = 0;
      out += segment;
      continue;
    }
    if (inWord++ === 0) out += segment;
    else if (inWord <= MAX_STARS + 1) out += '*';
  }
  return out;
}

/** Digits of a date, but the century of its year: `31-02-1980` → `**-**-19**`, `1980-02-31` → `19**-**-**`. */
function maskDate(m: RegExpExecArray): string {
  const [, a, sep, b, c, rest] = m as unknown as [string, string, string, string, string, string];
  const part = (p: string) => (p.length === 4 ? `${p.slice(0, 2)}**` : '*'.repeat(p.length));
  return [part(a), part(b), part(c)].join(sep) + (rest ? maskWords(rest) : '');
}

/** What kind of value it is decides the mask; financial values keep nothing but their length class. */
export type MaskKind = 'text' | 'financial';

/**
 * The masked form of a value.
 * @example maskValue('Johannes van den Boer') // 'J*** v** d** B***'
 * @example maskValue('31-02-1980')            // '**-**-19**'
 * @example maskValue('14.868,55', 'financial') // '*****'
 */
export function maskValue(value: unknown, kind: MaskKind = 'text'): string {
  if (value === null || value === undefined) return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === '') return '';
  if (kind === 'financial') return '*****';
  const date = DATE.exec(text.trim());
  if (date) return maskDate(date);
  const email = EMAIL.exec(text.trim());
  if (email) {
    const [, local, domain] = email as unknown as [string, string, string];
    const dot = domain.lastIndexOf('.');
    const tld = dot > 0 ? domain.slice(dot) : '';
    return `${maskWords(local)}@${maskWords(dot > 0 ? domain.slice(0, dot) : domain)}${tld}`;
  }
  return maskWords(text);
}

/**
 * A keyed hash of a value: the same value under the same key gives the same token, so two
 * reports of one migration can be compared; without the key it cannot be guessed from a list of
 * names or birth dates (which a plain hash could).
 * @example hashValue('Boer', key) // '#5f0c1a9e2b7d'
 */
export function hashValue(value: unknown, key: Buffer | string): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `#${createHmac('sha256', key).update(text).digest('hex').slice(0, 12)}`;
}
