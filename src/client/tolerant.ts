/**
 * Tolerant readers for the places where the specification shows no shape, so the client works
 * against the embedded service and against a platform that chose differently: the token
 * response, job ids, the staging-result container, process definitions (one or many).
 */
import { Readable } from 'node:stream';
import streamArray from 'stream-json/streamers/stream-array.js';
import streamObject from 'stream-json/streamers/stream-object.js';
import { z } from 'zod';
import { createFrameDecoder, type FrameDecoder } from '../codec/index.js';
import { idKey, lowerUuid } from '../contract/canonical-form.js';
import { StagecoachError } from '../contract/errors.js';
import { stagingResultSchema, type StagingResult, type StagingResultVisitor } from '../contract/migration.js';
import { processDefinitionSchema, type ProcessDefinition } from '../contract/process.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface ReadToken {
  token: string;
  /** expires_in of the response, when it had one (seconds). */
  expiresIn?: number;
}

/** Members a token response may wrap its token object in (`{"data": {"accessToken": …}}`). */
const TOKEN_ENVELOPES = ['data', 'result', 'response', 'payload', 'token'] as const;

/**
 * The access token from a token response body: a bare JWT, a JSON string, or an object with
 * `access_token`, `accessToken`, `token` or `jwt`, also inside one envelope member (`data`,
 * `result`, `response`, `payload`, `token`); `expires_in` / `expiresIn` as a number or digits.
 * Throws (without echoing the body, which may hold secrets) when none fits.
 * @example readTokenBody('{"access_token":"eyJ…","expires_in":300}') // { token: 'eyJ…', expiresIn: 300 }
 * @example readTokenBody('{"data":{"accessToken":"eyJ…","expiresIn":"300"}}') // { token: 'eyJ…', expiresIn: 300 }
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
  const fromObject = (o: Record<string, unknown>): ReadToken | undefined => {
    const token = [o.access_token, o.accessToken, o.token, o.jwt].find((v): v is string => typeof v === 'string' && v.length > 0);
    if (!token) return undefined;
    const expiresIn = [o.expires_in, o.expiresIn]
      .map((v) => (typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v))
      .find((v): v is number => typeof v === 'number' && v > 0);
    return expiresIn === undefined ? { token } : { token, expiresIn };
  };
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  if (isObject(json)) {
    const read = fromObject(json);
    if (read) return read;
    for (const key of TOKEN_ENVELOPES) {
      const inner = json[key];
      const wrapped = isObject(inner) ? fromObject(inner) : undefined;
      if (wrapped) return wrapped;
    }
  }
  // The body may hold secrets: describe its shape only.
  const keysOf = (o: Record<string, unknown>) =>
    Object.keys(o)
      .slice(0, 10)
      .map((k) => k.slice(0, 40));
  const shape =
    json === undefined
      ? `${trimmed.length} characters of non-JSON text`
      : Array.isArray(json)
        ? 'a JSON array'
        : isObject(json)
          ? `a JSON object with keys ${keysOf(json).join(', ')}${TOKEN_ENVELOPES.filter((k) => isObject(json[k]))
              .map((k) => ` (${k}: keys ${keysOf(json[k] as Record<string, unknown>).join(', ')})`)
              .join('')}`
          : `JSON ${json === null ? 'null' : typeof json}`;
  throw new StagecoachError(
    'HTTP_ERROR',
    `token response not understood: expected a JWT, a JSON string or an object with access_token (also inside data, result, response or payload), got ${shape}`,
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
    if (/^[\w-]+$/.test(trimmed)) return idKey(trimmed);
    json = undefined;
  }
  if (typeof json === 'string' && json) return idKey(json);
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    const id = [o.referenceId, o.jobId, o.jobReferenceId, o.id].find((v): v is string => typeof v === 'string' && v.length > 0);
    if (id) return idKey(id);
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
 * The staging results of one upload (or, with `onResult`, none: each handed to it as it is read),
 * whatever the container: json-seq, JSON Lines, or a JSON
 * container (an array, or an object whose `results`, `items` or `data` member is the array),
 * the last read as a stream of items (stream-json) whether pretty-printed or not. The
 * Content-Type says which (application/json → a container); the first byte decides when it is
 * missing or unknown (RS → json-seq, `[` → a container, `{` → a container when the whole body is
 * one JSON text, else JSON Lines).
 */
