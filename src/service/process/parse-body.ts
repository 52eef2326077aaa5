/**
 * Request bodies checked with a zod schema from src/contract: a refused body is one 400
 * INVALID_REQUEST problem listing every failing field with a code (MISSING_REQUIRED_FIELD or
 * INVALID_FIELD_VALUE), like staging results do. Used by process and lodging routes.
 */
import type { z } from 'zod';
import { HttpProblem } from '../http/problem.js';
import { fieldIssues } from '../../contract/field-errors.js';

/**
 * The parsed body, or throws the 400 problem.
 * @example const body = parseBody(createProcessSchema, request.body, 'process creation body');
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(body ?? undefined);
  if (parsed.success) return parsed.data;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpProblem(
      400,
      'INVALID_REQUEST',
      `${what}: expected a JSON object, got ${body === undefined ? 'no body' : Array.isArray(body) ? 'an array' : typeof body}`,
    );
  }
  const errors = fieldIssues(body, parsed.error);
  const summary = errors.map((e) => `${e.field || '(body)'}: ${e.message === 'MISSING_REQUIRED_FIELD' ? 'missing' : e.detail}`).join('; ');
  throw new HttpProblem(400, 'INVALID_REQUEST', `${what} is invalid: ${summary}`, { errors });
}
