/**
 * The hash a row's provenance carries (what the ledger keeps to tell a changed row), shared by
 * every source format.
 */
import * as crypto from 'node:crypto';

const FIELD_SEPARATOR = '\u001f';

/** sha256 (hex) of a row's fields in column order, joined by U+001F: quoting style does not count. */
export function hashFields(fields: readonly string[]): string {
  return sha256Hex(fields.join(FIELD_SEPARATOR));
}

// crypto.hash (Node ≥ 20.12) is the one-shot form: half the cost of createHash per row.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;
/** sha256 of a string (UTF-8), hex. */
export const sha256Hex: (text: string) => string = oneShot
  ? (text) => oneShot('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');
