/**
 * The RS256 signing key of the service, created on first start and kept in the database so
 * tokens stay valid across a restart. The JWKS endpoint publishes its public half.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import type { Db } from '../store/database.js';
import type { PublicJwk } from '../../contract/auth.js';

export interface SigningKeys {
  kid: string;
  privateKey: CryptoKey;
  publicJwks: PublicJwk[];
}

export async function loadSigningKeys(db: Db): Promise<SigningKeys> {
  db.exec(`CREATE TABLE IF NOT EXISTS signing_keys (
    kid TEXT PRIMARY KEY, private_jwk TEXT NOT NULL, public_jwk TEXT NOT NULL, created_on TEXT NOT NULL)`);
  let row = db.prepare('SELECT kid, private_jwk, public_jwk FROM signing_keys ORDER BY created_on DESC LIMIT 1').get() as
    | { kid: string; private_jwk: string; public_jwk: string }
    | undefined;
  if (!row) {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
    const pub = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(pub);
    const priv = await exportJWK(privateKey);
    const publicJwk = { ...pub, kid, use: 'sig', alg: 'RS256' };
    db.prepare('INSERT INTO signing_keys (kid, private_jwk, public_jwk, created_on) VALUES (?, ?, ?, ?)').run(
      kid,
      JSON.stringify({ ...priv, kid }),
      JSON.stringify(publicJwk),
      new Date().toISOString(),
    );
    row = { kid, private_jwk: JSON.stringify({ ...priv, kid }), public_jwk: JSON.stringify(publicJwk) };
  }
  const privateKey = (await importJWK(JSON.parse(row.private_jwk) as JWK, 'RS256')) as CryptoKey;
  const all = db.prepare('SELECT public_jwk FROM signing_keys ORDER BY created_on DESC').all() as Array<{ public_jwk: string }>;
  return { kid: row.kid, privateKey, publicJwks: all.map((r) => JSON.parse(r.public_jwk) as PublicJwk) };
}
