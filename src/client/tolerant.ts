/**
 * Tolerant readers for the places where the specification shows no shape, so the client works
 * against the embedded service and against a platform that chose differently: the token
 * response, job ids, the staging-result container, process definitions (one or many).
 */
import { z } from 'zod';
import { createFrameDecoder, type Frame } from '../codec/index.js';
import { StagecoachError } from '../contract/errors.js';
import { stagingResultSchema, type StagingResult } from '../contract/migration.js';
import { processDefinitionSchema, type ProcessDefinition } from '../contract/process.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface ReadToken {
  token: string;
  /** expires_in of the response, when it had one (seconds). */
  expiresIn?: number;
}

/**
 * The access token from a token response body: a bare JWT, a JSON string, or an object with
 * `access_token`, `accessToken` or `token`. Throws (without echoing the body) when none fits.
 * @example readTokenBody('{"access_token":"eyJ…","expires_in":300}') // { token: 'eyJ…', expiresIn: 300 }
 */
export function readTokenBody(text: string): ReadToken {
  const trimmed = text.trim();
  if (JWT_SHAPE.test(trimmed)) return { token: trimmed };
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    json = undefined;
  }
  if (typeof json === 'string' && json.trim()) return { token: json.trim() };
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    const token = [o.access_token, o.accessToken, o.token, o.jwt].find((v): v is string => typeof v === 'string' && v.length > 0);
    const expiresIn = [o.expires_in, o.expiresIn].find((v): v is number => typeof v === 'number' && v > 0);
    if (token) return expiresIn === undefined ? { token } : { token, expiresIn };
  }
  // The body may hold secrets: describe its shape only.
  const shape =
    json === undefined
      ? `${trimmed.length} characters of non-JSON text`
      : Array.isArray(json)
        ? 'a JSON array'
        : `JSON ${typeof json}${json && typeof json === 'object' ? ` with keys ${Object.keys(json).join(', ')}` : ''}`;
  throw new StagecoachError(
    'HTTP_ERROR',
    `token response not understood: expected a JWT, a JSON string or an object with access_token, got ${shape}`,
  );
}

/** Claims of a JWT, read without verifying it (only to schedule refresh and explain 403s). */
export function peekJwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length < 2) return undefined;
  try {
    const json = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    return json && typeof json === 'object' ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Scopes named in claims: `scope` (space separated), `scp` or `scopes` (array or string). */
export function scopesOf(claims: Record<string, unknown> | undefined): string[] {
  if (!claims) return [];
  for (const key of ['scope', 'scp', 'scopes']) {
    const v = claims[key];
    if (typeof v === 'string') return v.split(/[\s,]+/).filter(Boolean);
    if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string');
  }
  return [];
}

/**
 * A job id from the body of a job-start response: a JSON string (the spec), a bare id, or an
 * object with `referenceId`, `jobId`, `jobReferenceId` or `id`.
 * @example readJobId('"6f1c…"') // '6f1c…'
 */
export function readJobId(text: string): string {
  const trimmed = text.trim();
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    if (/^[\w-]+$/.test(trimmed)) return trimmed;
    json = undefined;
  }
  if (typeof json === 'string' && json) return json;
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    const id = [o.referenceId, o.jobId, o.jobReferenceId, o.id].find((v): v is string => typeof v === 'string' && v.length > 0);
    if (id) return id;
  }
  throw new StagecoachError(
    'HTTP_ERROR',
    `job-start response not understood: expected a JSON string job id, got ${JSON.stringify(trimmed.slice(0, 80))}`,
  );
}

/** Definitions as an array whether the service sent one object, an array or an {items} envelope. */
export function readDefinitions(json: unknown): ProcessDefinition[] {
  const list = Array.isArray(json)
    ? json
    : json && typeof json === 'object' && Array.isArray((json as { items?: unknown }).items)
      ? (json as { items: unknown[] }).items
      : json === null || json === undefined || json === ''
        ? []
        : [json];
  return list.map((item, i) => parseWith(tolerantDefinitionSchema, item, `process definition ${i}`) as ProcessDefinition);
}

// The shared schema is strict on every field; a real platform may omit statuses or updatedOn.
const tolerantDefinitionSchema = processDefinitionSchema
  .extend({
    name: z.union([z.record(z.string(), z.string()), z.string()]).optional(),
    statuses: processDefinitionSchema.shape.statuses.optional(),
    updatedOn: z.string().optional(),
    isActive: z.boolean().optional(),
  })
  .loose();

