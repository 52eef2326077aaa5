/**
 * Authentication resources: the token response (shape not shown by the spec: we answer the
 * OAuth 2.0 client-credentials form, see docs/contract-gaps.md), JWT claims, JWKS entries.
 */
import { z } from 'zod';

export const tokenResponseSchema = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().positive(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

/** Claims the service puts in its access tokens (names are ours; the spec does not show them). */
export interface AccessClaims {
  sub: string; // client id
  broker: string; // tenant (broker key)
  label: string; // white label reference id
  scope: string; // space-separated path prefixes, e.g. "/counterparty-management /migration-assistance"
}

export const jwkSchema = z.looseObject({
  kty: z.string(),
  e: z.string(),
  use: z.string().optional(),
  kid: z.string(),
  alg: z.string().optional(),
  n: z.string(),
});
export const jwksSchema = z.array(jwkSchema);
export type PublicJwk = z.infer<typeof jwkSchema>;
