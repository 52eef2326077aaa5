/** Small shapes several resources share. */
import { z } from 'zod';

export const uuid = z.uuid();
export const timestamp = z.iso.datetime({ offset: true });
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
