/**
 * The ledger's SQLite file: opening it with the pragmas the pipeline needs, and its tables.
 * docs/ledger.md describes every table and column; keep the two in step.
 *
 * Why these pragmas: WAL with synchronous NORMAL survives `kill -9` (a committed transaction is
 * in the WAL before `COMMIT` returns; only a power loss can drop the last ones), and a large
 * `wal_autocheckpoint` turns thousands of small checkpoints into a few big ones, the biggest
 * single saving measured for per-batch transactions (docs/dependencies.md: 34k → 122k rows/s).
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { StagecoachError } from '../contract/errors.js';
import {
  hexFromText,
  hexText,
  RECORD_STATE_CODES,
  rowHashOfV3,
  stateCodes,
  stateFromText,
  stateText,
  timeFromText,
  updatedAtText,
  uuidFromText,
  uuidText,
} from './compact.js';
import { BATCH_STATES, REMOVAL_STATES, RUN_STATUSES } from './types.js';

export type Db = Database.Database;

/**
 * Version of the table layout below, kept in `PRAGMA user_version`. Each version after the first
 * has its step in UPGRADES, which brings a ledger of the version before up to it, in place.
 */
export const LEDGER_SCHEMA_VERSION = 4;

/** Pages written to the WAL before SQLite copies them back into the database file. */
export const WAL_AUTOCHECKPOINT_PAGES = 100_000;

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** A removal's state; the default is what a removal written before the column existed was (UPGRADES 3). */
const REMOVAL_STATE_COLUMN = `state TEXT NOT NULL DEFAULT 'removed' CHECK (state IN (${list(REMOVAL_STATES)}))`;

