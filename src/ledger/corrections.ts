/**
 * Corrections as a chapter of a record's life (docs/reconciliation.md, "A record's life through
 * corrections"). A row read from a corrections file is tied to the record it corrects by the
 * export row that record was read from (the file's `_origin` column: file:line), not by its key,
 * since a correction may give the row a key (a missing key cell filled in, a duplicate given its
 * own): the record is then re-keyed, so the row stays one record and its story goes with it.
 *
 * The record keeps the export row it replaced (`origin_file`, `origin_line`, `origin_hash`): a run
 * of the export (into its migration or a new one) that reads that row again with the same hash leaves the
 * correction alone (not reverted, not sent); a changed row (another hash), or a newer correction, is a newer version of
 * the record's own row and takes its place like any write (record-writes.ts, ORIGIN_ON_WRITE).
 */
import { stateText, uuidText } from './compact.js';
import type { Db } from './schema.js';
import { once } from './rows.js';

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
  /** 1: an invalid record --drop-invalid removed from staging (the platform no longer holds it). */
  removed: number;
}

/**
 * SQL: 1 when the record (table alias `t`) was removed from staging by `--drop-invalid` and the
 * removal still applies (no later batch sent it again): the platform no longer holds it.
 */
const removedFromStaging = (t: string) => `EXISTS (SELECT 1 FROM staging_removals sr
    WHERE sr.reference_id = ${uuidText(`${t}.reference_id`)} AND sr.migration_id = (SELECT reference_id FROM migrations WHERE id = ${t}.migration)
      AND sr.state = 'removed' AND sr.last_batch IS ${t}.last_batch)`;

/** Where `_origin` points: the record read from that export row, or corrected from it. */
const BY_ORIGIN = `SELECT keyed, legacy_key, ${stateText('state')} AS state, ${removedFromStaging('record_rows')} AS removed FROM record_rows WHERE scope = ?
  AND ((origin_file = ? AND origin_line = ?) OR (origin_file IS NULL AND file_id IN (SELECT id FROM record_files WHERE path = ?) AND line = ?))
  ORDER BY origin_file IS NULL LIMIT 1`;

/** What the ledger holds of the record a corrected row is about (`Corrections.target`). */
export interface CorrectionTarget {
  keyed: boolean;
  legacyKey: string;
  state: string;
  /** The source the record was read from. */
  source: string;
  /** The platform's id of the migration the record was last sent into, if any. */
  migration: string | null;
  /** Where the record was last read from (file:line). */
  at: string;
  /** Refused at validation and removed from staging since (`--drop-invalid`): the platform no longer holds it. */
  removed: boolean;
}

interface Target {
  keyed: number;
  legacy_key: string;
  state: string;
  source: string;
  migration: string | null;
  file: string;
  line: number;
  removed: number;
}

const TARGET_COLUMNS = `r.keyed, r.legacy_key, ${stateText('r.state')} AS state, f.source AS source, f.path AS file, r.line AS line,
  ${removedFromStaging('r')} AS removed,
  (SELECT reference_id FROM migrations WHERE id = r.migration) AS migration
  FROM record_rows r JOIN record_files f ON f.id = r.file_id`;
const TARGET_BY_ORIGIN = `SELECT ${TARGET_COLUMNS} WHERE r.scope = ?
  AND ((r.origin_file = ? AND r.origin_line = ?) OR (r.origin_file IS NULL AND f.path = ? AND r.line = ?))
  ORDER BY r.origin_file IS NULL LIMIT 1`;
const TARGET_BY_KEY = `SELECT ${TARGET_COLUMNS} WHERE r.scope = ? AND r.keyed = 1 AND r.legacy_key = ?`;

const toTarget = (t: Target): CorrectionTarget => ({
  keyed: t.keyed === 1,
  legacyKey: t.legacy_key,
  state: t.state,
  source: t.source,
  migration: t.migration,
  at: `${t.file}:${t.line}`,
  removed: t.removed === 1,
});

export class Corrections {
  private readonly byOrigin = once(() => this.db.prepare<[number, string, number, string, number], Held>(BY_ORIGIN));
  private readonly byKey = once(() =>
    this.db.prepare<[number, number, string], Held>(
      `SELECT keyed, legacy_key, ${stateText('state')} AS state, ${removedFromStaging('record_rows')} AS removed FROM record_rows WHERE scope = ? AND keyed = ? AND legacy_key = ?`,
    ),
  );
  private readonly rekey = once(() =>
    this.db.prepare('UPDATE record_rows SET keyed = ?, legacy_key = ?, former_key = ? WHERE scope = ? AND keyed = ? AND legacy_key = ?'),
  );
  private readonly rekeyStory = once(() =>
    this.db.prepare('UPDATE record_history SET keyed = ?, legacy_key = ? WHERE scope = ? AND keyed = ? AND legacy_key = ?'),
  );
  private readonly remember = once(() =>
    this.db.prepare(
      `UPDATE record_rows SET origin_file = coalesce(origin_file, (SELECT path FROM record_files WHERE id = record_rows.file_id)), origin_line = coalesce(origin_line, line),
         origin_hash = coalesce(origin_hash, row_hash) WHERE scope = ? AND keyed = ? AND legacy_key = ?`,
    ),
  );
  private readonly originsOf = once(() =>
    this.db.prepare<[number], { file: string; hash: string }>(
      'SELECT origin_file AS file, origin_hash AS hash FROM records WHERE scope = ? AND origin_file IS NOT NULL AND origin_hash IS NOT NULL',
    ),
  );