/**
 * The staging results of one upload, whatever the container: a JSON array (or an object with
 * `results` / `items`), JSON Lines, or json-seq. `contentType` only breaks ties: the first byte
 * decides (RS → json-seq, `[` or `{` followed by an array key → JSON, else JSON Lines).
 */
export async function readStagingResults(body: AsyncIterable<Uint8Array>, contentType: string | undefined): Promise<StagingResult[]> {
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  const buf = Buffer.concat(chunks);
  let i = 0;
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  const first = buf[i];
  const out: StagingResult[] = [];
  const take = (value: unknown, where: string) =>
    out.push(acceptedResult(value) ?? parseWith(stagingResultSchema, normaliseResult(value), where));
  if (first === undefined) return out;
  if (first === 0x1e || (first !== 0x5b && first !== 0x7b && /json-seq/.test(contentType ?? ''))) {
    return decodeAll(buf, 'json-seq', take);
  }
  if (first === 0x5b) {
    const json = JSON.parse(buf.toString('utf8')) as unknown[];
    json.forEach((v, n) => take(v, `staging result ${n + 1}`));
    return out;
  }
  // `{`: either a wrapper object ({results: […]}) or the first line of JSON Lines.
  const text = buf.toString('utf8');
  const firstLineEnd = text.indexOf('\n', i);
  if (firstLineEnd < 0 || text.slice(firstLineEnd).trim() === '') {
    const json = JSON.parse(text) as Record<string, unknown>;
    const list = Array.isArray(json.results) ? json.results : Array.isArray(json.items) ? json.items : [json];
    list.forEach((v, n) => take(v, `staging result ${n + 1}`));
    return out;
  }
  return decodeAll(buf, 'jsonl', take);

  function decodeAll(bytes: Buffer, format: 'jsonl' | 'json-seq', onValue: typeof take): StagingResult[] {
    if (format === 'json-seq' && first === 0x1e) {
      const values = wellFormedSeq(bytes.toString('utf8'));
      if (values) {
        values.forEach((v, n) => onValue(v, `staging result ${n + 1}`));
        return out;
      }
    }
    const frames: Frame[] = [];
    const decoder = createFrameDecoder(format, (f) => frames.push(f));
    decoder.write(bytes);
    decoder.end();
    for (const frame of frames) {
      if (frame.kind === 'invalid') throw badFrame(frame.index, frame.message);
      onValue(frame.value, `staging result ${frame.index + 1}`);
    }
    return out;
  }
}

/**
 * The values of a json-seq text in which every record is whole (RS, one JSON object, LF), or
 * undefined so that the frame decoder reads it and names what is wrong. A whole answer of
 * 2,000 results is read this way in a third of the decoder's time.
 */
function wellFormedSeq(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let at = text.indexOf('\x1e');
  if (at < 0 || text.slice(0, at).trim() !== '') return undefined;
  while (at >= 0) {
    const next = text.indexOf('\x1e', at + 1);
    const end = next < 0 ? text.length : next;
    if (end > at + 1) {
      if (text.charCodeAt(end - 1) !== 0x0a || end - at > 1 << 20) return undefined;
      let value: unknown;
      try {
        value = JSON.parse(text.slice(at + 1, end));
      } catch {
        return undefined;
      }
      if (value === null || typeof value !== 'object') return undefined;
      values.push(value);
    }
    at = next;
  }
  return values;
}

/**
 * The common answer, a staged record (`{referenceId, isSuccessful: true}` with no errors), read
 * without zod: the same object zod would return, at a fraction of the cost per record of a
 * 100,000-record run. Anything else (refusals, odd shapes) goes through the schema.
 */
function acceptedResult(value: unknown): StagingResult | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const o = value as Record<string, unknown>;
  if (o.isSuccessful !== true || typeof o.referenceId !== 'string') return undefined;
  const errors = o.errors;
  if (errors !== undefined && errors !== null && !(Array.isArray(errors) && errors.length === 0)) return undefined;
  return { referenceId: o.referenceId, isSuccessful: true, errors: [] };
}

function normaliseResult(value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (o.errors === undefined || o.errors === null) return { ...o, errors: [] };
  }
  return value;
}

function badFrame(index: number, message: string): StagecoachError {
  return new StagecoachError('HTTP_ERROR', `staging response not understood: record ${index + 1}: ${message}`);
}

/** zod parse with an error that names what was being read and the first issue. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join('.') || '(root)';
  throw new StagecoachError('HTTP_ERROR', `${what} from the service is not of the expected shape: ${field}: ${issue.message}`, { field });
}