const DDL = `
  CREATE TABLE IF NOT EXISTS scopes (
    id INTEGER PRIMARY KEY,
    pipeline TEXT NOT NULL,
    component TEXT NOT NULL,
    UNIQUE (pipeline, component));

  CREATE TABLE IF NOT EXISTS migrations (
    id INTEGER PRIMARY KEY,
    reference_id TEXT NOT NULL UNIQUE);

  CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    scope INTEGER NOT NULL REFERENCES scopes(id),
    pipeline_file TEXT NOT NULL,
    pipeline_hash TEXT NOT NULL,
    migration_id TEXT,
    status TEXT NOT NULL CHECK (status IN (${list(RUN_STATUSES)})),
    pid INTEGER,
    host TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    report TEXT);

  CREATE TABLE IF NOT EXISTS batches (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL REFERENCES runs(id),
    state TEXT NOT NULL CHECK (state IN (${list(BATCH_STATES)})),
    records INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    finished_at TEXT);
  CREATE INDEX IF NOT EXISTS batches_by_run ON batches (run);

  -- One row per legacy record, compact (src/ledger/compact.ts says how each value is stored; the
  -- view records, below, shows them as text). A rowid table: rows are appended in the order they
  -- are written (a batch's rows side by side, which is how they are settled), and only the key's
  -- index takes the legacy keys in whatever order the export has them. Clustered on the key
  -- (WITHOUT ROWID), an export not sorted by key cost 3-4x the system time (100,000 shuffled
  -- persons). Its indexes are made after the upgrades (RECORD_INDEXES_AND_VIEW): an upgrade fills the
  -- table first, then indexes it.
  CREATE TABLE IF NOT EXISTS record_rows (
    scope INTEGER NOT NULL,
    keyed INTEGER NOT NULL,
    legacy_key TEXT NOT NULL,
    reference_id BLOB,
    entity_type_id INTEGER,
    state INTEGER NOT NULL CHECK (state IN (${Object.values(RECORD_STATE_CODES).join(', ')})),
    content_hash BLOB,
    migration INTEGER,
    last_batch INTEGER,
    last_run INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    file_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    row_hash BLOB NOT NULL,
    updated_at INTEGER,
    errors TEXT,
    origin_file TEXT,
    origin_line INTEGER,
    origin_hash BLOB,
    former_key TEXT);

  -- The source files records were read from (a record holds the id), and the entity types.
  CREATE TABLE IF NOT EXISTS record_files (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    UNIQUE (source, path));
  CREATE TABLE IF NOT EXISTS entity_types (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE);

  -- Where each batch got to in each file it read from: its row furthest into the file, written
  -- with the batch. A resumed run starts after the last done batch's (runs.ts); kept here, a
  -- record needs no index by batch once its batch is settled.
  CREATE TABLE IF NOT EXISTS batch_ends (
    batch INTEGER NOT NULL,
    file_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    row_hash BLOB NOT NULL,
    PRIMARY KEY (batch, file_id)) WITHOUT ROWID;

  CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    migration_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('validate-staging', 'import', 'counts')),
    job_id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    started_at TEXT NOT NULL,
    finished_at TEXT,
    result TEXT);
  CREATE INDEX IF NOT EXISTS jobs_by_migration ON jobs (migration_id, kind);

  -- What a run read: each source file's fingerprint, and where it started when it resumed (JSON,
  -- src/pipeline/runner/resume.ts). The next run resumes only from files that are the same.
  CREATE TABLE IF NOT EXISTS run_sources (
    run INTEGER PRIMARY KEY REFERENCES runs(id),
    sources TEXT NOT NULL);

  -- Where reading the migration's log continues (src/ledger/log-cursor.ts); the log's text is not kept.
  CREATE TABLE IF NOT EXISTS log_cursor (
    migration_id TEXT PRIMARY KEY,
    continue_from INTEGER NOT NULL);

  -- Each record's story (src/ledger/stories.ts): when a record refused in one run (rejected
  -- before upload, invalid at validation, failed at upload) is read and sent again by a later run
  -- (from a corrections file, or from a fixed export), its refusal is kept here before the record
  -- row takes its new state. A trigger, so that no write path can forget it. It is on last_run,
  -- which only a later run's write of the record sets: the hot statements (a batch staged, a job's
  -- outcomes) never set it, so they pay nothing (on state, it doubled the cost of staging a
  -- batch); and it writes only when a refusal gives way to another state or another row.
  CREATE TABLE IF NOT EXISTS record_history (
    scope INTEGER NOT NULL,
    keyed INTEGER NOT NULL,
    legacy_key TEXT NOT NULL,
    state TEXT NOT NULL,
    errors TEXT,
    run INTEGER NOT NULL,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    next_run INTEGER NOT NULL,
    next_file TEXT NOT NULL,
    next_line INTEGER NOT NULL,
    at TEXT NOT NULL,
    former_key TEXT);
  CREATE INDEX IF NOT EXISTS record_history_by_key ON record_history (scope, keyed, legacy_key);

  -- Imports a record's row no longer shows: kept by the trigger earlier_import_kept (below).
  CREATE TABLE IF NOT EXISTS earlier_imports (
    scope INTEGER NOT NULL,
    keyed INTEGER NOT NULL,
    legacy_key TEXT NOT NULL,
    migration INTEGER NOT NULL,
    reference_id TEXT,
    content_hash TEXT,
    at TEXT NOT NULL,
    PRIMARY KEY (scope, keyed, legacy_key));

  -- Migrations the platform canceled (src/ledger/migration-ends.ts).
  CREATE TABLE IF NOT EXISTS canceled_migrations (
    reference_id TEXT PRIMARY KEY,
    canceled_at TEXT NOT NULL) WITHOUT ROWID;

  -- Invalid records deleted from staging, intent first (src/ledger/removals.ts).
  CREATE TABLE IF NOT EXISTS staging_removals (
    migration_id TEXT NOT NULL,
    reference_id TEXT NOT NULL,
    last_batch INTEGER,
    errors TEXT NOT NULL,
    removed_at TEXT NOT NULL,
    ${REMOVAL_STATE_COLUMN},
    PRIMARY KEY (migration_id, reference_id)) WITHOUT ROWID;

  -- Files written with personal data (src/ledger/written-files.ts).
  CREATE TABLE IF NOT EXISTS written_files (
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('corrections', 'report')),
    pipeline TEXT NOT NULL,
    migration_id TEXT,
    rows INTEGER NOT NULL DEFAULT 0,
    written_at TEXT NOT NULL,
    removed_at TEXT);

  -- What each run read from each source file, counted two ways (src/ledger/tallies.ts).
  CREATE TABLE IF NOT EXISTS source_tallies (
    run_id INTEGER NOT NULL,
    source TEXT NOT NULL,
    file TEXT NOT NULL,
    format TEXT NOT NULL,
    tally TEXT NOT NULL,
    accepted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, source, file));

  -- The mappings each run used (src/ledger/run-mappings.ts).
  CREATE TABLE IF NOT EXISTS run_mappings (
    run INTEGER PRIMARY KEY,
    snapshot TEXT NOT NULL);
`;

