/**
 * What a dialect changes in the values the service answers with, per resource. Pure functions
 * of (resource, value, dialect): the HTTP edge (index.ts) decodes bodies, calls these, encodes.
 */
import { STATUS_CODES } from 'node:http';
import { EVENT_GROUPS } from '../../contract/events.js';
import { STREAMED_ORGANISATION_FIELDS, STREAMED_PERSON_FIELDS } from '../../contract/counterparty.js';
import { FIELDS_KEPT_BEYOND_SPEC } from '../counterparties/render.js';
import { ENTITY_OF } from '../migration/jobs.js';
import { LOG_ACTIONS } from '../migration/store-logs.js';
import { writeIsoDate } from '../../contract/iso8601.js';
import type { Dialect } from './switches.js';

/** The resources whose values a dialect changes (by route); `other` gets only the generic rewrites. */
export type Resource =
  | 'token'
  | 'jwks'
  | 'counterparty-list'
  | 'counterparty-stream'
  | 'log-stream'
  | 'staging'
  | 'job'
  | 'job-start'
  | 'definitions'
  | 'message'
  | 'message-send'
  | 'registrations'
  | 'attachment'
  | 'migration'
  | 'process'
  | 'other';

const ROUTES: Record<string, Resource> = {
  'GET /authentication/token/:brokerKey/:labelId': 'token',
  'GET /counterparty-management/counterparties': 'counterparty-list',
  'GET /counterparty-management/counterparties/stream': 'counterparty-stream',
  'GET /migration-assistance/migrations/:id/logs/stream': 'log-stream',
  'PUT /counterparty-management/migrations/:id/staging/counterparties': 'staging',
  'GET /migration-assistance/jobs/:jobId': 'job',
  'GET /authentication/jwks': 'jwks',
  'POST /migration-assistance/migrations': 'migration',
  'GET /migration-assistance/migrations/current': 'migration',
  'GET /migration-assistance/migrations/:id': 'migration',
  'PUT /migration-assistance/migrations/:id/cancel': 'migration',
  'GET /process-orchestration/process-definitions': 'definitions',
  'GET /process-orchestration/processes/:processId': 'process',
  'PUT /migration-assistance/migrations/:id/jobs/validate-staging': 'job-start',
  'PUT /migration-assistance/migrations/:id/jobs/import': 'job-start',
  'PUT /migration-assistance/migrations/:id/jobs/counts': 'job-start',
  'PUT /lodging/processes/:processId/messages/:messageId': 'message',
  'PUT /lodging/processes/:processId/messages/:messageId/send': 'message-send',
  'PUT /lodging/processes/:processId/messages/:messageId/attachments/*': 'attachment',
  ...Object.fromEntries(Object.keys(EVENT_GROUPS).map((group) => [`GET /${group}/events/:eventName/endpoints`, 'registrations' as const])),
};

/** The resource a route serves. @example resourceOf('GET', '/migration-assistance/jobs/:jobId') // 'job' */
export function resourceOf(method: string, routeUrl: string | undefined): Resource {
  return ROUTES[`${method} ${routeUrl ?? ''}`] ?? 'other';
}

/** Whether the resource's stream carries a sequence counter. */
export const countedStream = (r: Resource): boolean => r === 'counterparty-stream' || r === 'log-stream';

