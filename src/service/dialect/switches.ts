/**
 * The switches of a dialect: which alternative the service answers with, per choice it made
 * where the specification is silent (docs/contract-gaps.md, "Alternatives the client is tested
 * against"). Parsed from `serve --dialect <spec>` / the `dialect` option of startService.
 */
import { closestName } from '../../contract/closest-name.js';
import { StagecoachError } from '../../contract/errors.js';

export type ContentCoding = 'gzip' | 'deflate' | 'br';

export interface Dialect {
  /** Absent optional fields sent as `null` (a .NET-style serialiser). */
  nulls: boolean;
  /** Stream counters start at 0 instead of 1 (responses and `continue-from` alike). */
  countersFrom0: boolean;
  /** The token response as `{"data": {"accessToken", "tokenType", "expiresIn"}}`. */
  tokenEnvelope: boolean;
  /**
   * The token response in another shape (wins over tokenEnvelope): the bare JWT in a JSON string
   * (`string`) or as `text/plain` whatever the request accepts (`plain`); `{"result": {"token",
   * "expiresIn": "<digits>"}}`; `{"jwt", "expiresIn"}`; `{"response": {"access_token", …}}`;
   * `{"payload": {"accessToken", "expiresIn"}}`.
   */
  tokenBody?: (typeof TOKEN_BODIES)[number];
  /** Staging results in one JSON container served as application/json instead of the request's stream format. */
  stagingContainer?: 'array' | 'results' | 'items' | 'data' | 'pretty';
  /**
   * Timestamps in another ISO 8601 form: basic (`20260102T030405Z`), comma decimals, an offset
   * `+0100` / `+01:00` / `+01`, an ordinal date (`2026-333T04:10:54.950Z`) or a week date
   * (`2026-W48-7T04:10:54.950Z`).
   */
  timestamps?: 'basic' | 'comma' | 'offset' | 'offset-colon' | 'offset-hour' | 'ordinal' | 'week';
  /** Counts results with only the TotalEntity table, or with zero rows for every other component and one more table. */
  counts?: 'totals-only' | 'more';
  /** Every response body in this content coding, whatever the request's Accept-Encoding says. */
  coding?: ContentCoding;
  /** The stream counter under another name than `sequenceNumber`. */
  counterName?: (typeof COUNTER_NAMES)[number];
  /** A started job's id as `{"referenceId": …}` instead of a JSON string. */
  jobIdObject?: boolean;
  /** The JWKS as an RFC 7517 set `{"keys": […]}` instead of an array. */
  jwksSet?: boolean;
  /** Errors outside authentication as `{"error": {"code", "message"}}`, as plain text, as `{"message"}` or as `{"error": "<message>"}` instead of problem+json. */
  errors?: 'envelope' | 'plain' | 'message' | 'error-text';
  /** The process-definitions list as the bare object when exactly one definition matches. */
  definitionsSingle?: boolean;
  /** A running job's 202 body as `{"status": "Running", "progress": …}`, or no body at all. */
  jobRunning?: 'status' | 'empty';
  /** Pages of offset-paged lists as `{"data": […], "total"}` instead of `{items, total, offset, limit}`. */
  pagesData?: boolean;
  /** Rejected migration requests (another migration active, a job in a wrong state, a final migration) with this status instead of 409. */
  rejections?: 422 | 400;
  /** A send without the required files with this status instead of 409 (the names stay in the detail). */
  missingFiles?: 422 | 400;
  /** An unknown or inactive process definition at process creation with this status instead of 422. */
  definitionRefused?: 400 | 404;
  /** A created message answered 200 instead of 201. */
  messageCreated200?: boolean;
  /** Sending a Sent message again answered 409 instead of 200 with the message. */
  resend409?: boolean;
  /** A canceled migration's activity spelled `Cancelled` (British) instead of `Canceled`. */
  activityCancelled?: boolean;
  /** An import job that ran to its end reports status `Succeeded` instead of `Completed`. */
  importSucceeded?: boolean;
  /**
   * DUPLICATE_IDENTITY at validation: without `duplicateOf` and `identity`, the fields only
   * (`unlinked`); or on every record of the group, the one staged first too, so none is imported
   * (`refuse-all`; decided by the validation job, src/service/migration/jobs.ts).
   */
  duplicates?: 'unlinked' | 'refuse-all';
  /** The functional group whose path serves the lodging and the process events alike (the other one serves none). */
  eventGroups?: 'process-orchestration' | 'lodging';
  /** An attachment upload answered 201 (Created) instead of 204. */
  upload201?: boolean;
  /** Delivery envelopes with more members than ours (`specversion`, `type`, `source`). */
  deliveryExtras?: boolean;
  /** Deliveries whose `data` has members no receiver knows (`schemaVersion`, `platform`). */
  deliveryExtraData?: boolean;
  /** Webhook registrations listed without their token (it is still at GET …/token/{id}). */
  registrationsWithoutToken?: boolean;
  /** Every webhook delivery POSTed twice (an acknowledgement the platform did not see), the same event id both times. */
  deliveriesTwice?: boolean;
  /**
   * Deliveries held back until a few are due (or the oldest has waited long enough), then sent
   * newest first, one after another (decided by the dispatcher, src/service/events/dispatcher.ts).
   */
  deliveriesShuffled?: boolean;
  /**
   * A counterparty sent without `countryCode` / `preferredCommunicationLanguage` shown with values
   * the platform filled in (its main address's country, else `NL`; `nl-NL`), where the service
   * stores and shows what it was sent (decided by the counterparty routes, render.ts).
   */
  countryDerived?: boolean;
  /** UUIDs written in upper case: in every body and stream (`upper`), or only in streamed counterparty records (`upper-stream`). */
  uuids?: 'upper' | 'upper-stream';
  /** Text of streamed and listed counterparties in decomposed Unicode (NFD). */
  textNfd?: boolean;
  /** Calendar dates of streamed and listed counterparties (`dateOfBirth`) in another ISO 8601 form: `19900505`, `1990-125`, `1990-W18-6`. */
  dates?: 'basic' | 'ordinal' | 'week';
  /** Money amounts of streamed and listed counterparties as strings with two decimals (`"2500.00"`). */
  amountsString?: boolean;
  /** Empty arrays left out of job results (`errors`, a counts table's rows) instead of `[]`. */
  emptyArraysOmitted?: boolean;
  /** Staging uploads over this many bytes refused 413 with an HTML page, as a proxy in front of the platform does. */
  uploadLimit?: number;
  /** Every GET and PUT answered first with this redirect to the same resource under another path. */
  redirects?: 307 | 308;
  /** A bodiless 204 labelled `Content-Encoding: gzip`. */
  emptyCoded?: boolean;
  /** Log entries' `action` in upper snake case (`IMPORTED_ENTITIES`) or kebab case (`imported-entities`); the `Actions` filter is read in that spelling only. */
  actions?: 'upper-snake' | 'kebab';
  /** Process status codes in upper snake case (`APPLICATION_RECEIVED`): definitions, the process record, status-changed events. */
  processStatusUpperSnake?: boolean;
  /** Webhook registration ids that are not UUIDs (`wh_` and 16 random bytes, base64url), the spec showing none. */
  registrationIdsOpaque?: boolean;
}

