/**
 * The service's SQLite database. WAL with synchronous NORMAL keeps writes fast and the database
 * consistent across a crash; every module creates its own tables with `CREATE … IF NOT EXISTS`
 * when it is registered, so the schema lives next to the code that uses it.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export type Db = Database.Database;

export function openDatabase(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, 'service.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Fewer, larger checkpoints: staging's scattered referenceIds dirty an index page per record,
  // and a page dirtied by many transactions is copied back once per checkpoint. 100,000 pages
  // (a WAL of up to ~400 MB, truncated when the service stops) staged an insert test a third
  // faster than 10,000; more, or none, was slower (docs/performance.md).
  db.pragma('wal_autocheckpoint = 100000');
  return db;
}