/** SQL: the path of a record_files id. */
const pathOf = (id: string) => `(SELECT path FROM record_files WHERE id = ${id})`;

/**
 * What is made after the upgrades: the indexes of record_rows (only those the queries use: the
 * key, which every write of a record looks up; and the batch of the records in flight, by which a
 * batch is settled in one statement, partial: a record leaves it when its batch is settled, so at
 * rest it holds next to nothing), and the view `records`, which shows record_rows as
 * text in the layout of version 3: every read of records goes through it (so a ledger of an older
 * version, read-only, is read through its own table of that name), every write goes to record_rows.
 */
const RECORD_INDEXES_AND_VIEW = `
  CREATE UNIQUE INDEX IF NOT EXISTS record_rows_by_key ON record_rows (scope, keyed, legacy_key);
  -- Batch ids only grow, so this index is appended to, and emptied as batches settle.
  CREATE INDEX IF NOT EXISTS record_rows_in_flight ON record_rows (last_batch) WHERE state = ${stateCodes('in_flight')};

  CREATE VIEW IF NOT EXISTS records AS SELECT r.rowid AS rowid, r.scope, r.keyed, r.legacy_key,
      ${uuidText('r.reference_id')} AS reference_id,
      (SELECT name FROM entity_types WHERE id = r.entity_type_id) AS entity_type,
      ${stateText('r.state')} AS state,
      ${hexText('r.content_hash')} AS content_hash,
      r.migration, r.last_batch, r.last_run, r.attempts, r.errors,
      (SELECT source FROM record_files WHERE id = r.file_id) AS source,
      ${pathOf('r.file_id')} AS file,
      r.line, r.byte_offset,
      ${hexText('r.row_hash')} AS row_hash,
      ${updatedAtText('r.updated_at', 'r.last_batch')} AS updated_at,
      r.origin_file, r.origin_line,
      ${hexText('r.origin_hash')} AS origin_hash,
      r.former_key
    FROM record_rows r;
`;

/**
 * The triggers: the one that keeps a refused record's story (record_history; `former_key`: the key
 * the refusal was under when a correction gave the row another one, corrections.ts), and the one
 * that keeps an import the record row no longer shows (earlier_imports). Both write text, as the
 * view shows the row: those tables are small.
 */
