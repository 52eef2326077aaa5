/**
 * The migration's log as the ledger keeps it: entries keyed by (migration, sequenceNumber), and
 * the cursor where the next read of the platform's log stream starts. An entry and the cursor
 * move in one transaction, so a crash resumes exactly after the last stored entry.
 */
import type { Database } from 'better-sqlite3';
import type { LogEntry } from '../contract/migration.js';

function createLogTables(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS migration_logs (
      migration_id TEXT NOT NULL,
      sequence_number INTEGER NOT NULL,
      timestamp TEXT NOT NULL,
      component TEXT NOT NULL,
      action TEXT NOT NULL,
      log_level TEXT NOT NULL,
      message TEXT NOT NULL,
      entry TEXT NOT NULL,
      PRIMARY KEY (migration_id, sequence_number)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS log_cursor (
      migration_id TEXT PRIMARY KEY,
      continue_from INTEGER NOT NULL);
  `);
}

/** Where the next read of the migration's log starts, from the ledger (undefined: the beginning). */
export function logCursor(db: Database, migrationId: string): number | undefined {
  const row = db
    .prepare<[string], { continue_from: number }>('SELECT continue_from FROM log_cursor WHERE migration_id = ?')
    .get(migrationId);
  return row?.continue_from;
}

/** The stored entries of a migration, in order. */
export function storedLogs(db: Database, migrationId: string, fromSequence = 1): Array<LogEntry & { sequenceNumber: number }> {
  return db
    .prepare<[string, number], { entry: string }>(
      'SELECT entry FROM migration_logs WHERE migration_id = ? AND sequence_number >= ? ORDER BY sequence_number',
    )
    .all(migrationId, fromSequence)
    .map((r) => JSON.parse(r.entry) as LogEntry & { sequenceNumber: number });
}

/**
 * Stores entries of one migration's log and reads its cursor.
 * @example const log = migrationLog(ledger.db, id); log.store(entry, 7, true); log.cursor() // 8
 */
export function migrationLog(db: Database, migrationId: string) {
  createLogTables(db);
  const insert = db.prepare(
    'INSERT OR IGNORE INTO migration_logs (migration_id, sequence_number, timestamp, component, action, log_level, message, entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const moveCursor = db.prepare(
    'INSERT INTO log_cursor (migration_id, continue_from) VALUES (?, ?) ON CONFLICT (migration_id) DO UPDATE SET continue_from = MAX(continue_from, excluded.continue_from)',
  );
  const store = db.transaction((entry: LogEntry, seq: number, moveTheCursor: boolean) => {
    insert.run(
      migrationId,
      seq,
      entry.timestamp,
      entry.component,
      entry.action,
      entry.logLevel,
      entry.message,
      JSON.stringify({ ...entry, sequenceNumber: seq }),
    );
    if (moveTheCursor) moveCursor.run(migrationId, seq + 1);
  });
  return {
    store: (entry: LogEntry, seq: number, moveTheCursor: boolean): void => store(entry, seq, moveTheCursor),
    cursor: (): number | undefined => logCursor(db, migrationId),
  };
}