// Optional fields of streamed counterparties that the service leaves out when unknown.
const OPTIONAL_FIELDS: Record<string, readonly string[]> = {
  StreamingPersonCounterparty: [...STREAMED_PERSON_FIELDS, ...FIELDS_KEPT_BEYOND_SPEC],
  StreamingOrganisationCounterparty: [...STREAMED_ORGANISATION_FIELDS, ...FIELDS_KEPT_BEYOND_SPEC],
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One record of a stream (or one item of the list) as the dialect answers it. */
export function rewriteRecord(resource: Resource, value: unknown, d: Dialect): unknown {
  if (!isObject(value)) return rewriteTimestamps(value, d);
  let out: Json = value;
  if ((resource === 'counterparty-stream' || resource === 'counterparty-list') && d.nulls) {
    out = { ...out };
    for (const field of OPTIONAL_FIELDS[String(out.type)] ?? []) if (!(field in out)) out[field] = null;
  }
  const counted = countedStream(resource) || resource === 'counterparty-list';
  if (d.countersFrom0 && counted && typeof out.sequenceNumber === 'number') {
    out = { ...out, sequenceNumber: out.sequenceNumber - 1 };
  }
  if (d.actions && resource === 'log-stream' && typeof out.action === 'string')
    out = { ...out, action: spellAction(out.action, d.actions) };
  if (d.counterName && counted && 'sequenceNumber' in out) {
    const { sequenceNumber, ...rest } = out;
    out = { [d.counterName]: sequenceNumber, ...rest };
  }
  const counterparty = resource === 'counterparty-stream' || resource === 'counterparty-list';
  if (counterparty) out = otherDataForms(out, d) as Json;
  if (d.uuids === 'upper' || (d.uuids === 'upper-stream' && resource === 'counterparty-stream')) out = upperUuids(out) as Json;
  return rewriteTimestamps(out, d);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Every UUID in upper case, at any depth (`uuids=upper`; RFC 9562 says they compare without case). */
export function upperUuids(value: unknown): unknown {
  if (typeof value === 'string') return UUID.test(value) ? value.toUpperCase() : value;
  if (Array.isArray(value)) return value.map(upperUuids);
  if (isObject(value)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = upperUuids(v);
    return out;
  }
  return value;
}

/**
 * A counterparty's values in the other forms the dialect chose: text in NFD (`text=nfd`), calendar
 * dates in another ISO 8601 form (`dates=…`), amounts as strings with two decimals (`amounts=string`).
 */
export function otherDataForms(value: unknown, d: Dialect, key = ''): unknown {
  if (!d.textNfd && !d.dates && !d.amountsString) return value;
  if (typeof value === 'string') {
    if (d.dates && CALENDAR_DATE.test(value)) return writeIsoDate(value, d.dates);
    return d.textNfd ? value.normalize('NFD') : value;
  }
  if (typeof value === 'number') return d.amountsString && key === 'amount' ? value.toFixed(2) : value;
  if (Array.isArray(value)) return value.map((v) => otherDataForms(v, d, key));
  if (isObject(value)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = otherDataForms(v, d, k);
    return out;
  }
  return value;
}

/** A job result without its empty arrays (`empty-arrays=omitted`), at any depth. */
function withoutEmptyArrays(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmptyArrays);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) if (!(Array.isArray(v) && v.length === 0)) out[k] = withoutEmptyArrays(v);
  return out;
}

/**
 * An action name in upper snake case (`actions=upper-snake`).
 * @example upperSnake('ImportedEntities') // 'IMPORTED_ENTITIES'
 */
export const upperSnake = (action: string): string => action.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/**
 * An action name in the dialect's spelling (`actions=upper-snake|kebab`).
 * @example spellAction('ImportedEntities', 'kebab') // 'imported-entities'
 */
export const spellAction = (action: string, spelling: NonNullable<Dialect['actions']>): string =>
  spelling === 'upper-snake' ? upperSnake(action) : upperSnake(action).toLowerCase().replaceAll('_', '-');

/**
 * The log stream's `Actions` filter as the service reads it, from the dialect's spelling: a
 * name so spelt becomes ours; a name in our spelling, unknown to such a platform, matches
 * nothing (as on a platform that knows only its own spelling).
 * @example actionsFilter('IMPORTED_ENTITIES,ImportedEntities', 'upper-snake') // 'ImportedEntities,~ImportedEntities'
 */
export function actionsFilter(given: string, spelling: NonNullable<Dialect['actions']>): string {
  const ours = new Map(LOG_ACTIONS.map((a) => [spellAction(a, spelling), a]));
  return given
    .split(',')
    .map((a) => ours.get(a.trim()) ?? `~${a.trim()}`)
    .join(',');
}

