/**
 * How a record row is stored compactly (schema version 4) and read back as the text the Ledger's
 * API speaks: referenceIds (UUIDs) and hashes (hex) as bytes, the state as a small number, the
 * time as milliseconds since 1970; the source file and the entity type by their id in a small
 * table (schema.ts). Each value is written in the compact form only when it comes back as exactly
 * the same text (a UUID in lower case, hex of lower-case digits, an ISO time as toISOString writes
 * it); any other text is stored as it is (SQLite keeps a value's own type per cell), so nothing a
 * caller wrote comes back different. The same rules in JavaScript (for the values a statement
 * binds) and in SQL (for the upgrade of a ledger of version 3 and the `records` view that shows
 * the rows as text), so that a value bound for a comparison has the form the row holds.
 */
import type { RecordState } from './types.js';

/**
 * Each record state's number in `record_rows.state`. Stored in ledgers: add a state with a new
 * number, never renumber one. SQLite stores 0 and 1 in the row's header alone (no byte of their
 * own), and a row keeps the room it was inserted with (its page is not rewritten when an update
 * makes it shorter): so 1 is the state rows are inserted with, and 0 the one most end in.
 */
export const RECORD_STATE_CODES: Readonly<Record<RecordState, number>> = {
  staged: 0,
  in_flight: 1,
  imported: 2,
  mapped: 3,
  rejected: 4,
  failed: 5,
  invalid: 6,
};

const STATE_ENTRIES = Object.entries(RECORD_STATE_CODES) as Array<[RecordState, number]>;

/**
 * The number of a record state, for a statement's parameter. A state outside the union stays its
 * text, which the column's CHECK refuses (the union is closed in the database too).
 */
export const stateCode = (state: RecordState): number => RECORD_STATE_CODES[state] ?? state;

/** States as a SQL list of their numbers (`IN (3, 5, 6)`). */
export const stateCodes = (...states: RecordState[]): string => states.map(stateCode).join(', ');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX = /^(?:[0-9a-f]{2})+$/;

/** A referenceId as stored: 16 bytes for a UUID in lower case, any other text as it is. */
export function uuidValue(id: string | null | undefined): Buffer | string | null {
  if (id === null || id === undefined) return null;
  return UUID.test(id) ? Buffer.from(id.replaceAll('-', ''), 'hex') : id;
}

/** A hash as stored: its bytes when it is lower-case hex, any other text as it is. */
export function hexValue(hash: string | null | undefined): Buffer | string | null {
  if (hash === null || hash === undefined) return null;
  return HEX.test(hash) ? Buffer.from(hash, 'hex') : hash;
}

/** Now, as a record's `updated_at` holds it: milliseconds since 1970 (the view shows toISOString's text; NULL: updatedAtText). */
export const nowValue = (): number => Date.now();

// SQL: the same rules, for the upgrade (text to compact) and for the view (compact to text).

/** SQL: the text of a state number. */
export const stateText = (col: string): string => `CASE ${col} ${STATE_ENTRIES.map(([s, n]) => `WHEN ${n} THEN '${s}'`).join(' ')} END`;

/** SQL: the number of a state's text (a ledger of version 3 holds every state's text, its CHECK saw to it). */
export const stateFromText = (col: string): string => `CASE ${col} ${STATE_ENTRIES.map(([s, n]) => `WHEN '${s}' THEN ${n}`).join(' ')} END`;

/** SQL: a stored referenceId as its text. */
export const uuidText = (col: string): string => {
  const part = (from: number, length?: number) => `substr(hex(${col}), ${from}${length ? `, ${length}` : ''})`;
  return `CASE WHEN typeof(${col}) = 'blob' THEN lower(${part(1, 8)} || '-' || ${part(9, 4)} || '-' || ${part(13, 4)} || '-' || ${part(17, 4)} || '-' || ${part(21)}) ELSE ${col} END`;
};

const HEX_DIGIT = '[0-9a-f]';
const UUID_GLOB = [8, 4, 4, 4, 12].map((n) => HEX_DIGIT.repeat(n)).join('-');

/** SQL: a referenceId's text as stored (uuidValue). */
export const uuidFromText = (col: string): string =>
  `CASE WHEN ${col} GLOB '${UUID_GLOB}' THEN unhex(replace(${col}, '-', '')) ELSE ${col} END`;

/** SQL: a stored hash as its text. */
export const hexText = (col: string): string => `CASE WHEN typeof(${col}) = 'blob' THEN lower(hex(${col})) ELSE ${col} END`;

/**
 * Bytes of a row's hash (src/pipeline/source/row-hash.ts): the first 128 bits of the row's sha256.
 * As for the content hash (batcher `encodeRecord`), plenty to tell a changed row from an unchanged
 * one, and 16 bytes of every record row instead of the 32 of the whole sha256, which ledgers of
 * version 3 kept (64 hex digits).
 */
export const ROW_HASH_BYTES = 16;

/**
 * SQL: a row hash a ledger of version 3 holds (the whole sha256, 64 hex digits) as the rows read
 * today hash: its first 32 digits, the same bits, so a row unchanged since compares equal. Any
 * other text (no hash: '') is kept as it is. The upgrade of a ledger of version 3 stores it so, and
 * one opened read-only shows it so (schema.ts).
 */
export const rowHashOfV3 = (col: string): string =>
  `CASE WHEN length(${col}) = ${4 * ROW_HASH_BYTES} AND NOT ${col} GLOB '*[^0-9a-f]*' THEN substr(${col}, 1, ${2 * ROW_HASH_BYTES}) ELSE ${col} END`;

/** SQL: a hash's text as stored (hexValue). */
export const hexFromText = (col: string): string =>
  `CASE WHEN length(${col}) > 0 AND length(${col}) % 2 = 0 AND NOT ${col} GLOB '*[^0-9a-f]*' THEN unhex(${col}) ELSE ${col} END`;

/** SQL: a stored time as toISOString's text (exact: whole seconds, then the milliseconds). */
export const timeText = (col: string): string =>
  `CASE WHEN typeof(${col}) = 'integer' THEN strftime('%Y-%m-%dT%H:%M:%S', ${col} / 1000, 'unixepoch') || printf('.%03dZ', ${col} % 1000) ELSE ${col} END`;

/**
 * SQL: a record's `updated_at` as text. NULL is the time its batch wrote it last: a batch's
 * records are written with the batch's `created_at` when it is opened, and with its
 * `finished_at` when it is settled (`done`); a batch that failed or stayed `building` left them
 * as it opened them. Most records are only ever written by their batch, so most hold no time.
 */
export const updatedAtText = (updatedAt: string, lastBatch: string): string =>
  `coalesce(${timeText(updatedAt)}, (SELECT CASE b.state WHEN 'done' THEN b.finished_at ELSE b.created_at END FROM batches b WHERE b.id = ${lastBatch}))`;

/** SQL: an ISO time's text as stored: milliseconds when they give the same text back, else the text. */
export const timeFromText = (col: string): string => {
  const ms = `(unixepoch(${col}) * 1000 + CAST(substr(${col}, 21, 3) AS INTEGER))`;
  return `CASE WHEN ${timeText(ms)} = ${col} THEN ${ms} ELSE ${col} END`;
};
