/**
 * Messages and their attachments in SQLite. A message is keyed by (process, client-chosen
 * message id), so two tenants choosing the same UUID never meet; attachment bytes are BLOBs
 * keyed by (process, message, file name) — the client's name is never part of a path.
 *
 * Message status is Draft or Sent (the spec's two states); what happened after sending is the
 * separate handling status Pending → Succeeded | Failed.
 */
import type { Db } from '../store/database.js';

export type MessageStatus = 'Draft' | 'Sent';
export type HandlingStatus = 'Pending' | 'Succeeded' | 'Failed';

export interface Party {
  id: string;
  type: string;
}

/** One problem found while handling a sent message. */
export interface HandlingError {
  code: string;
  fileName: string;
  field: string;
  line?: number;
  message: string;
}

export interface MessageRow {
  process_id: string;
  reference_id: string;
  message_type: string;
  stakeholder: string;
  recipient: string;
  sender: string;
  status: MessageStatus;
  created_on: string;
  updated_on: string;
  sent_on: string | null;
  handling_status: HandlingStatus | null;
  handling_result: string | null;
  handled_on: string | null;
}

export interface AttachmentMeta {
  file_name: string;
  mime_type: string;
  size: number;
  sha256: string;
  created_on: string;
  updated_on: string;
}

export function createMessageTables(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS lodging_messages (
      process_id TEXT NOT NULL,
      reference_id TEXT NOT NULL,
      message_type TEXT NOT NULL,
      stakeholder TEXT NOT NULL,
      recipient TEXT NOT NULL,
      sender TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('Draft', 'Sent')),
      created_on TEXT NOT NULL,
      updated_on TEXT NOT NULL,
      sent_on TEXT,
      handling_status TEXT CHECK (handling_status IN ('Pending', 'Succeeded', 'Failed')),
      handling_result TEXT,
      handled_on TEXT,
      PRIMARY KEY (process_id, reference_id)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS lodging_messages_pending ON lodging_messages (handling_status) WHERE handling_status = 'Pending';
    CREATE TABLE IF NOT EXISTS lodging_attachments (
      process_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      file_name TEXT NOT NULL,
      mime_type TEXT NOT NULL,
      size INTEGER NOT NULL,
      sha256 TEXT NOT NULL,
      content BLOB NOT NULL,
      created_on TEXT NOT NULL,
      updated_on TEXT NOT NULL,
      PRIMARY KEY (process_id, message_id, file_name));
  `);
}

export function findMessage(db: Db, processId: string, messageId: string): MessageRow | undefined {
  return db.prepare('SELECT * FROM lodging_messages WHERE process_id = ? AND reference_id = ?').get(processId, messageId) as
    | MessageRow
    | undefined;
}

export function insertMessage(
  db: Db,
  processId: string,
  messageId: string,
  body: { messageType: string; stakeholder: Party; recipient: Party; sender: Party },
): MessageRow {
  const now = new Date().toISOString();
  const row: MessageRow = {
    process_id: processId,
    reference_id: messageId,
    message_type: body.messageType,
    stakeholder: JSON.stringify(body.stakeholder),
    recipient: JSON.stringify(body.recipient),
    sender: JSON.stringify(body.sender),
    status: 'Draft',
    created_on: now,
    updated_on: now,
    sent_on: null,
    handling_status: null,
    handling_result: null,
    handled_on: null,
  };
  db.prepare(
    `INSERT INTO lodging_messages (process_id, reference_id, message_type, stakeholder, recipient, sender, status, created_on, updated_on)
     VALUES (@process_id, @reference_id, @message_type, @stakeholder, @recipient, @sender, @status, @created_on, @updated_on)`,
  ).run(row);
  return row;
}

/** Attachment metadata of a message, by file name. */
export function listAttachments(db: Db, processId: string, messageId: string): AttachmentMeta[] {
  return db
    .prepare(
      'SELECT file_name, mime_type, size, sha256, created_on, updated_on FROM lodging_attachments WHERE process_id = ? AND message_id = ? ORDER BY file_name',
    )
    .all(processId, messageId) as AttachmentMeta[];
}

/** The bytes of one attachment. */
export function attachmentContent(db: Db, processId: string, messageId: string, fileName: string): Buffer | undefined {
  const row = db
    .prepare('SELECT content FROM lodging_attachments WHERE process_id = ? AND message_id = ? AND file_name = ?')
    .get(processId, messageId, fileName) as { content: Buffer } | undefined;
  return row?.content;
}

/**
 * Stores an attachment, replacing one of the same name (which keeps its createdOn), and
 * touches the message's updatedOn. Call inside a transaction that checked the message is Draft.
 */
export function putAttachment(
  db: Db,
  processId: string,
  messageId: string,
  a: { fileName: string; mimeType: string; sha256: string; content: Buffer },
): void {
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO lodging_attachments (process_id, message_id, file_name, mime_type, size, sha256, content, created_on, updated_on)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (process_id, message_id, file_name) DO UPDATE SET mime_type = excluded.mime_type, size = excluded.size,
       sha256 = excluded.sha256, content = excluded.content, updated_on = excluded.updated_on`,
  ).run(processId, messageId, a.fileName, a.mimeType, a.content.length, a.sha256, a.content, now, now);
  db.prepare('UPDATE lodging_messages SET updated_on = ? WHERE process_id = ? AND reference_id = ?').run(now, processId, messageId);
}

