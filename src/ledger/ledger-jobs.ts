/**
 * Ledger changes that follow an import job, added by the reconcile work (the ledger's own
 * `markImported` marks every staged record of a migration, which is right only when nothing
 * failed). A partial import names the records it could not import: those keep state `staged`
 * with their import error attached (stage `import`), every other staged record of the
 * migration becomes `imported` — one transaction, so the report never sees half of it.
 */
import type { Ledger } from './ledger.js';
import type { RecordError } from './types.js';
import { errorsJson } from './record-errors.js';

/** A record the import job could not import. */
export interface ImportFailure {
  referenceId: string;
  message: string;
}

/**
 * Applies a completed import's outcome to the records of the migration.
 * @example markImportOutcome(ledger, migrationId, result.errors.filter((e) => e.referenceId).map(…))
 */
export function markImportOutcome(
  ledger: Ledger,
  migrationId: string,
  failures: readonly ImportFailure[],
): { imported: number; failed: number } {
  const db = ledger.db;
  const migration = ledger.migrationNo(migrationId);
  return db.transaction(() => {
    const now = new Date().toISOString();
    db.exec('CREATE TEMP TABLE IF NOT EXISTS import_failures (reference_id TEXT PRIMARY KEY, errors TEXT NOT NULL)');
    db.exec('DELETE FROM temp.import_failures');
    const ins = db.prepare('INSERT OR REPLACE INTO temp.import_failures (reference_id, errors) VALUES (?, ?)');
    for (const f of failures) {
      const error: RecordError = {
        stage: 'import',
        field: '',
        code: /^([A-Z][A-Z0-9_]{2,})\b/.exec(f.message)?.[1] ?? 'IMPORT_FAILED',
        message: f.message,
      };
      ins.run(f.referenceId, errorsJson([error]));
    }
    const failed = db
      .prepare(
        `UPDATE records SET errors = f.errors, updated_at = ? FROM temp.import_failures f WHERE f.reference_id = records.reference_id AND records.migration = ? AND records.state = 'staged'`,
      )
      .run(now, migration).changes;
    const imported = db
      .prepare(
        `UPDATE records SET state = 'imported', errors = NULL, updated_at = ? WHERE migration = ? AND state = 'staged' AND reference_id NOT IN (SELECT reference_id FROM temp.import_failures)`,
      )
      .run(now, migration).changes;
    db.exec('DELETE FROM temp.import_failures');
    return { imported, failed };
  })();
}
