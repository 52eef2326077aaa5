/**
 * The one root error of stagecoach and the registry of its stable codes.
 *
 * Every error a user can meet — a bad pipeline file, a refused record, a problem body from the
 * service — carries a `code` from this list and machine-readable context (file, line, field,
 * recordId, jobId…). Messages read "What is wrong: detail, expected X, got `value` at file:line".
 * Client, pipeline and service all use it; the service maps it to HTTP in one place.
 */

export const ERROR_CODES = [
  // authentication and authorisation
  'INVALID_CLIENT_CREDENTIALS',
  'UNKNOWN_TENANT_OR_LABEL',
  'MISSING_BEARER_TOKEN',
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'SCOPE_NOT_GRANTED',
  'TOO_MANY_ATTEMPTS',
  // request shape
  'UNSUPPORTED_API_VERSION',
  'NOT_ACCEPTABLE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_REQUEST',
  'INVALID_QUERY_PARAMETER',
  'PAYLOAD_TOO_LARGE',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  'INJECTED_FAULT',
  // migration assistance
  'MIGRATION_ALREADY_ACTIVE',
  'MIGRATION_NOT_ACTIVE',
  'MIGRATION_STATE_CONFLICT',
  'MISSING_REQUIRED_FIELD',
  'INVALID_FIELD_VALUE',
  'UNKNOWN_CODE',
  'RELATION_TARGET_MISSING',
  'DUPLICATE_IDENTITY',
  'DUPLICATE_REFERENCE_ID',
  'MALFORMED_RECORD',
  'TRUNCATED_RECORD',
  'RECORD_TOO_LARGE',
  'IMPORT_FAILED',
  // lodging
  'MESSAGE_NOT_DRAFT',
  'MESSAGE_ALREADY_EXISTS',
  'REQUIRED_ATTACHMENTS_MISSING',
  'ATTACHMENT_INVALID_NAME',
  'ATTACHMENT_DUPLICATE_NAME',
  'ATTACHMENT_MIME_MISMATCH',
  'ATTACHMENT_MALFORMED_XML',
  'ATTACHMENT_SCHEMA_VIOLATION',
  'ATTACHMENT_FORBIDDEN_DTD',
  'ATTACHMENT_TOO_LARGE',
  'TOO_MANY_PARTS',
  'TOO_MANY_ATTACHMENTS',
  'MESSAGE_TYPE_MISMATCH',
  'UNRESOLVED_REFERENCE',
  // process orchestration
  'UNKNOWN_PROCESS_DEFINITION',
  'PROCESS_DEFINITION_INACTIVE',
  // events
  'WEBHOOK_URI_REFUSED',
  'UNKNOWN_EVENT_TYPE',
  // toolkit side
  'CONFIG_INVALID',
  'SOURCE_READ_FAILED',
  'SOURCE_ROW_INVALID',
  // child sources (src/pipeline/definition/child-schema.ts CHILD_CODES): an orphan, a duplicate, a child of a refused parent
  'CHILD_ORPHAN',
  'CHILD_DUPLICATE',
  'CHILD_PARENT_REFUSED',
  'MAPPING_FAILED',
  'RECORD_REJECTED',
  'HTTP_ERROR',
  // a 4xx whose body names no code of this registry: the platform refused the request (its message says why)
  'REQUEST_REFUSED',
  'NETWORK_ERROR',
  'TIMEOUT',
  'STREAM_TRUNCATED',
  'JOB_FAILED',
  'JOB_DEADLINE_EXCEEDED',
  'LEDGER_ERROR',
  'ABORTED',
  'RECONCILIATION_UNBALANCED',
  // fault injection (service admin endpoint)
  'FAULT_SPEC_INVALID',
  'ADMIN_LOOPBACK_ONLY',
  'ADMIN_HOST_NOT_LOOPBACK',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Machine-readable context; every key is optional and only what is known is set. */
export interface ErrorContext {
  file?: string;
  line?: number;
  column?: number;
  field?: string;
  value?: unknown;
  recordId?: string;
  jobId?: string;
  status?: number;
  [key: string]: unknown;
}

export class StagecoachError extends Error {
  override readonly name: string = 'StagecoachError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly context: ErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `file:line` or `file:line:column` when known, for messages. */
export function formatLocation(ctx: { file?: string; line?: number; column?: number }): string {
  if (!ctx.file) return '';
  if (ctx.line === undefined) return ctx.file;
  return ctx.column === undefined ? `${ctx.file}:${ctx.line}` : `${ctx.file}:${ctx.line}:${ctx.column}`;
}