/** A whole JSON body as the dialect answers it. */
export function rewriteBody(resource: Resource, value: unknown, d: Dialect): unknown {
  let out = value;
  if (d.processStatusUpperSnake) out = processStatusesSpelt(resource, out);
  if (resource === 'token' && isObject(out)) out = rewriteToken(out, d);
  else if (resource === 'counterparty-list' && isObject(out) && Array.isArray(out.items))
    out = { ...out, items: out.items.map((item) => rewriteRecord(resource, item, d)) };
  else if (resource === 'job' && isObject(out) && out.jobType === 'Counts' && Array.isArray(out.counts) && d.counts)
    out = { ...out, counts: rewriteCounts(out.counts as CountsTable[], d.counts) };
  else if (resource === 'migration' && isObject(out) && out.activity === 'Canceled' && d.activityCancelled)
    out = { ...out, activity: 'Cancelled' };
  else if (resource === 'job' && isObject(out) && out.jobType === 'Import' && out.status === 'Completed' && d.importSucceeded)
    out = { ...out, status: 'Succeeded' };
  else if (
    resource === 'job' &&
    isObject(out) &&
    out.jobType === 'ValidateStaging' &&
    Array.isArray(out.errors) &&
    d.duplicates === 'unlinked'
  )
    out = { ...out, errors: out.errors.map(unlinked) };
  else if (resource === 'staging' && Array.isArray(out) && d.stagingContainer && d.stagingContainer !== 'array')
    out = { [stagingMember(d.stagingContainer)]: out };
  else if (resource === 'job-start' && typeof out === 'string' && d.jobIdObject) out = { referenceId: out };
  else if (resource === 'jwks' && Array.isArray(out) && d.jwksSet) out = { keys: out };
  else if (resource === 'definitions' && Array.isArray(out) && out.length === 1 && d.definitionsSingle) out = out[0];
  else if (resource === 'registrations' && Array.isArray(out) && d.registrationsWithoutToken)
    out = out.map((r) => (isObject(r) ? Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'token')) : r));
  if (d.pagesData && isPage(out)) out = { data: out.items, total: out.total };
  if (d.emptyArraysOmitted && resource === 'job') out = withoutEmptyArrays(out);
  if (d.uuids === 'upper') out = upperUuids(out);
  return rewriteTimestamps(out, d);
}

/** The member of the staging container holding the results (`pretty` pretty-prints `{"results": […]}`). */
export const stagingMember = (container: Exclude<Dialect['stagingContainer'], 'array' | undefined>): string =>
  container === 'pretty' ? 'results' : container;

/** The process status codes of a definitions list or a process record in upper snake case (`process-status=upper-snake`). */
function processStatusesSpelt(resource: Resource, value: unknown): unknown {
  const spelt = (status: unknown) =>
    isObject(status) && typeof status.code === 'string' ? { ...status, code: upperSnake(status.code) } : status;
  if (resource === 'process' && isObject(value)) return { ...value, status: spelt(value.status) };
  if (resource === 'definitions' && Array.isArray(value))
    return value.map((def) => (isObject(def) && Array.isArray(def.statuses) ? { ...def, statuses: def.statuses.map(spelt) } : def));
  return value;
}

/**
 * A running job's 202 body (`{referenceId, componentsCompleted}`) as the dialect answers it:
 * `{"status": "Running", "progress": {"completed": [...]}}`, or undefined for no body at all.
 */
export function rewriteRunningJob(value: unknown, mode: 'status' | 'empty'): unknown {
  if (mode === 'empty' || !isObject(value)) return undefined;
  return { status: 'Running', progress: { completed: value.componentsCompleted ?? [] } };
}

/**
 * A problem+json error body in another platform's shape: `{"error": {"code", "message"}}`,
 * `{"message"}`, `{"error": "<message>"}`, or the message alone as plain text. The message is the problem's detail (else its title).
 */
export function rewriteError(problem: unknown, mode: NonNullable<Dialect['errors']>): string {
  const p = isObject(problem) ? problem : {};
  const message = String(p.detail || p.title || 'error');
  if (mode === 'plain') return message;
  if (mode === 'message') return JSON.stringify({ message });
  if (mode === 'error-text') return JSON.stringify({ error: message });
  return JSON.stringify({ error: { code: p.code ?? 'ERROR', message } });
}

/** Members of an event's data its emitter leaves out when it has no value (docs/events.md, docs/lodging.md). */
const OPTIONAL_EVENT_FIELDS: Record<string, readonly string[]> = {
  'process.status-changed': ['reason'],
  'lodging.message.handling_succeeded': ['errors'],
  'lodging.message.handling_failed': ['counterparties'],
};

/** Members `envelope=extra-data` adds to every delivery's data: no receiver of ours knows them. */
export const EXTRA_DATA_MEMBERS = { schemaVersion: '2.1', platform: { name: 'stagecoach-embedded-lending-service', region: 'eu-west' } };

/**
 * A webhook delivery's envelope `{id, eventName, occurredOn, data}` as the dialect sends it:
 * absent optional members of the data as `null`, process statuses in upper snake case,
 * timestamps in the dialect's form.
 */
