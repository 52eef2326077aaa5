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
  // Fewer, larger checkpoints: staging writes hundreds of thousands of rows per request.
  db.pragma('wal_autocheckpoint = 100000');
  return db;
}
