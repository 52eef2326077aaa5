/**
 * Processes: started from a definition, owned by one tenant and white label, with a status from
 * their definition. Every status change (creation included) is one `process.status-changed`
 * event in the outbox, written in the transaction of the change. Lodging moves processes
 * through `moveProcessStatus` when it sends and handles messages.
 */
import { randomUUID } from 'node:crypto';
import type { ExternalReference } from '../../contract/shared.js';
import type { ProcessDefinition } from '../../contract/process.js';
import type { Db } from '../store/database.js';
import { createOutboxTables, emitEvent } from '../events/outbox.js';
import { findDefinition } from './definitions.js';

/** The status codes the service itself moves a process into (all definitions have them). */
export const PROCESS_STATUS = {
  /** A new process, nothing lodged yet. */
  created: 'Created',
  /** A message was sent; the service is handling it. */
  received: 'ApplicationReceived',
  /** Handling of the sent message succeeded: the application is with the lender. */
  inReview: 'InReview',
  /** Handling of the sent message failed; a corrected message may be sent. */
  handlingFailed: 'HandlingFailed',
} as const;
export type ServiceStatusCode = (typeof PROCESS_STATUS)[keyof typeof PROCESS_STATUS];

/** Who owns a process: the tenant and white label of the token that created it. */
export interface Owner {
  brokerKey: string;
  label: string;
}

export interface ProcessRow {
  reference_id: string;
  broker_key: string;
  label_id: string;
  definition_id: string;
  status_code: string;
  external_references: string;
  created_on: string;
  updated_on: string;
}

/** The process as GET /process-orchestration/processes/{id} shows it (our shape, not in the spec). */
export interface ProcessView {
  referenceId: string;
  processDefinitionReferenceId: string;
  type: string;
  code: string;
  status: { referenceId: string; code: string; name: string };
  externalReferences: ExternalReference[];
  createdOn: string;
  updatedOn: string;
}

export function createProcessTables(db: Db): void {
  createOutboxTables(db);
  db.exec(`CREATE TABLE IF NOT EXISTS processes (
    reference_id TEXT PRIMARY KEY,
    broker_key TEXT NOT NULL,
    label_id TEXT NOT NULL,
    definition_id TEXT NOT NULL,
    status_code TEXT NOT NULL,
    external_references TEXT NOT NULL,
    created_on TEXT NOT NULL,
    updated_on TEXT NOT NULL) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS processes_owner ON processes (broker_key, label_id)`);
}

/**
 * Creates a process in status Created and emits its first `process.status-changed`
 * (previousStatus null). The definition must exist and be active (the route checks).
 * @example createProcess(db, { brokerKey: 'demo-broker', label: 'demo-label' }, definition, [{ origin: 'crm', referenceId: 'A-1' }])
 */
export function createProcess(db: Db, owner: Owner, definition: ProcessDefinition, externalReferences: ExternalReference[]): ProcessRow {
  const now = new Date().toISOString();
  const row: ProcessRow = {
    reference_id: randomUUID(),
    broker_key: owner.brokerKey,
    label_id: owner.label,
    definition_id: definition.referenceId,
    status_code: PROCESS_STATUS.created,
    external_references: JSON.stringify(externalReferences),
    created_on: now,
    updated_on: now,
  };
  db.transaction(() => {
    db.prepare(
      `INSERT INTO processes (reference_id, broker_key, label_id, definition_id, status_code, external_references, created_on, updated_on)
       VALUES (@reference_id, @broker_key, @label_id, @definition_id, @status_code, @external_references, @created_on, @updated_on)`,
    ).run(row);
    emitStatusChanged(db, row, definition, null, PROCESS_STATUS.created, {});
  })();
  return row;
}

/**
 * The process if it exists and belongs to this tenant and white label; otherwise undefined
 * (another owner's process is indistinguishable from a missing one).
 */
export function findOwnedProcess(db: Db, owner: Owner, referenceId: string): ProcessRow | undefined {
  return db
    .prepare('SELECT * FROM processes WHERE reference_id = ? AND broker_key = ? AND label_id = ?')
    .get(referenceId, owner.brokerKey, owner.label) as ProcessRow | undefined;
}

/** A process by id whoever owns it (background handling, which has no request). */
export function findProcess(db: Db, referenceId: string): ProcessRow | undefined {
  return db.prepare('SELECT * FROM processes WHERE reference_id = ?').get(referenceId) as ProcessRow | undefined;
}

/**
 * Moves a process to status `to` and emits `process.status-changed`; nothing happens when it
 * already has that status. Call inside the transaction of the change that causes the move.
 * Returns whether the status changed.
 * @example db.transaction(() => moveProcessStatus(db, process, 'ApplicationReceived', { messageReferenceId }))();
 */
export function moveProcessStatus(
  db: Db,
  process: ProcessRow,
  to: ServiceStatusCode,
  cause: { messageReferenceId?: string; reason?: string },
): boolean {
  const current = findProcess(db, process.reference_id);
  if (!current || current.status_code === to) return false;
  const definition = findDefinition(db, current.definition_id);
  if (!definition) throw new Error(`process ${current.reference_id} refers to missing definition ${current.definition_id}`);
  if (!definition.statuses.some((s) => s.code === to)) throw new Error(`definition ${definition.code} has no status ${to}`);
  const now = new Date().toISOString();
  db.prepare('UPDATE processes SET status_code = ?, updated_on = ? WHERE reference_id = ?').run(to, now, current.reference_id);
  emitStatusChanged(db, { ...current, updated_on: now }, definition, current.status_code, to, cause);
  return true;
}

/**
 * The `process.status-changed` payload (docs/lodging.md): ids, the definition, previous and
 * new status code and status referenceId, the message that caused the move, and the
 * external references the client gave, so a receiver can match its own records.
 */
function emitStatusChanged(
  db: Db,
  process: ProcessRow,
  definition: ProcessDefinition,
  from: string | null,
  to: string,
  cause: { messageReferenceId?: string; reason?: string },
): void {
  const statusId = (code: string | null) =>
    code === null ? null : (definition.statuses.find((s) => s.code === code)?.referenceId ?? null);
  emitEvent(db, {
    brokerKey: process.broker_key,
    label: process.label_id,
    eventName: 'process.status-changed',
    data: {
      processReferenceId: process.reference_id,
      processDefinitionReferenceId: definition.referenceId,
      processDefinitionCode: definition.code,
      previousStatus: from,
      previousStatusReferenceId: statusId(from),
      status: to,
      statusReferenceId: statusId(to),
      messageReferenceId: cause.messageReferenceId ?? null,
      ...(cause.reason ? { reason: cause.reason } : {}),
      externalReferences: JSON.parse(process.external_references) as ExternalReference[],
      changedOn: process.updated_on,
    },
  });
}

/** The API view of a process row. */
export function renderProcess(db: Db, row: ProcessRow): ProcessView {
  const definition = findDefinition(db, row.definition_id);
  const status = definition?.statuses.find((s) => s.code === row.status_code);
  return {
    referenceId: row.reference_id,
    processDefinitionReferenceId: row.definition_id,
    type: definition?.type ?? '',
    code: definition?.code ?? '',
    status: { referenceId: status?.referenceId ?? '', code: row.status_code, name: status?.name ?? row.status_code },
    externalReferences: JSON.parse(row.external_references) as ExternalReference[],
    createdOn: row.created_on,
    updatedOn: row.updated_on,
  };
}