  private readonly targetByOrigin = once(() => this.db.prepare<[number, string, number, string, number], Target>(TARGET_BY_ORIGIN));
  private readonly targetByKey = once(() => this.db.prepare<[number, string], Target>(TARGET_BY_KEY));

  constructor(private readonly db: Db) {}

  /**
   * The record a row of a corrections file would correct, as the ledger holds it now: by the row's
   * `_origin` (the export row the refused record stands for), else (no `_origin`) by its key. A
   * corrections file is checked against it before anything is sent (corrections-pass.ts): a row
   * replaces only a record that is refused, and never adds one.
   * @example ledger.correctionTarget(scope, { file: 'samples/crm/klanten.csv', line: 136 }, '100133')
   */
  target(scopeId: number, origin: { file: string; line: number } | undefined, legacyKey: string | undefined): CorrectionTarget | undefined {
    if (origin) {
      const t = this.targetByOrigin().get(scopeId, origin.file, origin.line, origin.file, origin.line);
      if (t) return toTarget(t);
    }
    if (legacyKey === undefined) return undefined;
    const t = this.targetByKey().get(scopeId, legacyKey);
    return t ? toTarget(t) : undefined;
  }

  /**
   * Ties each corrected row to the record it corrects, in one transaction, before the row's own
   * write: the record remembers the export row it came from (unless it already does), and takes the
   * row's new key when the correction changed it and the record is one the platform does not hold
   * (refused before upload or by staging); its earlier story moves with it, and the refusal is marked
   * with the key it had (`former_key`, copied into the story by the trigger on the row's write).
   * A row without `_origin` (a file written before it existed) is tied by its key. A new key another
   * record holds already is not taken: the write then goes to that record, as before.
   * @example ledger.claimCorrections(scope, [{ keyed: 1, legacyKey: '100133', origin: { file: 'samples/crm/klanten.csv', line: 136 } }]);
   */
  claim(scopeId: number, claims: readonly CorrectionClaim[]): void {
    if (claims.length === 0) return;
    const byOrigin = this.byOrigin();
    const byKey = this.byKey();
    this.db.transaction(() => {
      for (const c of claims) {
        const o = c.origin;
        const held = (o && byOrigin.get(scopeId, o.file, o.line, o.file, o.line)) || byKey.get(scopeId, c.keyed, c.legacyKey);
        if (!held) continue;
        let at: Held = held;
        const moved = held.keyed !== c.keyed || held.legacy_key !== c.legacyKey;
        if (moved) {
          const offPlatform = held.state === 'rejected' || held.state === 'failed' || (held.state === 'invalid' && held.removed === 1);
          if (!offPlatform || byKey.get(scopeId, c.keyed, c.legacyKey)) continue;
          this.rekey().run(c.keyed, c.legacyKey, held.legacy_key, scopeId, held.keyed, held.legacy_key);
          this.rekeyStory().run(c.keyed, c.legacyKey, scopeId, held.keyed, held.legacy_key);
          at = { ...held, keyed: c.keyed, legacy_key: c.legacyKey };
        }
        this.remember().run(scopeId, at.keyed, at.legacy_key);
      }
    })();
  }

  /**
   * The export rows of a scope that corrections replaced, as `file\u0000rowHash`: a run of the
   * export skips a row it finds here (the correction stands), into the record's own migration or a
   * new one (the last completed or canceled): the corrected record keeps what that migration made of
   * it (imported: live on the platform), since the export's row, unchanged, is the defective one.
   * Few, so held in memory for a run.
   * @example const kept = ledger.correctedOrigins(scope); kept.has(`samples/crm/klanten.csv\u0000${row.hash}`)
   */
  origins(scopeId: number): Set<string> {
    return new Set(
      this.originsOf()
        .all(scopeId)
        .map((r) => originKey(r.file, r.hash)),
    );
  }
}

/** How `correctedOrigins` names an export row. */
export const originKey = (file: string, rowHash: string): string => `${file}\u0000${rowHash}`;
