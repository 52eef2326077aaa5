/**
 * Process definitions: the platform's catalogue of processes a tenant can start. They are
 * platform-wide (not per tenant), seeded at registration and re-seeded idempotently on every
 * start, with referenceIds that are UUID v5 of the definition code (and status code), so they
 * are the same on every machine and after every restart.
 *
 * The LoanOrigination definition with code `CleanOrder` is the one lodging uses: its code is
 * the messageType of the lodged message, and its statuses are the ones the process moves
 * through while a message is sent and handled (see PROCESS_STATUS in store-processes.ts).
 */
import { v5 as uuidv5 } from 'uuid';
import type { ProcessDefinition } from '../../contract/process.js';
import type { Db } from '../store/database.js';

/** Namespace of definition and status referenceIds (a fixed random UUID). */
const DEFINITION_NAMESPACE = '9c81ffff-e2cb-4643-95e3-5f993b243d4e';

/** The code (= message type) of the loan origination definition lodging uses. */
export const CLEAN_ORDER_CODE = 'CleanOrder';

/** When the seeded catalogue last changed; shown as updatedOn of every seeded definition. */
const SEED_UPDATED_ON = '2026-01-05T08:00:00.000Z';

interface SeedStatus {
  code: string;
  name: string;
  isActive?: boolean;
}
interface SeedDefinition {
  type: string;
  code: string;
  name: { 'nl-NL': string; 'en-GB': string };
  isActive?: boolean;
  statuses: SeedStatus[];
}

/** Statuses every origination-like definition shares; lodging moves between the first four. */
const ORIGINATION_STATUSES: SeedStatus[] = [
  { code: 'Created', name: 'Created' },
  { code: 'ApplicationReceived', name: 'Application received' },
  { code: 'InReview', name: 'In review' },
  { code: 'HandlingFailed', name: 'Handling failed' },
  { code: 'Approved', name: 'Approved' },
  { code: 'Rejected', name: 'Rejected' },
  { code: 'Withdrawn', name: 'Withdrawn' },
  // Kept for processes started before 2025; no process moves into it any more.
  { code: 'OfferIssued', name: 'Offer issued', isActive: false },
];

const SEED: SeedDefinition[] = [
  {
    type: 'LoanOrigination',
    code: CLEAN_ORDER_CODE,
    name: { 'nl-NL': 'Hypotheekaanvraag', 'en-GB': 'Mortgage application' },
    statuses: ORIGINATION_STATUSES,
  },
  {
    type: 'LoanOrigination',
    code: 'BridgingLoanOrder',
    name: { 'nl-NL': 'Overbruggingskrediet', 'en-GB': 'Bridging loan application' },
    statuses: ORIGINATION_STATUSES.filter((s) => s.code !== 'OfferIssued'),
  },
  {
    type: 'LoanOrigination',
    code: 'LegacyOrder',
    name: { 'nl-NL': 'Hypotheekaanvraag (oud formaat)', 'en-GB': 'Mortgage application (legacy format)' },
    isActive: false,
    statuses: ORIGINATION_STATUSES,
  },
  {
    type: 'LoanModification',
    code: 'ChangeOrder',
    name: { 'nl-NL': 'Wijziging hypotheek', 'en-GB': 'Mortgage modification' },
    statuses: [
      { code: 'Created', name: 'Created' },
      { code: 'ApplicationReceived', name: 'Application received' },
      { code: 'InReview', name: 'In review' },
      { code: 'HandlingFailed', name: 'Handling failed' },
      { code: 'Executed', name: 'Executed' },
      { code: 'Rejected', name: 'Rejected' },
    ],
  },
  {
    type: 'Redemption',
    code: 'RedemptionOrder',
    name: { 'nl-NL': 'Aflossing', 'en-GB': 'Redemption' },
    statuses: [
      { code: 'Created', name: 'Created' },
      { code: 'ApplicationReceived', name: 'Application received' },
      { code: 'InReview', name: 'In review' },
      { code: 'HandlingFailed', name: 'Handling failed' },
      { code: 'Redeemed', name: 'Redeemed' },
    ],
  },
];

/**
 * The referenceId of a seeded definition (or, with `statusCode`, of one of its statuses).
 * @example definitionReferenceId('CleanOrder') // the same UUID on every machine
 */
export function definitionReferenceId(code: string, statusCode?: string): string {
  return uuidv5(statusCode === undefined ? `definition/${code}` : `definition/${code}/status/${statusCode}`, DEFINITION_NAMESPACE);
}

/** The seeded definitions in their API shape, in catalogue order. */
export function seededDefinitions(): ProcessDefinition[] {
  return SEED.map((d) => ({
    referenceId: definitionReferenceId(d.code),
    type: d.type,
    code: d.code,
    name: { ...d.name },
    isActive: d.isActive ?? true,
    statuses: d.statuses.map((s) => ({
      referenceId: definitionReferenceId(d.code, s.code),
      code: s.code,
      name: s.name,
      isActive: s.isActive ?? true,
    })),
    updatedOn: SEED_UPDATED_ON,
  }));
}

/** Creates the definitions table and writes the seed (insert or replace: idempotent). */
export function createDefinitionTables(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS process_definitions (
    reference_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    type TEXT NOT NULL,
    code TEXT NOT NULL UNIQUE,
    is_active INTEGER NOT NULL,
    data TEXT NOT NULL) WITHOUT ROWID`);
  const upsert = db.prepare(
    `INSERT INTO process_definitions (reference_id, position, type, code, is_active, data) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (reference_id) DO UPDATE SET position = excluded.position, type = excluded.type, code = excluded.code,
       is_active = excluded.is_active, data = excluded.data`,
  );
  db.transaction(() => {
    seededDefinitions().forEach((d, i) => upsert.run(d.referenceId, i, d.type, d.code, d.isActive ? 1 : 0, JSON.stringify(d)));
  })();
}

/**
 * Definitions whose type is one of `types` and whose code is one of `codes` (each compared
 * case-insensitively; an empty list does not filter), in catalogue order.
 * @example listDefinitions(db, { types: ['LoanOrigination'], codes: ['CleanOrder'] })
 */
export function listDefinitions(db: Db, filter: { types: string[]; codes: string[] }): ProcessDefinition[] {
  const types = new Set(filter.types.map((t) => t.toLowerCase()));
  const codes = new Set(filter.codes.map((c) => c.toLowerCase()));
  return (db.prepare('SELECT data FROM process_definitions ORDER BY position').all() as Array<{ data: string }>)
    .map((r) => JSON.parse(r.data) as ProcessDefinition)
    .filter((d) => (types.size === 0 || types.has(d.type.toLowerCase())) && (codes.size === 0 || codes.has(d.code.toLowerCase())));
}

/** One definition by referenceId, or undefined. */
export function findDefinition(db: Db, referenceId: string): ProcessDefinition | undefined {
  const row = db.prepare('SELECT data FROM process_definitions WHERE reference_id = ?').get(referenceId) as { data: string } | undefined;
  return row ? (JSON.parse(row.data) as ProcessDefinition) : undefined;
}
