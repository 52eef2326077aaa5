/**
 * The per-migration key of hashed report values: an HMAC of the migration id under a random
 * secret kept next to the ledger (`privacy.key`, owner-only). Two reports of one migration hash
 * a value alike; a report of another migration, or one without the secret, cannot be matched.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The secret's file beside a ledger file. */
export function privacySecretFile(ledgerFile: string): string {
  return join(dirname(ledgerFile), 'privacy.key');
}

/**
 * The key of one migration's hashed values (the secret is made on first use).
 * @example const key = migrationKey('.stagecoach/ledger.db', migrationId);
 */
export function migrationKey(ledgerFile: string, migrationId: string): Buffer {
  const file = privacySecretFile(ledgerFile);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  }
  const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  return createHmac('sha256', secret).update(`stagecoach migration ${migrationId}`).digest();
}
