/** Small shapes several resources share. */
import { z } from 'zod';
import { readIsoDateTime } from './iso8601.js';

export const uuid = z.uuid();
/**
 * A timestamp in any ISO 8601 form with a zone, read as the extended form (iso8601.ts): the one
 * schema for every timestamp read from the platform.
 */
export const timestamp = z.string().transform((text, ctx) => {
  const read = readIsoDateTime(text);
  if (read !== undefined) return read;
  ctx.issues.push({
    code: 'custom',
    input: text,
    message: `expected an ISO 8601 date-time with a zone (e.g. 2026-01-02T03:04:05Z or 20260102T030405Z), got ${JSON.stringify(text.slice(0, 60))}`,
  });
  return z.NEVER;
});
export const isoDate = z.iso.date();
export const externalReferenceSchema = z.object({ origin: z.string().min(1), referenceId: z.string().min(1) });
export type ExternalReference = z.infer<typeof externalReferenceSchema>;

/**
 * The sequential counter of streamed objects. The spec's name for it is garbled ("the
 * service"); we call it `sequenceNumber` (docs/contract-gaps.md). Clients also accept the
 * names in COUNTER_FIELD_ALIASES.
 */
export const COUNTER_FIELD = 'sequenceNumber';
export const COUNTER_FIELD_ALIASES = ['sequenceNumber', 'sequence', 'seq', 'counter', 'position', 'streamPosition'] as const;

/** Reads the counter of a streamed object under any of the accepted names. */
export function readCounter(obj: Record<string, unknown>): number | undefined {
  for (const name of COUNTER_FIELD_ALIASES) {
    const v = obj[name];
    if (typeof v === 'number' && Number.isInteger(v)) return v;
  }
  return undefined;
}
