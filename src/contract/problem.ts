/**
 * The problem body (RFC 9457 `application/problem+json`) every error of the service uses.
 * The spec shows title, status and detail for authentication errors; we add a stable `code`
 * from the error registry everywhere, and `errors` when a request fails on several fields.
 */
import { z } from 'zod';

export const problemSchema = z.looseObject({
  type: z.string().optional(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  code: z.string().optional(),
  instance: z.string().optional(),
  errors: z.array(z.looseObject({ field: z.string().optional(), message: z.string() })).optional(),
});
export type Problem = z.infer<typeof problemSchema>;