export function rewriteDelivery(envelope: Json, d: Dialect): unknown {
  let out = envelope;
  if (d.nulls && isObject(out.data)) {
    const data: Json = { ...out.data };
    for (const field of OPTIONAL_EVENT_FIELDS[String(out.eventName)] ?? []) if (!(field in data)) data[field] = null;
    out = { ...out, data };
  }
  if (d.processStatusUpperSnake && out.eventName === 'process.status-changed' && isObject(out.data)) {
    const { status, previousStatus } = out.data;
    const data: Json = { ...out.data, status: typeof status === 'string' ? upperSnake(status) : status };
    if (typeof previousStatus === 'string') data.previousStatus = upperSnake(previousStatus);
    out = { ...out, data };
  }
  // Members of the data a newer version of the event carries; receivers pass on what they do not know.
  if (d.deliveryExtraData && isObject(out.data)) out = { ...out, data: { ...out.data, ...EXTRA_DATA_MEMBERS } };
  // Members a CloudEvents-minded platform adds next to ours; receivers read what they know.
  if (d.deliveryExtras) out = { specversion: '1.0', type: out.eventName, source: 'stagecoach-embedded-lending-service', ...out };
  return rewriteTimestamps(out, d);
}

/** The problem codes of a rejected migration request, answered 409 by the service. */
const REJECTION_CODES = new Set(['MIGRATION_ALREADY_ACTIVE', 'MIGRATION_NOT_ACTIVE', 'MIGRATION_STATE_CONFLICT']);
const DEFINITION_REFUSED_CODES = new Set(['UNKNOWN_PROCESS_DEFINITION', 'PROCESS_DEFINITION_INACTIVE']);

/** A response as the route made it: its status and JSON body (before the dialect's body rewrites). */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * The status (and body) the dialect answers instead of the route's, or undefined to keep them.
 * Errors keep their problem body with the new status in it; a repeated send becomes a 409
 * problem. `receivedAt` is when the request arrived: a message whose `sentOn` is earlier was
 * sent by an earlier request.
 */
export function rewriteStatus(resource: Resource, answer: Answer, receivedAt: number, d: Dialect): Answer | undefined {
  const { status, body } = answer;
  if (status >= 400 && isObject(body) && typeof body.code === 'string') {
    const to =
      REJECTION_CODES.has(body.code) && status === 409
        ? d.rejections
        : body.code === 'REQUIRED_ATTACHMENTS_MISSING'
          ? d.missingFiles
          : DEFINITION_REFUSED_CODES.has(body.code)
            ? d.definitionRefused
            : undefined;
    return to === undefined ? undefined : { status: to, body: { ...body, title: STATUS_CODES[to], status: to } };
  }
  if (resource === 'message' && status === 201 && d.messageCreated200) return { status: 200, body };
  if (resource === 'attachment' && status === 204 && d.upload201) return { status: 201, body };
  if (resource === 'message-send' && status === 200 && d.resend409 && isObject(body) && typeof body.sentOn === 'string') {
    if (Date.parse(body.sentOn) >= receivedAt) return undefined; // sent by this request
    const detail = `message ${String(body.referenceId)} was already sent on ${body.sentOn}; it is not a Draft any more`;
    return { status: 409, body: { title: STATUS_CODES[409], status: 409, detail, code: 'MESSAGE_NOT_DRAFT' } };
  }
  return undefined;
}

/** A validation error without the kept record and the shared identity (a platform that names only the fields). */
function unlinked(error: unknown): unknown {
  if (!isObject(error)) return error;
  const { duplicateOf: _kept, identity: _identity, ...rest } = error;
  return rest;
}

/** A page of an offset-paged list in the service's envelope (every list route answers this shape). */
const isPage = (v: unknown): v is { items: unknown[]; total: number } =>
  isObject(v) && Array.isArray(v.items) && typeof v.total === 'number' && typeof v.offset === 'number' && typeof v.limit === 'number';

function rewriteToken(body: Json, d: Dialect): unknown {
  // plain: the JWT alone; the HTTP edge (index.ts) writes it as text/plain
  if (d.tokenBody === 'string' || d.tokenBody === 'plain') return body.access_token;
  // expiresIn as digits: a platform serialising every number of its envelope as a string
  if (d.tokenBody === 'result') return { result: { token: body.access_token, expiresIn: String(body.expires_in) } };
  if (d.tokenBody === 'jwt') return { jwt: body.access_token, expiresIn: body.expires_in };
  if (d.tokenBody === 'response') return { response: body };
  if (d.tokenBody === 'payload') return { payload: { accessToken: body.access_token, expiresIn: body.expires_in } };
  const extra = d.nulls ? { refreshToken: null, scope: null } : {};
  if (!d.tokenEnvelope) return d.nulls ? { ...body, refresh_token: null, scope: null } : body;
  return { data: { accessToken: body.access_token, tokenType: body.token_type, expiresIn: body.expires_in, ...extra } };
}