const TRIGGERS = `
  CREATE TRIGGER IF NOT EXISTS record_refusal_kept AFTER UPDATE OF last_run ON record_rows
    WHEN OLD.state IN (${stateCodes('rejected', 'invalid', 'failed')}) AND NEW.last_run <> OLD.last_run
      AND (NEW.state <> OLD.state OR NEW.row_hash <> OLD.row_hash
        OR (NEW.file_id <> OLD.file_id AND ${pathOf('NEW.file_id')} <> ${pathOf('OLD.file_id')}))
  BEGIN
    INSERT INTO record_history (scope, keyed, legacy_key, state, errors, run, file, line, next_run, next_file, next_line, at, former_key)
    VALUES (OLD.scope, OLD.keyed, OLD.legacy_key, ${stateText('OLD.state')}, OLD.errors, OLD.last_run, ${pathOf('OLD.file_id')}, OLD.line,
      NEW.last_run, ${pathOf('NEW.file_id')}, NEW.line, ${updatedAtText('NEW.updated_at', 'NEW.last_batch')}, OLD.former_key);
  END;

  -- Imports a record's row no longer shows (src/ledger/migration-ends.ts): a record
  -- imported in one migration and written again by a later run (staged into a new migration,
  -- refused, …) stays live on the platform from that import, whatever the later migration does
  -- (canceled: its staging area is gone, the imported counterparty is not). The record row keeps
  -- only its latest migration, so the import is kept here when the row leaves it. A trigger for
  -- the same reason as record_history; its WHEN is false unless an imported record is written
  -- by a later run. It deletes, then inserts: inside a trigger, the conflict policy of the outer
  -- statement (the run's upsert of the record: abort) overrides an INSERT OR REPLACE, so a record
  -- imported a second time and then written by a third migration's run failed the run on the
  -- primary key. record_import_kept was that trigger; a ledger that has it gets this one instead.
  DROP TRIGGER IF EXISTS record_import_kept;
  CREATE TRIGGER IF NOT EXISTS earlier_import_kept AFTER UPDATE OF last_run ON record_rows
    WHEN OLD.state = ${stateCodes('imported')} AND NEW.last_run <> OLD.last_run AND NEW.migration IS NOT OLD.migration
  BEGIN
    DELETE FROM earlier_imports WHERE scope = OLD.scope AND keyed = OLD.keyed AND legacy_key = OLD.legacy_key;
    INSERT INTO earlier_imports (scope, keyed, legacy_key, migration, reference_id, content_hash, at)
    VALUES (OLD.scope, OLD.keyed, OLD.legacy_key, OLD.migration, ${uuidText('OLD.reference_id')}, ${hexText('OLD.content_hash')},
      ${updatedAtText('NEW.updated_at', 'NEW.last_batch')});
  END;
`;

/** Whether the ledger has a table of that name (not a view). */
const isTable = (db: Db, name: string) =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

const hasColumn = (db: Db, table: string, column: string) =>
  (db.pragma(`table_info(${table})`) as { name: string }[]).some((c) => c.name === column);

/**
 * The steps that upgrade a ledger in place, by the version they bring it to. All the steps a
 * ledger needs run in one transaction with the `user_version` they set, after the DDL has created
 * the tables it lacks, so a ledger is at one version or the other. Each step checks what is there.
 * - 2: corrections as a chapter of a record's life (docs/reconciliation.md): the export row a
 *   correction replaced (`origin_*`), the key a re-keyed refusal had (`former_key`), and the story
 *   trigger copying it.
 * - 3: one schema: the tables that modules created on first use (canceled_migrations,
 *   staging_removals, written_files, source_tallies, run_mappings; the DDL creates those a ledger
 *   lacks), and the removals' `state`, which removals written before it lack: they were written
 *   after their DELETE had succeeded, so they are `removed` (the column's default).
 * - 4: the compact records (compact.ts): the table `records` rewritten as `record_rows` in its
 *   rowid order (the rowids kept: verify reads the records in that order), each value converted
 *   as compact.ts says, its source files and entity types into their tables, each batch's
 *   furthest row per file into batch_ends (a record's row of the batch it is in); then `records` is
 *   dropped, and RECORD_INDEXES_AND_VIEW and TRIGGERS make the indexes, the view of that name and
 *   the triggers on record_rows. Row hashes (`row_hash`, `origin_hash`, and the row a resumed run
 *   started at in `run_sources`) keep their first 128 bits (compact.ts `rowHashOfV3`), as rows are
 *   hashed since. A ledger of version 1 has `records` without rowid: its rows are
 *   written in key order. The pages the old table held are free for the ledger to reuse
 *   (`VACUUM` gives them back to the disk, docs/ledger.md).
 */