/** Shapes of the token response other than the OAuth 2.0 form (`token-body=…`). */
const TOKEN_BODIES = ['string', 'plain', 'result', 'jwt', 'response', 'payload'] as const;

/** Other names a platform may give the stream counter (the spec's name for it is garbled). */
const COUNTER_NAMES = ['sequence', 'seq', 'counter', 'position', 'streamPosition'] as const;

/**
 * Named sets of switches: every alternative at once, in ten combinations. `npm test` runs the
 * whole chain against the first four and a short chain (with `verify`) against `all-ninth`; the
 * others run in its soak form only (test/e2e/client-dialects.test.ts, SOAK_PRESETS).
 */
export const DIALECT_PRESETS: Record<string, string> = {
  all: 'nulls,counters-from-0,token-envelope,staging-container=items,timestamps=basic,counts=totals-only,gzip,counter-name=seq,job-id=object,jwks=set,errors=envelope,definitions=single,job-running=status,rejections=422,missing-files=422,definition-refused=400,message-created=200,resend=409,deliveries=twice,process-status=upper-snake,event-groups=process-orchestration',
  'all-second':
    'nulls,counters-from-0,token-envelope,staging-container=results,timestamps=comma,counts=more,deflate,counter-name=position,errors=plain,job-running=empty,pages=data,rejections=422,missing-files=400,definition-refused=404,resend=409,registrations=no-token,upload=201,envelope=extra,import-status=Succeeded,activity=Cancelled,actions=upper-snake,event-groups=lodging',
  'all-third':
    'staging-container=array,timestamps=offset,br,counter-name=streamPosition,job-id=object,jwks=set,definitions=single,rejections=400,message-created=200,deliveries=twice,upload=201,envelope=extra,duplicates=unlinked,country=derived,registration-ids=opaque,token-body=string,errors=error-text',
  'all-fourth':
    'token-body=result,staging-container=data,timestamps=offset-colon,errors=message,actions=kebab,counters-from-0,gzip,event-groups=process-orchestration',
  'all-fifth': 'token-body=plain,staging-container=pretty,timestamps=offset-hour,envelope=extra-data,deliveries=shuffled,nulls,br',
  'all-sixth': 'token-body=jwt,staging-container=array,timestamps=offset-hour,deliveries=shuffled,counter-name=sequence',
  'all-seventh': 'token-body=response,staging-container=pretty,envelope=extra-data,deflate',
  'all-eighth': 'token-body=payload,timestamps=offset-hour,envelope=extra-data,deliveries=shuffled,counter-name=counter',
  // The same data in other forms (issue 42), and a platform with a proxy's size limit and redirects.
  'all-ninth':
    'uuids=upper,text=nfd,dates=basic,amounts=string,empty-arrays=omitted,upload-limit=64k,redirects=307,timestamps=ordinal,empty-coding=gzip,country=derived',
  'all-tenth': 'uuids=upper-stream,text=nfd,dates=week,amounts=string,upload-limit=16k,redirects=308,timestamps=week,gzip',
};

