/**
 * What personal data stagecoach keeps on this machine, as the ledger knows it: the files it
 * wrote that hold legacy rows (corrections files, reports written with values revealed), and
 * the refused rows' values and messages in the records' errors. `purge` and the retention
 * settings remove them (src/privacy/retention.ts); counts, codes, file:line and legacy keys stay.
 * Its table is created when first written, so older ledgers open unchanged.
 */
import type { Db } from './schema.js';

const DDL = `
  CREATE TABLE IF NOT EXISTS written_files (
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('corrections', 'report')),
    pipeline TEXT NOT NULL,
    migration_id TEXT,
    rows INTEGER NOT NULL DEFAULT 0,
    written_at TEXT NOT NULL,
    removed_at TEXT);
`;

export type WrittenFileKind = 'corrections' | 'report';

export interface WrittenFile {
  path: string;
  kind: WrittenFileKind;
  pipeline: string;
  migrationId?: string;
  rows: number;
  writtenAt: string;
}

const hasTable = (db: Db, name: string) =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

/**
 * Notes a file written with personal data (written again: its row is replaced, and it is held again).
 * @example recordWrittenFile(ledger.db, { path, kind: 'corrections', pipeline: 'crm', migrationId, rows: 8 });
 */
export function recordWrittenFile(db: Db, file: Omit<WrittenFile, 'writtenAt'> & { writtenAt?: string }): void {
  db.exec(DDL);
  db.prepare(
    'INSERT OR REPLACE INTO written_files (path, kind, pipeline, migration_id, rows, written_at, removed_at) VALUES (?, ?, ?, ?, ?, ?, NULL)',
  ).run(file.path, file.kind, file.pipeline, file.migrationId ?? null, file.rows, file.writtenAt ?? new Date().toISOString());
}

/** The files still held (not removed), of one pipeline or all. */
export function heldFiles(db: Db, pipeline?: string): WrittenFile[] {
  if (!hasTable(db, 'written_files')) return [];
  const rows = db
    .prepare(
      `SELECT path, kind, pipeline, migration_id AS migrationId, rows, written_at AS writtenAt FROM written_files
       WHERE removed_at IS NULL ${pipeline ? 'AND pipeline = ?' : ''} ORDER BY written_at, path`,
    )
    .all(...(pipeline ? [pipeline] : [])) as Array<WrittenFile & { migrationId: string | null }>;
  return rows.map(({ migrationId, ...r }) => ({ ...r, ...(migrationId ? { migrationId } : {}) }));
}

/** Notes that a file was removed (or found gone). */
export function markFileRemoved(db: Db, path: string): void {
  if (!hasTable(db, 'written_files')) return;
  db.prepare('UPDATE written_files SET removed_at = ? WHERE path = ?').run(new Date().toISOString(), path);
}

/** Records of a pipeline whose errors still hold the offending values. */
export function recordsWithValues(db: Db, pipeline: string): number {
  const row = db
    .prepare(`SELECT count(*) AS n FROM records r JOIN scopes s ON s.id = r.scope WHERE s.pipeline = ? AND r.errors LIKE '%"value"%'`)
    .get(pipeline) as { n: number };
  return row.n;
}

/**
 * Rewrites the errors of a pipeline's records without their values, messages through `redact`
 * (codes, fields and stages stay). Returns how many records changed.
 */
export function scrubRecordValues(
  db: Db,
  pipeline: string,
  redact: (message: string, field: string, value: unknown, code: string) => string,
): number {
  const rows = db
    .prepare(
      `SELECT r.rowid AS id, r.errors FROM records r JOIN scopes s ON s.id = r.scope WHERE s.pipeline = ? AND r.errors LIKE '%"value"%'`,
    )
    .all(pipeline) as Array<{ id: number; errors: string }>;
  const update = db.prepare('UPDATE records SET errors = ? WHERE rowid = ?');
  db.transaction(() => {
    for (const r of rows) {
      const errors = (JSON.parse(r.errors) as Array<{ field: string; code: string; message: string; value?: unknown }>).map(
        ({ value, ...e }) => ({ ...e, message: redact(e.message, e.field, value, e.code) }),
      );
      update.run(JSON.stringify(errors), r.id);
    }
  })();
  return rows.length;
}

/** When the migration's import job finished (the migration is complete), if it did. */
export function importFinishedAt(db: Db, migrationId: string): string | undefined {
  const row = db
    .prepare("SELECT max(finished_at) AS at FROM jobs WHERE migration_id = ? AND kind = 'import' AND state = 'done'")
    .get(migrationId) as { at: string | null } | undefined;
  return row?.at ?? undefined;
}
