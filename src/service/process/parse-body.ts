/**
 * Request bodies checked with a zod schema from src/contract: a refused body is one 400
 * INVALID_REQUEST problem listing every failing field with a code (MISSING_REQUIRED_FIELD or
 * INVALID_FIELD_VALUE), like staging results do. Used by process and lodging routes.
 */
import type { z } from 'zod';
import { HttpProblem } from '../http/problem.js';

/**
 * The parsed body, or throws the 400 problem.
 * @example const body = parseBody(createProcessSchema, request.body, 'process creation body');
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(body ?? undefined);
  if (parsed.success) return parsed.data;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpProblem(400, 'INVALID_REQUEST', `${what}: expected a JSON object, got ${body === undefined ? 'no body' : Array.isArray(body) ? 'an array' : typeof body}`);
  }
  const errors = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    const missing = issue.code === 'invalid_type' && valueAt(body, issue.path) === undefined;
    return { field, message: missing ? 'MISSING_REQUIRED_FIELD' : 'INVALID_FIELD_VALUE', detail: issue.message };
  });
  const summary = errors.map((e) => `${e.field || '(body)'}: ${e.message === 'MISSING_REQUIRED_FIELD' ? 'missing' : e.detail}`).join('; ');
  throw new HttpProblem(400, 'INVALID_REQUEST', `${what} is invalid: ${summary}`, { errors });
}

function valueAt(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}