/** Byte limits `upload-limit=` offers (a proxy's `client_max_body_size`). */
const UPLOAD_LIMITS: Record<string, number> = { '16k': 16 * 1024, '64k': 64 * 1024, '1m': 1024 * 1024 };

const VALUES = {
  'token-body': TOKEN_BODIES,
  'staging-container': ['array', 'results', 'items', 'data', 'pretty'],
  timestamps: ['basic', 'comma', 'offset', 'offset-colon', 'offset-hour', 'ordinal', 'week'],
  counts: ['totals-only', 'more'],
  'counter-name': COUNTER_NAMES,
  'job-id': ['object'],
  jwks: ['set'],
  errors: ['envelope', 'plain', 'message', 'error-text'],
  definitions: ['single'],
  'job-running': ['status', 'empty'],
  pages: ['data'],
  rejections: ['422', '400'],
  'missing-files': ['422', '400'],
  'definition-refused': ['400', '404'],
  'message-created': ['200'],
  resend: ['409'],
  deliveries: ['twice', 'shuffled'],
  registrations: ['no-token'],
  upload: ['201'],
  envelope: ['extra', 'extra-data'],
  duplicates: ['unlinked', 'refuse-all'],
  'event-groups': ['process-orchestration', 'lodging'],
  'import-status': ['Succeeded'],
  activity: ['Cancelled'],
  country: ['derived'],
  uuids: ['upper', 'upper-stream'],
  text: ['nfd'],
  dates: ['basic', 'ordinal', 'week'],
  amounts: ['string'],
  'empty-arrays': ['omitted'],
  'upload-limit': Object.keys(UPLOAD_LIMITS),
  redirects: ['307', '308'],
  'empty-coding': ['gzip'],
  actions: ['upper-snake', 'kebab'],
  'process-status': ['upper-snake'],
  'registration-ids': ['opaque'],
} as const;
const FLAGS = ['nulls', 'counters-from-0', 'token-envelope', 'gzip', 'deflate', 'br'] as const;
const NAMES = [...FLAGS, ...Object.keys(VALUES), ...Object.keys(DIALECT_PRESETS)];

/**
 * Every single switch as written on the command line (`nulls`, `timestamps=basic`, …), no
 * preset; only those of the given names when names are given.
 * @example dialectSwitches(['counts']) // ['counts=totals-only', 'counts=more']
 */
export function dialectSwitches(names?: readonly string[]): string[] {
  const all = [...FLAGS, ...Object.entries(VALUES).flatMap(([name, values]) => values.map((v) => `${name}=${v}`))];
  return names ? all.filter((s) => names.includes(s.split('=')[0]!)) : all;
}

/** The service's own choices: no switch on. */
export const NO_DIALECT: Dialect = { nulls: false, countersFrom0: false, tokenEnvelope: false };

/**
 * Reads a dialect spec: comma-separated switches and presets, later ones winning.
 * @example parseDialect('nulls,timestamps=basic').timestamps // 'basic'
 */