interface CountsTable {
  type: string;
  headers: string[];
  stagedRows: string[][];
  importedRows: string[][];
}

/**
 * totals-only: only the TotalEntity table (the one the spec shows). more: a TotalEntity row at
 * "0" for every component the migration did not name, and one more table (import outcome).
 */
function rewriteCounts(tables: CountsTable[], mode: 'totals-only' | 'more'): CountsTable[] {
  const totals = tables.find((t) => t.type === 'TotalEntity');
  if (mode === 'totals-only') return totals ? [totals] : [];
  if (!totals) return tables;
  const named = new Set(totals.stagedRows.map((r) => r[0]));
  const zeros = Object.values(ENTITY_OF)
    .filter((e) => !named.has(e))
    .map((e) => [e, '0']);
  const sum = (rows: string[][]) => String(rows.reduce((a, r) => a + Number(r[1] ?? 0), 0));
  const outcome: CountsTable = {
    type: 'ImportOutcome',
    headers: ['Outcome', 'Count'],
    stagedRows: [['Staged', sum(totals.stagedRows)]],
    importedRows: [['Imported', sum(totals.importedRows)]],
  };
  return [
    { ...totals, stagedRows: [...totals.stagedRows, ...zeros], importedRows: [...totals.importedRows, ...zeros] },
    ...tables.filter((t) => t !== totals),
    outcome,
  ];
}

const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** Every timestamp (a string in the RFC 3339 form) in another ISO 8601 form, at any depth. */
export function rewriteTimestamps(value: unknown, d: Dialect): unknown {
  if (!d.timestamps) return value;
  if (typeof value === 'string') return otherForm(value, d.timestamps);
  if (Array.isArray(value)) return value.map((v) => rewriteTimestamps(v, d));
  if (isObject(value)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = rewriteTimestamps(v, d);
    return out;
  }
  return value;
}

/**
 * @example otherForm('2026-01-02T03:04:05.123Z', 'basic')  // '20260102T030405.123Z'
 * @example otherForm('2026-01-02T03:04:05.123Z', 'comma')  // '2026-01-02T03:04:05,123Z'
 * @example otherForm('2026-01-02T03:04:05.123Z', 'offset') // '2026-01-02T04:04:05.123+0100'
 * @example otherForm('2026-01-02T03:04:05.123Z', 'offset-colon') // '2026-01-02T04:04:05.123+01:00'
 * @example otherForm('2026-01-02T03:04:05.123Z', 'offset-hour') // '2026-01-02T04:04:05.123+01'
 * @example otherForm('2026-11-29T04:10:54.950Z', 'ordinal') // '2026-333T04:10:54.950Z'
 * @example otherForm('2026-11-29T04:10:54.950Z', 'week') // '2026-W48-7T04:10:54.950Z'
 */
export function otherForm(text: string, form: NonNullable<Dialect['timestamps']>): string {
  const m = EXTENDED.exec(text);
  if (!m) return text;
  const [, y, mo, d, h, mi, s, fraction, zone] = m;
  if (form === 'basic') return `${y}${mo}${d}T${h}${mi}${s}${fraction ? `.${fraction}` : ''}${zone!.replace(':', '')}`;
  if (form === 'comma') return `${y}-${mo}-${d}T${h}:${mi}:${s},${fraction ?? '000'}${zone}`;
  if (form === 'ordinal' || form === 'week')
    return `${writeIsoDate(`${y}-${mo}-${d}`, form)}T${h}:${mi}:${s}${fraction ? `.${fraction}` : ''}${zone}`;
  // The same instant one hour east of UTC, the offset written without a colon (or with one).
  const shifted = new Date(Date.parse(text) + 3_600_000).toISOString();
  const whole = shifted.slice(0, 19);
  const offset = form === 'offset' ? '+0100' : form === 'offset-colon' ? '+01:00' : '+01';
  return `${whole}${fraction ? `.${shifted.slice(20, 23)}` : ''}${offset}`;
}
