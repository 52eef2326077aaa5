/**
 * Corrections as a chapter of a record's life (docs/reconciliation.md, "A record's life through
 * corrections"). A row read from a corrections file is tied to the record it corrects by the
 * export row that record was read from (the file's `_origin` column: file:line), not by its key,
 * since a correction may give the row a key (a missing key cell filled in, a duplicate given its
 * own): the record is then re-keyed, so the row stays one record and its story goes with it.
 *
 * The record keeps the export row it replaced (`origin_file`, `origin_line`, `origin_hash`): a run
 * of the export (into the same migration) that reads that row again with the same hash leaves the
 * correction alone (not reverted, not sent); a changed row (another hash), or a newer correction, is a newer version of
 * the record's own row and takes its place like any write (ledger.ts, ORIGIN_ON_WRITE).
 */
import type { Db } from './schema.js';

/** The record a row of a corrections file is about to be written as, and the export row it corrects. */
export interface CorrectionClaim {
  /** 1: `legacyKey` is the legacy key; 0: it is the corrections file's `file:line` (no usable key). */
  keyed: 0 | 1;
  legacyKey: string;
  /** The export row the corrected record was read from (`_origin`), when the corrections file says. */
  origin?: { file: string; line: number } | undefined;
}

interface Held {
  keyed: number;
  legacy_key: string;
  state: string;
}

/** Where `_origin` points: the record read from that export row, or corrected from it. */
const BY_ORIGIN = `SELECT keyed, legacy_key, state FROM records WHERE scope = ?
  AND ((origin_file = ? AND origin_line = ?) OR (origin_file IS NULL AND file = ? AND line = ?))
  ORDER BY origin_file IS NULL LIMIT 1`;

/**
 * Ties each corrected row to the record it corrects, in one transaction, before the row's own
 * write: the record remembers the export row it came from (unless it already does), and takes the
 * row's new key when the correction changed it and the record is one the platform does not hold
 * (refused before upload or by staging); its earlier story moves with it, and the refusal is marked
 * with the key it had (`former_key`, copied into the story by the trigger on the row's write).
 * A row without `_origin` (a file written before it existed) is tied by its key. A new key another
 * record holds already is not taken: the write then goes to that record, as before.
 * @example claimCorrections(db, scope.id, [{ keyed: 1, legacyKey: '100133', origin: { file: 'samples/crm/klanten.csv', line: 136 } }]);
 */
export function claimCorrections(db: Db, scopeId: number, claims: readonly CorrectionClaim[]): void {
  if (claims.length === 0) return;
  const byOrigin = db.prepare<[number, string, number, string, number], Held>(BY_ORIGIN);
  const byKey = db.prepare<[number, number, string], Held>(
    'SELECT keyed, legacy_key, state FROM records WHERE scope = ? AND keyed = ? AND legacy_key = ?',
  );
  const rekey = db.prepare('UPDATE records SET keyed = ?, legacy_key = ?, former_key = ? WHERE scope = ? AND keyed = ? AND legacy_key = ?');
  const rekeyStory = db.prepare('UPDATE record_history SET keyed = ?, legacy_key = ? WHERE scope = ? AND keyed = ? AND legacy_key = ?');
  const remember = db.prepare(
    `UPDATE records SET origin_file = coalesce(origin_file, file), origin_line = coalesce(origin_line, line),
       origin_hash = coalesce(origin_hash, row_hash) WHERE scope = ? AND keyed = ? AND legacy_key = ?`,
  );
  db.transaction(() => {
    for (const c of claims) {
      const o = c.origin;
      const held = (o && byOrigin.get(scopeId, o.file, o.line, o.file, o.line)) || byKey.get(scopeId, c.keyed, c.legacyKey);
      if (!held) continue;
      let at: Held = held;
      const moved = held.keyed !== c.keyed || held.legacy_key !== c.legacyKey;
      if (moved) {
        const offPlatform = held.state === 'rejected' || held.state === 'failed';
        if (!offPlatform || byKey.get(scopeId, c.keyed, c.legacyKey)) continue;
        rekey.run(c.keyed, c.legacyKey, held.legacy_key, scopeId, held.keyed, held.legacy_key);
        rekeyStory.run(c.keyed, c.legacyKey, scopeId, held.keyed, held.legacy_key);
        at = { ...held, keyed: c.keyed, legacy_key: c.legacyKey };
      }
      remember.run(scopeId, at.keyed, at.legacy_key);
    }
  })();
}

/**
 * The export rows of a scope that corrections replaced, as `file\u0000rowHash`: a run of the
 * export into migration `migrationNo` skips a row it finds here (the correction stands). Only
 * corrections sent to that migration, or to none (refused before upload): a new migration (the
 * last one completed or canceled) starts from the export, and the corrections file lists those
 * rows again. Few, so held in memory for a run.
 * @example const kept = correctedOrigins(db, scope.id, migrationNo); kept.has(`samples/crm/klanten.csv\u0000${row.hash}`)
 */
export function correctedOrigins(db: Db, scopeId: number, migrationNo: number | undefined): Set<string> {
  // A ledger of version 1 opened read-only (plan --ledger) has no correction to keep.
  if (!(db.pragma('table_info(records)') as { name: string }[]).some((c) => c.name === 'origin_hash')) return new Set();
  const rows = db
    .prepare<[number, number], { file: string; hash: string }>(
      `SELECT origin_file AS file, origin_hash AS hash FROM records WHERE scope = ? AND origin_file IS NOT NULL AND origin_hash IS NOT NULL
         AND (migration IS NULL OR migration = ?)`,
    )
    .all(scopeId, migrationNo ?? -1);
  return new Set(rows.map((r) => originKey(r.file, r.hash)));
}

/** How `correctedOrigins` names an export row. */
export const originKey = (file: string, rowHash: string): string => `${file}\u0000${rowHash}`;
