/**
 * The migration log: what staging, validation, import and counts did, per migration, numbered
 * 1, 2, 3… (`sequenceNumber`) in the order it happened. Entries are appended inside the
 * transaction of the change they describe, so the log never claims what did not commit.
 */
import type { LogEntry } from '../../contract/migration.js';
import { COUNTER_FIELD } from '../../contract/shared.js';
import type { Db } from '../store/database.js';

/** Actions written by the service (the spec shows StagedEntities and ImportedEntities). */
export const LOG_ACTIONS = [
  'CreatedMigration',
  'StagedEntities',
  'RejectedEntities',
  'DeletedStagedEntities',
  'ValidatedStaging',
  'ImportedEntities',
  'CountedEntities',
  'CanceledMigration',
] as const;
export type LogAction = (typeof LOG_ACTIONS)[number];
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Component of entries about the migration as a whole rather than one domain. */
export const MIGRATION_COMPONENT = 'Migration';

export interface NewLogEntry {
  component: string;
  entityReferenceIds?: readonly string[];
  action: LogAction;
  message: string;
  logLevel: LogLevel;
}

export interface LogRow {
  seq: number;
  component: string;
  entity_ids: string;
  action: string;
  timestamp: string;
  message: string;
  log_level: string;
}

export function createLogTables(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS migration_logs (
      migration_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      component TEXT NOT NULL,
      entity_ids TEXT NOT NULL,
      action TEXT NOT NULL,
      timestamp TEXT NOT NULL,
      message TEXT NOT NULL,
      log_level TEXT NOT NULL,
      PRIMARY KEY (migration_id, seq)) WITHOUT ROWID;
  `);
}

/**
 * Appends log entries of one migration. Call inside the transaction of the change they describe.
 * @example
 *   const log = logWriter(db);
 *   log(migrationId, { component: 'Counterparties', action: 'StagedEntities', logLevel: 'INFO', message: 'staged 2 records', entityReferenceIds: ids });
 */
export function logWriter(db: Db): (migrationId: string, entry: NewLogEntry) => number {
  const last = db.prepare<[string], { last: number | null }>('SELECT MAX(seq) AS last FROM migration_logs WHERE migration_id = ?');
  const insert = db.prepare(
    'INSERT INTO migration_logs (migration_id, seq, component, entity_ids, action, timestamp, message, log_level) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return (migrationId, entry) => {
    const seq = (last.get(migrationId)?.last ?? 0) + 1;
    insert.run(
      migrationId,
      seq,
      entry.component,
      JSON.stringify(entry.entityReferenceIds ?? []),
      entry.action,
      new Date().toISOString(),
      entry.message,
      entry.logLevel,
    );
    return seq;
  };
}

/** The streamed shape of a stored entry, `sequenceNumber` first. */
export function renderLogEntry(row: LogRow): LogEntry {
  return {
    [COUNTER_FIELD]: row.seq,
    component: row.component,
    entityReferenceIds: JSON.parse(row.entity_ids) as string[],
    action: row.action,
    timestamp: row.timestamp,
    message: row.message,
    logLevel: row.log_level as LogLevel,
  };
}
