/**
 * The ledger's record of applications (issue 45): one row per application with the step it has
 * reached, and one line per step taken, so a run killed at any step resumes where it stood and
 * nothing is lodged twice. Additive: the tables are created on first use (IF NOT EXISTS) and no
 * other table refers to them, so the ledger's schema version is unchanged (docs/ledger.md).
 */
import type { Db } from './schema.js';

/** Steps in order; `refused` never reaches the platform; `succeeded`/`failed` are the platform's handling. */
export const APPLICATION_STEPS = [
  'refused',
  'process-requested',
  'process-created',
  'message-created',
  'uploaded',
  'sent',
  'succeeded',
  'failed',
] as const;
export type ApplicationStep = (typeof APPLICATION_STEPS)[number];

export interface ApplicationRow {
  pipeline: string;
  scope: string;
  legacyKey: string;
  step: ApplicationStep;
  messageId: string | null;
  processId: string | null;
  file: string;
  line: number;
  /** JSON: the refusal's reasons, or the platform's handling errors. */
  detail: string | null;
}

const DDL = `
  CREATE TABLE IF NOT EXISTS applications (
    pipeline TEXT NOT NULL,
    scope TEXT NOT NULL,
    legacy_key TEXT NOT NULL,
    step TEXT NOT NULL,
    message_id TEXT,
    process_id TEXT,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    detail TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (pipeline, scope, legacy_key)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS application_steps (
    pipeline TEXT NOT NULL,
    scope TEXT NOT NULL,
    legacy_key TEXT NOT NULL,
    step TEXT NOT NULL,
    at TEXT NOT NULL,
    detail TEXT);
`;

/** The applications' tables of one ledger file. */
export class ApplicationLedger {
  private readonly getStmt;
  private readonly upsertStmt;
  private readonly stepStmt;

  constructor(private readonly db: Db) {
    db.exec(DDL);
    this.getStmt = db.prepare(
      `SELECT pipeline, scope, legacy_key AS legacyKey, step, message_id AS messageId, process_id AS processId, file, line, detail
       FROM applications WHERE pipeline = ? AND scope = ? AND legacy_key = ?`,
    );
    this.upsertStmt = db.prepare(
      `INSERT INTO applications (pipeline, scope, legacy_key, step, message_id, process_id, file, line, detail, updated_at)
       VALUES (@pipeline, @scope, @legacyKey, @step, @messageId, @processId, @file, @line, @detail, @at)
       ON CONFLICT (pipeline, scope, legacy_key) DO UPDATE SET step = excluded.step, message_id = excluded.message_id,
         process_id = excluded.process_id, file = excluded.file, line = excluded.line, detail = excluded.detail, updated_at = excluded.updated_at`,
    );
    this.stepStmt = db.prepare('INSERT INTO application_steps (pipeline, scope, legacy_key, step, at, detail) VALUES (?, ?, ?, ?, ?, ?)');
  }

  get(pipeline: string, scope: string, legacyKey: string): ApplicationRow | undefined {
    return this.getStmt.get(pipeline, scope, legacyKey) as ApplicationRow | undefined;
  }

  /** Records a step: the application's row and a line of its history, in one transaction (committed before the next request). */
  record(row: ApplicationRow): void {
    const at = new Date().toISOString();
    this.db.transaction(() => {
      this.upsertStmt.run({ ...row, at });
      this.stepStmt.run(row.pipeline, row.scope, row.legacyKey, row.step, at, row.detail);
    })();
  }

  /** The application of a pipeline whose message has this id (events name the message). */
  byMessage(pipeline: string, messageId: string): ApplicationRow | undefined {
    return this.db
      .prepare(
        `SELECT pipeline, scope, legacy_key AS legacyKey, step, message_id AS messageId, process_id AS processId, file, line, detail
         FROM applications WHERE pipeline = ? AND message_id = ?`,
      )
      .get(pipeline, messageId) as ApplicationRow | undefined;
  }

  /** A line of an application's history that is no step of its own (a process status the platform reported). */
  note(row: ApplicationRow, what: string, detail: string | null): void {
    this.stepStmt.run(row.pipeline, row.scope, row.legacyKey, what, new Date().toISOString(), detail);
  }

  /** Every application of a pipeline, in key order. */
  all(pipeline: string): ApplicationRow[] {
    return this.db
      .prepare(
        `SELECT pipeline, scope, legacy_key AS legacyKey, step, message_id AS messageId, process_id AS processId, file, line, detail
         FROM applications WHERE pipeline = ? ORDER BY scope, legacy_key`,
      )
      .all(pipeline) as ApplicationRow[];
  }

  /** The steps one application went through, oldest first. */
  history(pipeline: string, scope: string, legacyKey: string): Array<{ step: ApplicationStep; at: string; detail: string | null }> {
    return this.db
      .prepare('SELECT step, at, detail FROM application_steps WHERE pipeline = ? AND scope = ? AND legacy_key = ? ORDER BY rowid')
      .all(pipeline, scope, legacyKey) as Array<{ step: ApplicationStep; at: string; detail: string | null }>;
  }
}
