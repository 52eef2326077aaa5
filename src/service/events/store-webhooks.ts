/**
 * Webhook registrations and the delivery journal. A registration belongs to one tenant and
 * white label and one event name; a delivery is one event for one registration, with every
 * attempt recorded (outcome, status code, error, latency), so the journal shows what happened.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { EventGroup, WebhookRegistration } from '../../contract/events.js';
import type { Db } from '../store/database.js';
import { createOutboxTables } from './outbox.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export interface RegistrationRow {
  id: string;
  broker_key: string;
  label_id: string;
  group_name: EventGroup;
  event_name: string;
  uri: string;
  token: string;
  created_on: string;
  updated_on: string;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  registration_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  next_attempt_at: number;
  in_flight: number;
  created_on: string;
  updated_on: string;
  delivered_on: string | null;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_on: string;
  outcome: AttemptOutcome;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
}

/** Who owns a registration: the tenant and white label of the token. */
export interface Owner {
  brokerKey: string;
  label: string;
}

export function createWebhookTables(db: Db): void {
  createOutboxTables(db);
  db.exec(`
    CREATE TABLE IF NOT EXISTS webhook_registrations (
      id TEXT PRIMARY KEY,
      broker_key TEXT NOT NULL,
      label_id TEXT NOT NULL,
      group_name TEXT NOT NULL,
      event_name TEXT NOT NULL,
      uri TEXT NOT NULL,
      token TEXT NOT NULL,
      created_on TEXT NOT NULL,
      updated_on TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS webhook_registrations_event ON webhook_registrations (broker_key, event_name);
    CREATE TABLE IF NOT EXISTS webhook_deliveries (
      id TEXT PRIMARY KEY,
      event_id TEXT NOT NULL,
      registration_id TEXT NOT NULL REFERENCES webhook_registrations(id) ON DELETE CASCADE,
      status TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_status_code INTEGER,
      last_error TEXT,
      last_latency_ms INTEGER,
      next_attempt_at INTEGER NOT NULL,
      in_flight INTEGER NOT NULL DEFAULT 0,
      created_on TEXT NOT NULL,
      updated_on TEXT NOT NULL,
      delivered_on TEXT,
      UNIQUE (event_id, registration_id));
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND in_flight = 0;
    CREATE INDEX IF NOT EXISTS webhook_deliveries_registration ON webhook_deliveries (registration_id, created_on);
    CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
      delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempt INTEGER NOT NULL,
      started_on TEXT NOT NULL,
      outcome TEXT NOT NULL,
      status_code INTEGER,
      error TEXT,
      latency_ms INTEGER NOT NULL,
      PRIMARY KEY (delivery_id, attempt));
    CREATE INDEX IF NOT EXISTS event_outbox_undispatched ON event_outbox (seq) WHERE dispatched = 0;
  `);
}

/** A fresh delivery token: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function toRegistration(row: RegistrationRow): WebhookRegistration {
  return { id: row.id, eventName: row.event_name, createdOn: row.created_on, token: row.token, uri: row.uri };
}

/** A registration id: a UUID (the service's choice), or an opaque one (the dialect `registration-ids=opaque`). */
export function newRegistrationId(opaque = false): string {
  return opaque ? `wh_${randomBytes(16).toString('base64url')}` : randomUUID();
}

export function insertRegistration(
  db: Db,
  owner: Owner,
  group: EventGroup,
  eventName: string,
  uri: string,
  id = newRegistrationId(),
): RegistrationRow {
  const now = new Date().toISOString();
  const row: RegistrationRow = {
    id,
    broker_key: owner.brokerKey,
    label_id: owner.label,
    group_name: group,
    event_name: eventName,
    uri,
    token: newToken(),
    created_on: now,
    updated_on: now,
  };
  db.prepare(
    'INSERT INTO webhook_registrations (id, broker_key, label_id, group_name, event_name, uri, token, created_on, updated_on) VALUES (@id, @broker_key, @label_id, @group_name, @event_name, @uri, @token, @created_on, @updated_on)',
  ).run(row);
  return row;
}

export function listRegistrations(db: Db, owner: Owner, eventName: string): RegistrationRow[] {
  return db
    .prepare('SELECT * FROM webhook_registrations WHERE broker_key = ? AND label_id = ? AND event_name = ? ORDER BY created_on, id')
    .all(owner.brokerKey, owner.label, eventName) as RegistrationRow[];
}

/** The registration if it exists for this owner and event name (anything else: undefined, shown as 404). */
export function findRegistration(db: Db, owner: Owner, eventName: string, id: string): RegistrationRow | undefined {
  return db
    .prepare('SELECT * FROM webhook_registrations WHERE id = ? AND broker_key = ? AND label_id = ? AND event_name = ?')
    .get(id, owner.brokerKey, owner.label, eventName) as RegistrationRow | undefined;
}

export function updateRegistrationUri(db: Db, id: string, uri: string): void {
  db.prepare('UPDATE webhook_registrations SET uri = ?, updated_on = ? WHERE id = ?').run(uri, new Date().toISOString(), id);
}

/** Deletes a registration with its deliveries and their attempts. */
export function deleteRegistration(db: Db, id: string): void {
  db.prepare('DELETE FROM webhook_registrations WHERE id = ?').run(id);
}

export function countDeliveries(db: Db, registrationId: string): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE registration_id = ?').get(registrationId) as { n: number }).n;
}

/** A page of a registration's deliveries, newest first, each with its attempts in order. */
export function deliveryPage(
  db: Db,
  registrationId: string,
  offset: number,
  limit: number,
): Array<DeliveryRow & { attemptRows: AttemptRow[] }> {
  const rows = db
    .prepare('SELECT * FROM webhook_deliveries WHERE registration_id = ? ORDER BY created_on DESC, rowid DESC LIMIT ? OFFSET ?')
    .all(registrationId, limit, offset) as DeliveryRow[];
  const attempts = db.prepare('SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt');
  return rows.map((r) => ({ ...r, attemptRows: attempts.all(r.id) as AttemptRow[] }));
}