export function countAttachments(db: Db, processId: string, messageId: string): number {
  return (
    db.prepare('SELECT COUNT(*) AS n FROM lodging_attachments WHERE process_id = ? AND message_id = ?').get(processId, messageId) as {
      n: number;
    }
  ).n;
}

export function attachmentExists(db: Db, processId: string, messageId: string, fileName: string): boolean {
  return (
    db
      .prepare('SELECT 1 FROM lodging_attachments WHERE process_id = ? AND message_id = ? AND file_name = ?')
      .get(processId, messageId, fileName) !== undefined
  );
}

/** Marks a Draft message Sent with handling Pending. Call inside the send transaction. */
export function markSent(db: Db, processId: string, messageId: string): void {
  const now = new Date().toISOString();
  db.prepare(
    `UPDATE lodging_messages SET status = 'Sent', sent_on = ?, updated_on = ?, handling_status = 'Pending' WHERE process_id = ? AND reference_id = ? AND status = 'Draft'`,
  ).run(now, now, processId, messageId);
}

/** Records the outcome of handling (inside the handling transaction). */
export function markHandled(db: Db, processId: string, messageId: string, status: 'Succeeded' | 'Failed', result: unknown): string {
  const now = new Date().toISOString();
  db.prepare(
    'UPDATE lodging_messages SET handling_status = ?, handling_result = ?, handled_on = ? WHERE process_id = ? AND reference_id = ?',
  ).run(status, JSON.stringify(result), now, processId, messageId);
  return now;
}

/** Messages sent but not yet handled (resumed at start). */
export function pendingHandlings(db: Db): Array<{ process_id: string; reference_id: string }> {
  return db
    .prepare(`SELECT process_id, reference_id FROM lodging_messages WHERE handling_status = 'Pending' ORDER BY sent_on`)
    .all() as Array<{
    process_id: string;
    reference_id: string;
  }>;
}

// ---------------------------------------------------------------------------------------------
// API views

/** The create response: referenceId, messageType, status, createdOn, sentOn (spec). */
export function renderCreated(row: MessageRow) {
  return {
    referenceId: row.reference_id,
    messageType: row.message_type,
    status: row.status,
    createdOn: row.created_on,
    sentOn: row.sent_on,
  };
}

/** The dispatch response: every field of the spec's message table. */
export function renderMessage(db: Db, row: MessageRow) {
  return {
    ...renderCreated(row),
    stakeholder: JSON.parse(row.stakeholder) as Party,
    recipient: JSON.parse(row.recipient) as Party,
    sender: JSON.parse(row.sender) as Party,
    updatedOn: row.updated_on,
    attachments: listAttachments(db, row.process_id, row.reference_id).map((a) => ({
      fileName: a.file_name,
      mimeType: a.mime_type,
      size: a.size,
      createdOn: a.created_on,
      updatedOn: a.updated_on,
    })),
  };
}

/** GET …/messages/{id} (not in the spec): the dispatch view plus the process and the handling outcome. */
export function renderMessageDetail(db: Db, row: MessageRow) {
  const result = row.handling_result
    ? (JSON.parse(row.handling_result) as { errors?: HandlingError[]; counterpartyReferenceIds?: string[] })
    : undefined;
  return {
    ...renderMessage(db, row),
    processReferenceId: row.process_id,
    handling: row.handling_status
      ? {
          status: row.handling_status,
          handledOn: row.handled_on,
          errors: result?.errors ?? [],
          counterpartyReferenceIds: result?.counterpartyReferenceIds ?? [],
        }
      : null,
  };
}
