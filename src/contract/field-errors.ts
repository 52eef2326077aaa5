/**
 * Turns zod issues into the field errors of the spec ({field, message: CODE}): a field that is
 * absent is MISSING_REQUIRED_FIELD, one that is present but wrong is INVALID_FIELD_VALUE. One
 * rule for staged records and for every request body, so the codes mean the same everywhere.
 */
import type { z } from 'zod';

export type FieldErrorCode = 'MISSING_REQUIRED_FIELD' | 'INVALID_FIELD_VALUE';

// A type alias, not an interface: it must fit the open `errors` items of a problem body.
export type FieldIssue = {
  /** Dotted path of the field (`addresses.0.postalCode`); empty for the whole input. */
  field: string;
  message: FieldErrorCode;
  /** zod's own explanation, for human-readable details. */
  detail: string;
};

/** @example fieldIssues({ a: 1 }, schema.safeParse({ a: 1 }).error!) // [{ field: 'b', message: 'MISSING_REQUIRED_FIELD', … }] */
export function fieldIssues(input: unknown, error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => {
    const missing = (issue.code === 'invalid_type' || issue.code === 'invalid_union') && valueAt(input, issue.path) === undefined;
    return {
      field: issue.path.map(String).join('.'),
      message: missing ? 'MISSING_REQUIRED_FIELD' : 'INVALID_FIELD_VALUE',
      detail: issue.message,
    };
  });
}

function valueAt(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}
