/**
 * How the ledger's rows come out of SQLite and into the typed shapes of types.ts: the row types
 * as the tables have them, the selects that join a row's scope and migration, and the converters.
 * Shared by the parts of the ledger that read runs, batches and records.
 */
import type { BatchRow, BatchState, RecordError, RecordRow, RecordState, RunRow, RunStatus } from './types.js';

/** A statement (or anything) made on first use, then reused: each part prepares its statements once. */
export function once<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

/** Key of a keyless rejected row: its place in the source. */
export const keylessKey = (p: { file: string; line: number }): string => `${p.file}:${p.line}`;

export interface RunDbRow {
  id: number;
  pipeline: string;
  component: string;
  pipeline_file: string;
  pipeline_hash: string;
  migration_id: string | null;
  status: RunStatus;
  pid: number | null;
  host: string | null;
  started_at: string;
  finished_at: string | null;
  report: string | null;
}

export interface BatchDbRow {
  id: number;
  run: number;
  state: BatchState;
  records: number;
  bytes: number;
  attempts: number;
  error: string | null;
  created_at: string;
  sent_at: string | null;
  finished_at: string | null;
}

export interface RecordDbRow {
  pipeline: string;
  component: string;
  keyed: number;
  legacy_key: string;
  reference_id: string | null;
  entity_type: string | null;
  state: RecordState;
  content_hash: string | null;
  migration_id: string | null;
  last_batch: number | null;
  last_run: number;
  attempts: number;
  errors: string | null;
  source: string;
  file: string;
  line: number;
  byte_offset: number;
  row_hash: string;
  updated_at: string;
  origin_file: string | null;
  origin_line: number | null;
  origin_hash: string | null;
  imported_earlier_in: string | null;
}

export const RUN_SELECT = `SELECT r.id, s.pipeline, s.component, r.pipeline_file, r.pipeline_hash, r.migration_id, r.status, r.pid, r.host, r.started_at, r.finished_at, r.report
  FROM runs r JOIN scopes s ON s.id = r.scope`;

/**
 * SQL: the migration (its platform id) of the record's earlier import the ledger keeps
 * (earlier_imports), or null. A completed migration counts what it imported whatever later runs
 * did to the record's row (the report, ledger-facts.ts).
 */
export const IMPORTED_EARLIER_IN = `(SELECT em.reference_id FROM earlier_imports e JOIN migrations em ON em.id = e.migration
    WHERE e.scope = r.scope AND e.keyed = r.keyed AND e.legacy_key = r.legacy_key)`;

export const RECORD_SELECT = `SELECT s.pipeline, s.component, r.keyed, r.legacy_key, r.reference_id, r.entity_type, r.state, r.content_hash, m.reference_id AS migration_id,
    r.last_batch, r.last_run, r.attempts, r.errors, r.source, r.file, r.line, r.byte_offset, r.row_hash, r.updated_at,
    r.origin_file, r.origin_line, r.origin_hash, ${IMPORTED_EARLIER_IN} AS imported_earlier_in
  FROM records r JOIN scopes s ON s.id = r.scope LEFT JOIN migrations m ON m.id = r.migration`;

export function toRun(r: RunDbRow): RunRow {
  return {
    id: r.id,
    pipeline: r.pipeline,
    component: r.component,
    pipelineFile: r.pipeline_file,
    pipelineHash: r.pipeline_hash,
    migrationId: r.migration_id,
    status: r.status,
    pid: r.pid,
    host: r.host,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    report: r.report === null ? undefined : JSON.parse(r.report),
  };
}

export function toBatch(b: BatchDbRow): BatchRow {
  return {
    id: b.id,
    run: b.run,
    state: b.state,
    records: b.records,
    bytes: b.bytes,
    attempts: b.attempts,
    error: b.error,
    createdAt: b.created_at,
    sentAt: b.sent_at,
    finishedAt: b.finished_at,
  };
}

export function toRecord(r: RecordDbRow): RecordRow {
  return {
    pipeline: r.pipeline,
    component: r.component,
    legacyKey: r.keyed ? r.legacy_key : undefined,
    referenceId: r.reference_id,
    entityType: r.entity_type,
    state: r.state,
    contentHash: r.content_hash,
    migrationId: r.migration_id,
    lastBatch: r.last_batch,
    lastRun: r.last_run,
    attempts: r.attempts,
    errors: r.errors === null ? [] : (JSON.parse(r.errors) as RecordError[]),
    provenance: { source: r.source, file: r.file, line: r.line, byteOffset: r.byte_offset, rowHash: r.row_hash },
    ...(r.origin_file !== null ? { origin: { file: r.origin_file, line: r.origin_line ?? 0, rowHash: r.origin_hash ?? '' } } : {}),
    ...(r.imported_earlier_in ? { importedEarlierIn: r.imported_earlier_in } : {}),
    updatedAt: r.updated_at,
  };
}