export async function readStagingResults(
  body: AsyncIterable<Uint8Array>,
  contentType: string | undefined,
  onResult?: StagingResultVisitor,
): Promise<StagingResult[]> {
  const out: StagingResult[] = [];
  let index = 0;
  const take = (value: unknown, where: string) => {
    const result = acceptedResult(value) ?? parseWith(stagingResultSchema, normaliseResult(value), where);
    if (onResult) onResult(result, index++);
    else out.push(result);
  };
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  // The first bytes, up to the first that is not white space, tell the container.
  const iterator = body[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let first: number | undefined;
  let i = 0;
  while (first === undefined) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = asBuffer(next.value);
    head.push(chunk);
    for (i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
        first = b;
        break;
      }
    }
  }
  if (first === undefined) return out;
  const rest = (async function* () {
    // Handed over one by one and let go of: a chunk held here would live as long as the answer.
    while (head.length > 0) yield head.shift()!;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield asBuffer(next.value);
  })();
  const isJsonType = type === 'application/json' || /^application\/[\w.-]+\+json$/.test(type);
  if (first !== 0x1e && (first === 0x5b || (first === 0x7b && isJsonType))) {
    await readJsonContainer(rest, first, take);
    return out;
  }
  if (first === 0x1e || (first !== 0x7b && /json-seq/.test(type))) {
    await readFrames(rest, 'json-seq', first === 0x1e, take);
    return out;
  }
  if (/jsonl|ndjson|x-json-stream/.test(type)) {
    await readFrames(rest, 'jsonl', false, take);
    return out;
  }
  // `{` of an unnamed type: one JSON text (a wrapper object or a single result) or JSON Lines.
  const chunks: Buffer[] = [];
  for await (const c of rest) chunks.push(c);
  const buf = Buffer.concat(chunks);
  let whole: unknown;
  try {
    whole = JSON.parse(buf.toString('utf8'));
  } catch {
    await readFrames([buf], 'jsonl', false, take);
    return out;
  }
  const list = containerItems(whole as Record<string, unknown>) ?? [whole];
  list.forEach((v, n) => take(v, `staging result ${n + 1}`));
  return out;
}

/** A chunk as a Buffer, without copying its bytes. */
function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

const RS = 0x1e;

/**
 * The records of a json-seq or JSON Lines answer, taken chunk by chunk as the answer arrives (the
 * service writes results as it commits them): between chunks only the unfinished last record is
 * kept. Collected whole, the chunks of a 2,000-record answer were held for as long as it took to
 * arrive, long enough for V8 to promote them, and they piled up outside the heap until a full
 * collection (docs/performance.md). json-seq that starts with RS is read record by record with
 * `wellFormedSeq` over each run of whole records; from the first run that is not well formed on,
 * the frame decoder reads the rest, so what is wrong is named exactly as for the whole answer.
 */
async function readFrames(
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  format: 'json-seq' | 'jsonl',
  fast: boolean,
  take: (value: unknown, where: string) => void,
): Promise<void> {
  let taken = 0;
  let decoder: FrameDecoder | undefined;
  const decode = (bytes: Buffer) => {
    if (!decoder) {
      // Every frame before the decoder's first was a record taken here.
      const before = taken;
      decoder = createFrameDecoder(format, (frame) => {
        if (frame.kind === 'invalid') throw badFrame(before + frame.index, frame.message);
        taken++;
        take(frame.value, `staging result ${before + frame.index + 1}`);
      });
    }
    decoder.write(bytes);
  };
  /**
   * Whole records, from an RS up to the next record's RS (or the end of the answer): true when
   * they were well formed and taken, else they went to the decoder, which reads on from here.
   */
  const records = (bytes: Buffer): boolean => {
    const values = decoder ? undefined : wellFormedSeq(bytes.toString('utf8'));
    if (!values) {
      decode(bytes);
      return false;
    }
    for (const v of values) take(v, `staging result ${++taken}`);
    return true;
  };
  let pending: Buffer | undefined;
  for await (const chunk of chunks) {
    if (!fast || decoder) {
      decode(chunk);
      continue;
    }
    const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
    // Cut before the last RS, when a whole record comes before it.
    const cut = bytes.lastIndexOf(RS);
    if (cut <= bytes.indexOf(RS)) {
      pending = bytes;
      continue;
    }
    const unfinished = bytes.subarray(cut);
    if (records(bytes.subarray(0, cut)))
      pending = Buffer.from(unfinished); // copied: a view would keep the whole chunk
    else {
      decode(unfinished);
      pending = undefined;
    }
  }
  if (pending) records(pending);
  decoder?.end();
}

/** Members of a JSON container object that hold the list of staging results. */
const RESULT_CONTAINERS = ['results', 'items', 'data'] as const;

