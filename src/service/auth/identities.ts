/**
 * Tenants (broker keys), their white labels and API clients, with the demo identities seeded on
 * first start. Client secrets are stored as salted SHA-256 and compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../store/database.js';
import { FUNCTIONAL_GROUPS } from '../../contract/media.js';

export const ALL_DOMAINS = FUNCTIONAL_GROUPS.map((g) => `/${g}`);

export interface ApiClient {
  clientId: string;
  brokerKey: string;
  /** White labels this client may get tokens for. */
  labels: string[];
  /** Path prefixes its tokens are limited to. */
  scopes: string[];
}

interface SeedClient extends ApiClient {
  secret: string;
}

/** The demo identities of the README; tests rely on them. */
export const DEMO_IDENTITIES: { tenants: Array<{ brokerKey: string; labels: string[] }>; clients: SeedClient[] } = {
  tenants: [
    { brokerKey: 'demo-broker', labels: ['demo-label', 'demo-label-2'] },
    { brokerKey: 'other-broker', labels: ['other-label'] },
  ],
  clients: [
    {
      clientId: 'demo-client',
      secret: 'demo-secret',
      brokerKey: 'demo-broker',
      labels: ['demo-label', 'demo-label-2'],
      scopes: ALL_DOMAINS,
    },
    {
      clientId: 'scoped-client',
      secret: 'scoped-secret',
      brokerKey: 'demo-broker',
      labels: ['demo-label'],
      scopes: ['/counterparty-management'],
    },
    { clientId: 'other-client', secret: 'other-secret', brokerKey: 'other-broker', labels: ['other-label'], scopes: ALL_DOMAINS },
  ],
};

export function createIdentityTables(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS tenants (broker_key TEXT PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS white_labels (
      broker_key TEXT NOT NULL REFERENCES tenants(broker_key), label_id TEXT NOT NULL,
      PRIMARY KEY (broker_key, label_id));
    CREATE TABLE IF NOT EXISTS api_clients (
      client_id TEXT PRIMARY KEY, broker_key TEXT NOT NULL REFERENCES tenants(broker_key),
      secret_salt TEXT NOT NULL, secret_hash TEXT NOT NULL, labels TEXT NOT NULL, scopes TEXT NOT NULL);
  `);
}

export function seedDemoIdentities(db: Db): void {
  const seeded = db.prepare('SELECT COUNT(*) AS n FROM tenants').get() as { n: number };
  if (seeded.n > 0) return;
  db.transaction(() => {
    for (const t of DEMO_IDENTITIES.tenants) {
      db.prepare('INSERT INTO tenants (broker_key) VALUES (?)').run(t.brokerKey);
      for (const l of t.labels) db.prepare('INSERT INTO white_labels (broker_key, label_id) VALUES (?, ?)').run(t.brokerKey, l);
    }
    for (const c of DEMO_IDENTITIES.clients) {
      const salt = randomBytes(16).toString('hex');
      db.prepare('INSERT INTO api_clients (client_id, broker_key, secret_salt, secret_hash, labels, scopes) VALUES (?, ?, ?, ?, ?, ?)').run(
        c.clientId,
        c.brokerKey,
        salt,
        hashSecret(salt, c.secret),
        JSON.stringify(c.labels),
        JSON.stringify(c.scopes),
      );
    }
  })();
}

function hashSecret(salt: string, secret: string): string {
  return createHash('sha256').update(`${salt}:${secret}`).digest('hex');
}

/** The client if id and secret match, else undefined (constant-time on the secret). */
export function authenticateClient(db: Db, clientId: string, secret: string): ApiClient | undefined {
  const row = db.prepare('SELECT * FROM api_clients WHERE client_id = ?').get(clientId) as
    | { client_id: string; broker_key: string; secret_salt: string; secret_hash: string; labels: string; scopes: string }
    | undefined;
  // Hash even for unknown ids so timing does not tell which client ids exist.
  const expected = Buffer.from(row?.secret_hash ?? '0'.repeat(64), 'hex');
  const actual = Buffer.from(hashSecret(row?.secret_salt ?? 'none', secret), 'hex');
  if (!row || !timingSafeEqual(expected, actual)) return undefined;
  return { clientId: row.client_id, brokerKey: row.broker_key, labels: JSON.parse(row.labels), scopes: JSON.parse(row.scopes) };
}

export function labelExists(db: Db, brokerKey: string, labelId: string): boolean {
  return db.prepare('SELECT 1 FROM white_labels WHERE broker_key = ? AND label_id = ?').get(brokerKey, labelId) !== undefined;
}
