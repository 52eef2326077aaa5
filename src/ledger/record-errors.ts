/**
 * A record's errors as the ledger stores them (`records.errors`, JSON). Each value and message
 * is cut on the way in (src/contract/cut.ts), whoever built it: one 60 MiB value echoed in an
 * error grew the ledger by 126 MB, twice what the value itself weighed.
 */
import { cutText, cutValue, MESSAGE_CHARS } from '../contract/cut.js';
import type { RecordError } from './types.js';

/** The errors' JSON with every value and message cut. */
export function errorsJson(errors: readonly RecordError[]): string {
  return JSON.stringify(
    errors.map((e) => {
      const out: RecordError = { ...e, message: cutText(e.message, MESSAGE_CHARS) };
      if (e.value !== undefined) out.value = cutValue(e.value);
      return out;
    }),
  );
}