/** The result list of a container object, or undefined when it has none of the known members. */
function containerItems(o: Record<string, unknown>): unknown[] | undefined {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return undefined;
  for (const key of RESULT_CONTAINERS) if (Array.isArray(o[key])) return o[key] as unknown[];
  return undefined;
}

/**
 * A JSON container of staging results read as a stream: the items of a top-level array one by
 * one; for an object, its members one by one (the result list is the `results`, `items` or
 * `data` member; an object with `referenceId` is a single result). Any other shape is refused
 * with its keys, never read as no results.
 */
async function readJsonContainer(body: AsyncIterable<Buffer>, first: number, take: (value: unknown, where: string) => void): Promise<void> {
  const source = Readable.from(body);
  try {
    if (first === 0x5b) {
      const items = source.pipe(streamArray.withParserAsStream());
      for await (const { key, value } of items as AsyncIterable<{ key: number; value: unknown }>) take(value, `staging result ${key + 1}`);
      return;
    }
    const members = source.pipe(streamObject.withParserAsStream());
    const keys: string[] = [];
    const single: Record<string, unknown> = {};
    let found = false;
    for await (const { key, value } of members as AsyncIterable<{ key: string; value: unknown }>) {
      keys.push(key);
      single[key] = value;
      if (!found && (RESULT_CONTAINERS as readonly string[]).includes(key) && Array.isArray(value)) {
        found = true;
        value.forEach((v, n) => take(v, `staging result ${n + 1}`));
      }
    }
    if (found) return;
    if ('referenceId' in single) return void take(single, 'staging result 1');
    throw new StagecoachError(
      'HTTP_ERROR',
      `staging response not understood: a JSON object with keys ${
        keys
          .slice(0, 10)
          .map((k) => k.slice(0, 40))
          .join(', ') || '(none)'
      }; expected an array of results, or an object whose results, items or data member is that array`,
    );
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    throw new StagecoachError(
      'HTTP_ERROR',
      `staging response not understood: the JSON container does not parse: ${(err as Error).message}`,
    );
  } finally {
    source.destroy();
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

/**
 * A page of a list as `{items, total, offset, limit}` whether the platform sent that envelope or
 * `{data, total}` (a common other one): offset and limit are then those the request asked for,
 * else the start and the number of items the page holds (the page size the platform chose).
 * Any other shape is passed on for the page's schema to refuse by name.
 * @example readPage({ data: [a, b], total: 9 }, { offset: 4 }) // { items: [a, b], total: 9, offset: 4, limit: 2 }
 */
export function readPage(body: unknown, asked: { offset?: number; limit?: number }): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const { data, ...rest } = body as Record<string, unknown>;
  if ('items' in rest || !Array.isArray(data)) return body;
  return { offset: asked.offset ?? 0, limit: asked.limit ?? data.length, ...rest, items: data };
}

/**
 * zod parse of something the platform sent, with an error that names what was being read and
 * the first issue. A member whose value is `null` is read as absent (withoutNulls): every reader
 * of platform data goes through here, so none has to allow null field by field. Every UUID is
 * read in lower case (canonical-form.ts), so none has to compare ids without case either.
 */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  // UUIDs in any case are the same ids (RFC 9562): read in the one form the ledger keeps
  // (canonical-form.ts), in the same pass that drops the nulls.
  const parsed = schema.safeParse(withoutNulls(value, true));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join('.') || '(root)';
  throw new StagecoachError('HTTP_ERROR', `${what} from the service is not of the expected shape: ${field}: ${issue.message}`, { field });
}

/**
 * The value with every object member whose value is `null` left out, at any depth. A platform
 * that serialises an absent optional field as `null` (a .NET or Java default) means "absent",
 * as RFC 8259 leaves it to the application; nulls inside arrays are kept (they are values).
 * With `lowerIds`, every UUID also in lower case (`lowerUuid`, canonical-form.ts): what parseWith reads.
 * @example withoutNulls({ surnamePrefix: null, surname: 'Jansen' }) // { surname: 'Jansen' }
 */
export function withoutNulls(value: unknown, lowerIds = false): unknown {
  if (typeof value === 'string') return lowerIds ? lowerUuid(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = withoutNulls(item, lowerIds);
      if (next !== item) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  // for…in, not Object.entries: every streamed record comes through here, and a parsed JSON object has only its own keys.
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (item === null) {
      copy ??= { ...(value as Record<string, unknown>) };
      delete copy[key];
      continue;
    }
    // Strings settled here, without a call each (every streamed record passes).
    const next = typeof item === 'string' ? (lowerIds ? lowerUuid(item) : item) : withoutNulls(item, lowerIds);
    if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}
