/**
 * The hash a row's provenance carries (what the ledger keeps to tell a changed row), shared by
 * every source format.
 */
import * as crypto from 'node:crypto';
import { ROW_HASH_BYTES } from '../../ledger/compact.js';

/** Hex digits of a row's hash: the first 128 bits of its sha256 (the ledger's ROW_HASH_BYTES says why). */
export const ROW_HASH_HEX_DIGITS = 2 * ROW_HASH_BYTES;

/** The hash of a row's text as the source reads it: the first 128 bits of its sha256, hex. */
export const rowHash = (text: string): string => sha256Hex(text).slice(0, ROW_HASH_HEX_DIGITS);

// crypto.hash (Node ≥ 20.12) is the one-shot form: half the cost of createHash per row.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;
/** sha256 of a string (UTF-8), hex. */
export const sha256Hex: (text: string) => string = oneShot
  ? (text) => oneShot('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');
