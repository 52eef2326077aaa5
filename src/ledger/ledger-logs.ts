/**
 * Where reading a migration's log continues: the ledger keeps the stream position (the next
 * `sequenceNumber`, `log_cursor`), never the log's text. The log is the platform's; a copy in
 * the ledger grew it by about 5 KB a record (543 MB for 100,000 persons with many refusals)
 * while nothing read it back: the reconciliation takes per-record outcomes from the jobs'
 * results, and `stagecoach logs` reads the entries from the platform again.
 *
 * Ledgers made before this keep their `migration_logs` table as it is; nothing reads or adds
 * to it (docs/ledger.md says how to drop it).
 */
import type { Database } from 'better-sqlite3';

// Also in schema.ts's DDL; repeated so that a plain database (tests, tools) gets it too.
const CURSOR_TABLE = 'CREATE TABLE IF NOT EXISTS log_cursor (migration_id TEXT PRIMARY KEY, continue_from INTEGER NOT NULL)';

/** Where the next read of the migration's log starts, from the ledger (undefined: the beginning). */
export function logCursor(db: Database, migrationId: string): number | undefined {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'log_cursor'").get();
  if (!exists) return undefined;
  const row = db
    .prepare<[string], { continue_from: number }>('SELECT continue_from FROM log_cursor WHERE migration_id = ?')
    .get(migrationId);
  return row?.continue_from;
}

/**
 * Moves the migration's log cursor forward (never back), durable when it returns.
 * @example const cursor = logCursorMover(ledger.db, id); cursor(8); logCursor(ledger.db, id) // 8
 */
export function logCursorMover(db: Database, migrationId: string): (continueFrom: number) => void {
  db.exec(CURSOR_TABLE);
  const move = db.prepare(
    'INSERT INTO log_cursor (migration_id, continue_from) VALUES (?, ?) ON CONFLICT (migration_id) DO UPDATE SET continue_from = MAX(continue_from, excluded.continue_from)',
  );
  return (continueFrom) => {
    move.run(migrationId, continueFrom);
  };
}
