/**
 * The event outbox: every part of the service that makes something happen (lodging, process
 * moves, imports) records the event here in the same transaction as its change; the webhook
 * dispatcher delivers from here. Recording is all an emitter does, so emitters never wait on a
 * receiver and an event survives a restart.
 */
import { randomUUID } from 'node:crypto';
import { groupOfEvent, type EventName } from '../../contract/events.js';
import type { Db } from '../store/database.js';

export function createOutboxTables(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS event_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    broker_key TEXT NOT NULL,
    label_id TEXT,
    group_name TEXT NOT NULL,
    event_name TEXT NOT NULL,
    payload TEXT NOT NULL,
    occurred_on TEXT NOT NULL,
    dispatched INTEGER NOT NULL DEFAULT 0)`);
}

export interface EmittedEvent {
  id: string;
  eventName: EventName;
  occurredOn: string;
}

/** Records one event; call it inside the transaction of the change it reports. */
export function emitEvent(
  db: Db,
  event: { brokerKey: string; label?: string; eventName: EventName; data: Record<string, unknown> },
): EmittedEvent {
  const group = groupOfEvent(event.eventName);
  if (!group) throw new Error(`unknown event name ${event.eventName}`);
  const id = randomUUID();
  const occurredOn = new Date().toISOString();
  db.prepare(
    'INSERT INTO event_outbox (id, broker_key, label_id, group_name, event_name, payload, occurred_on) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(id, event.brokerKey, event.label ?? null, group, event.eventName, JSON.stringify(event.data), occurredOn);
  for (const listener of listeners.get(db) ?? []) listener();
  return { id, eventName: event.eventName, occurredOn };
}

const listeners = new WeakMap<Db, Set<() => void>>();

/**
 * Calls `listener` whenever an event is recorded on `db` (the webhook dispatcher wakes up
 * instead of waiting for its next poll). It runs inside the emitter's transaction: defer the
 * work (setImmediate), by then the transaction has committed or rolled back. Returns the
 * unsubscribe function.
 * @example const off = onEventEmitted(db, () => setImmediate(wake));
 */
export function onEventEmitted(db: Db, listener: () => void): () => void {
  let set = listeners.get(db);
  if (!set) listeners.set(db, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}