export function parseDialect(spec: string | undefined): Dialect {
  const d: Dialect = { ...NO_DIALECT };
  const refuse = (item: string, why: string): never => {
    throw new StagecoachError('CONFIG_INVALID', `dialect switch ${JSON.stringify(item)}: ${why}; the switches are ${NAMES.join(', ')}`, {
      field: 'dialect',
    });
  };
  const apply = (list: string) => {
    for (const raw of list.split(',')) {
      const item = raw.trim();
      if (!item || item === 'none') continue;
      const [name = '', value] = item.split('=', 2) as [string, string | undefined];
      if (name in DIALECT_PRESETS && value === undefined) {
        apply(DIALECT_PRESETS[name]!);
        continue;
      }
      if (name in VALUES) {
        const allowed = VALUES[name as keyof typeof VALUES] as readonly string[];
        if (value === undefined || !allowed.includes(value)) refuse(item, `expected ${name}=${allowed.join('|')}`);
        if (name === 'token-body') d.tokenBody = value as Dialect['tokenBody'];
        else if (name === 'staging-container') d.stagingContainer = value as Dialect['stagingContainer'];
        else if (name === 'timestamps') d.timestamps = value as Dialect['timestamps'];
        else if (name === 'counts') d.counts = value as Dialect['counts'];
        else if (name === 'counter-name') d.counterName = value as Dialect['counterName'];
        else if (name === 'job-id') d.jobIdObject = true;
        else if (name === 'jwks') d.jwksSet = true;
        else if (name === 'errors') d.errors = value as Dialect['errors'];
        else if (name === 'definitions') d.definitionsSingle = true;
        else if (name === 'pages') d.pagesData = true;
        else if (name === 'rejections') d.rejections = Number(value) as Dialect['rejections'];
        else if (name === 'missing-files') d.missingFiles = Number(value) as Dialect['missingFiles'];
        else if (name === 'definition-refused') d.definitionRefused = Number(value) as Dialect['definitionRefused'];
        else if (name === 'message-created') d.messageCreated200 = true;
        else if (name === 'resend') d.resend409 = true;
        else if (name === 'deliveries' && value === 'shuffled') d.deliveriesShuffled = true;
        else if (name === 'deliveries') d.deliveriesTwice = true;
        else if (name === 'registrations') d.registrationsWithoutToken = true;
        else if (name === 'upload') d.upload201 = true;
        else if (name === 'envelope' && value === 'extra-data') d.deliveryExtraData = true;
        else if (name === 'envelope') d.deliveryExtras = true;
        else if (name === 'duplicates') d.duplicates = value as Dialect['duplicates'];
        else if (name === 'event-groups') d.eventGroups = value as Dialect['eventGroups'];
        else if (name === 'import-status') d.importSucceeded = true;
        else if (name === 'activity') d.activityCancelled = true;
        else if (name === 'country') d.countryDerived = true;
        else if (name === 'uuids') d.uuids = value as Dialect['uuids'];
        else if (name === 'text') d.textNfd = true;
        else if (name === 'dates') d.dates = value as Dialect['dates'];
        else if (name === 'amounts') d.amountsString = true;
        else if (name === 'empty-arrays') d.emptyArraysOmitted = true;
        else if (name === 'upload-limit') d.uploadLimit = UPLOAD_LIMITS[value!];
        else if (name === 'redirects') d.redirects = Number(value) as Dialect['redirects'];
        else if (name === 'empty-coding') d.emptyCoded = true;
        else if (name === 'actions') d.actions = value as Dialect['actions'];
        else if (name === 'process-status') d.processStatusUpperSnake = true;
        else if (name === 'registration-ids') d.registrationIdsOpaque = true;
        else d.jobRunning = value as Dialect['jobRunning'];
        continue;
      }
      if (value !== undefined || !(FLAGS as readonly string[]).includes(name)) {
        const near = closestName(name, NAMES);
        refuse(item, `not a switch${near ? ` (did you mean ${near}?)` : ''}`);
      }
      if (name === 'nulls') d.nulls = true;
      else if (name === 'counters-from-0') d.countersFrom0 = true;
      else if (name === 'token-envelope') d.tokenEnvelope = true;
      else d.coding = name as ContentCoding;
    }
  };
  apply(spec ?? '');
  return d;
}

/** Whether any switch is on (off: the service installs no hook at all). */
export function dialectActive(d: Dialect): boolean {
  return (
    d.nulls ||
    d.countersFrom0 ||
    d.tokenEnvelope ||
    !!d.tokenBody ||
    !!d.stagingContainer ||
    !!d.timestamps ||
    !!d.counts ||
    !!d.coding ||
    !!d.counterName ||
    !!d.jobIdObject ||
    !!d.jwksSet ||
    !!d.errors ||
    !!d.definitionsSingle ||
    !!d.jobRunning ||
    !!d.pagesData ||
    !!d.rejections ||
    !!d.missingFiles ||
    !!d.definitionRefused ||
    !!d.messageCreated200 ||
    !!d.resend409 ||
    !!d.deliveriesTwice ||
    !!d.deliveriesShuffled ||
    !!d.deliveryExtraData ||
    !!d.registrationsWithoutToken ||
    !!d.upload201 ||
    !!d.deliveryExtras ||
    !!d.duplicates ||
    !!d.eventGroups ||
    !!d.importSucceeded ||
    !!d.activityCancelled ||
    !!d.countryDerived ||
    !!d.uuids ||
    !!d.textNfd ||
    !!d.dates ||
    !!d.amountsString ||
    !!d.emptyArraysOmitted ||
    !!d.uploadLimit ||
    !!d.redirects ||
    !!d.emptyCoded ||
    !!d.actions ||
    !!d.processStatusUpperSnake ||
    !!d.registrationIdsOpaque
  );
}