const UPGRADES: Record<number, (db: Db) => void> = {
  2: (db) => {
    if (isTable(db, 'records'))
      for (const [column, type] of [
        ['origin_file', 'TEXT'],
        ['origin_line', 'INTEGER'],
        ['origin_hash', 'TEXT'],
        ['former_key', 'TEXT'],
      ] as const)
        if (!hasColumn(db, 'records', column)) db.exec(`ALTER TABLE records ADD COLUMN ${column} ${type}`);
    if (!hasColumn(db, 'record_history', 'former_key')) db.exec('ALTER TABLE record_history ADD COLUMN former_key TEXT');
    db.exec('DROP TRIGGER IF EXISTS record_refusal_kept');
  },
  3: (db) => {
    if (!hasColumn(db, 'staging_removals', 'state')) db.exec(`ALTER TABLE staging_removals ADD COLUMN ${REMOVAL_STATE_COLUMN}`);
  },
  4: (db) => {
    if (!isTable(db, 'records')) return;
    const sql = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'records'").pluck().get() ?? '';
    const order = /WITHOUT\s+ROWID/i.test(sql) ? 'r.scope, r.keyed, r.legacy_key' : 'r.rowid';
    db.exec(`
      INSERT INTO record_files (source, path) SELECT DISTINCT source, file FROM records;
      INSERT INTO entity_types (name) SELECT DISTINCT entity_type FROM records WHERE entity_type IS NOT NULL;
      INSERT INTO record_rows (${order === 'r.rowid' ? 'rowid, ' : ''}scope, keyed, legacy_key, reference_id, entity_type_id, state, content_hash,
          migration, last_batch, last_run, attempts, file_id, line, byte_offset, row_hash, updated_at, errors,
          origin_file, origin_line, origin_hash, former_key)
        SELECT ${order === 'r.rowid' ? 'r.rowid, ' : ''}r.scope, r.keyed, r.legacy_key, ${uuidFromText('r.reference_id')},
          (SELECT id FROM entity_types WHERE name = r.entity_type), ${stateFromText('r.state')}, ${hexFromText('r.content_hash')},
          r.migration, r.last_batch, r.last_run, r.attempts, (SELECT id FROM record_files WHERE source = r.source AND path = r.file),
          r.line, r.byte_offset, ${hexFromText(rowHashOfV3('r.row_hash'))},
          CASE WHEN r.updated_at IS ${updatedAtText('NULL', 'r.last_batch')} THEN NULL ELSE ${timeFromText('r.updated_at')} END, r.errors,
          r.origin_file, r.origin_line, ${hexFromText(rowHashOfV3('r.origin_hash'))}, r.former_key
        FROM records r ORDER BY ${order};
      DROP TABLE records;
      INSERT INTO batch_ends (batch, file_id, line, byte_offset, row_hash)
        SELECT last_batch, file_id, line, max(byte_offset), row_hash FROM record_rows WHERE last_batch IS NOT NULL GROUP BY last_batch, file_id;
      UPDATE run_sources SET sources = json_set(sources, '$.start.rowHash', ${rowHashOfV3("(sources ->> '$.start.rowHash')")})
        WHERE sources ->> '$.start.rowHash' IS NOT NULL;`);
  },
};

/** Refuses a write to a ledger opened read-only, naming it (before SQLite's "attempt to write a readonly database"). */
export function assertWritable(db: Db, file: string): void {
  if (db.readonly) throw new StagecoachError('LEDGER_ERROR', `the ledger ${file} was opened read-only`, { file });
}

export interface OpenOptions {
  /** Open an existing ledger without creating or changing anything (status, reports). */
  readonly?: boolean;
}

/**
 * Opens (and creates when missing) the ledger file with its tables, upgraded to this version.
 * @example const db = openLedgerDb('.stagecoach/ledger.db');
 */
export function openLedgerDb(file: string, options: OpenOptions = {}): Db {
  if (!options.readonly) mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  db.pragma('busy_timeout = 5000');
  if (options.readonly) {
    if ((db.pragma('user_version', { simple: true }) as number) < LEDGER_SCHEMA_VERSION) showAsCurrent(db);
    return db;
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  // After a checkpoint, shrink the WAL back instead of keeping hundreds of megabytes around.
  db.pragma('journal_size_limit = 67108864');
  // 2 MiB of page cache per connection: a run touches the right-hand edge of the records table
  // and of its batch index, and a key index whose leaves a bigger cache would not hold either.
  // Against 8 MiB: a run of 1,000,000 persons peaked 15 MiB lower, and one of 300,000 persons in
  // shuffled key order took as long (9.3–9.6 s against 9.2–9.4 s); a bigger cache only showed
  // as resident memory.
  db.pragma('cache_size = -2048');
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > LEDGER_SCHEMA_VERSION) {
    db.close();
    throw new StagecoachError(
      'LEDGER_ERROR',
      `ledger ${file} has schema version ${version}, newer than this stagecoach understands (${LEDGER_SCHEMA_VERSION}); use a newer stagecoach`,
      { file },
    );
  }
  if (version < LEDGER_SCHEMA_VERSION) {
    // A new file is version 0 with no tables: the DDL makes it the current layout, and the steps find nothing to do.
    db.transaction(() => {
      db.exec(DDL);
      for (let v = version + 1; v <= LEDGER_SCHEMA_VERSION; v++) UPGRADES[v]?.(db);
      db.exec(RECORD_INDEXES_AND_VIEW);
      db.exec(TRIGGERS);
      db.pragma(`user_version = ${LEDGER_SCHEMA_VERSION}`);
    })();
  }
  return db;
}

/** The columns of row hashes a ledger of an older version has, by table: shown cut to what rows hash to today. */
const ROW_HASHES_SHOWN: Record<string, readonly string[]> = { records: ['row_hash', 'origin_hash'] };

/**
 * Shows a ledger of an older version, opened read-only (status, plan --ledger, report), in the
 * current layout without writing to it: a table it lacks is an empty temporary table of that name,
 * and a table that lacks columns is read through a temporary view of that name which adds them
 * with their default (NULL; `'removed'` for a removal's state, as the upgrade does). Temporary
 * objects come first in SQLite's name lookup, so every reader reads one layout, whatever the version.
 * The view `records` of version 4 is a table in the versions before (the same columns, as text):
 * read through a temporary view that shows its row hashes as rows are hashed today (their first
 * 128 bits, as the upgrade keeps them: compact.ts `rowHashOfV3`) and adds the columns it lacks.
 * Only writes use record_rows, and an older ledger opened read-only takes none.
 */
function showAsCurrent(db: Db): void {
  const current = new Database(':memory:');
  try {
    current.exec(DDL);
    current.exec(RECORD_INDEXES_AND_VIEW);
    const objects = current
      .prepare<[], { type: 'table' | 'view'; name: string; sql: string }>(
        "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY rowid",
      )
      .all();
    for (const { type, name, sql } of objects) {
      const held = new Set((db.pragma(`table_info(${name})`) as { name: string }[]).map((c) => c.name));
      if (held.size === 0) {
        if (type === 'table') db.exec(sql.replace(/^CREATE TABLE/, 'CREATE TEMP TABLE'));
        continue;
      }
      // A view's `rowid` column is the rowid of the table of that name (none in version 1's records).
      const mainSql = db.prepare<[string], string>('SELECT sql FROM main.sqlite_master WHERE name = ?').pluck().get(name) ?? '';
      if (!/WITHOUT\s+ROWID/i.test(mainSql)) held.add('rowid');
      const columns = current.pragma(`table_info(${name})`) as { name: string; dflt_value: string | null }[];
      const shown = ROW_HASHES_SHOWN[name] ?? [];
      if (columns.every((c) => held.has(c.name)) && !shown.some((c) => held.has(c))) continue;
      const select = columns
        .map((c) =>
          !held.has(c.name)
            ? `${c.dflt_value ?? 'NULL'} AS ${c.name}`
            : shown.includes(c.name)
              ? `${rowHashOfV3(c.name)} AS ${c.name}`
              : c.name,
        )
        .join(', ');
      db.exec(`CREATE TEMP VIEW ${name} AS SELECT ${select} FROM main.${name}`);
    }
  } finally {
    current.close();
  }
}
