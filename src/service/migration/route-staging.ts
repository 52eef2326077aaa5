/**
 * PUT /counterparty-management/migrations/{id}/staging/counterparties: the staging upload.
 *
 * The body (application/json-seq or application/jsonl) is read as a stream of frames, never
 * buffered whole; every record gets one staging result, in input order. Valid records are
 * written in transactions of at most STAGING_BATCH_RECORDS records and STAGING_BATCH_BYTES of
 * request body, and a batch's results are sent only once it has committed, so a result
 * "isSuccessful: true" always means the record is stored.
 * The response is sent while the body is still arriving: in the request's format, or as a
 * JSON array when Accept names application/json.
 *
 * Limits: `maxStagingBytes` per request (counted here: a raw-stream parser bypasses fastify's
 * bodyLimit) and `maxRecordBytes` per record. Overflow before the first batch committed is a
 * 413 problem and nothing of the request is staged; after that, the committed records keep
 * their results and one last result with message PAYLOAD_TOO_LARGE ends the response.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { createFrameDecoder, encodeFrame, type Frame, type StreamFormat } from '../../codec/index.js';
import { checkStagedCounterparty, type StagingResult } from '../../contract/migration.js';
import { MEDIA, parseAccept, streamMediaType } from '../../contract/media.js';
import { identityKey } from '../counterparties/store.js';
import { HttpProblem } from '../http/problem.js';
import { COUNTERPARTIES, requireStagingOpen, type MigrationParts } from './parts.js';
import type { StagingRow } from './store-staging.js';

/** Records per staging transaction at most: large enough for fast inserts, small enough to stream results. */
export const STAGING_BATCH_RECORDS = 2000;

/**
 * Bytes of request body per staging transaction at most (the batch ends at the record that
 * reaches it). A record waits in memory, parsed and serialised, until its batch commits; a batch
 * that waits through two young-generation collections is moved to V8's old generation, which
 * then fills with records already stored: batches of 2,000 records (about 1.3 MB, four uploads
 * at once) took the old generation to 143 MB between collections and the service to 282 MB at
 * 1,000,000 persons; batches of this size (about 190 of those persons), at most 48 MB and 206–215
 * MB from 1,000,000 to 10,000,000 persons, for the same CPU (docs/performance.md, "What grows
 * with the export").
 */
export const STAGING_BATCH_BYTES = 128 * 1024;

const INVALID_FRAME_CODE = { malformed: 'MALFORMED_RECORD', truncated: 'TRUNCATED_RECORD', 'too-large': 'RECORD_TOO_LARGE' } as const;

class StagingOverflow extends Error {}

export async function stagingUploadRoute(app: FastifyInstance, parts: MigrationParts): Promise<void> {
  const { ctx, migrations, staging } = parts;
  const maxBytes = ctx.config.maxStagingBytes;
  const maxRecordBytes = ctx.config.maxRecordBytes;

  /** Commits one batch of valid records and their log entries; throws when staging closed meanwhile. */
  const commit = ctx.db.transaction((migrationId: string, rows: StagingRow[], rejected: StagingResult[]) => {
    const row = migrations.byId(migrationId)!;
    requireStagingOpen(parts, row, 'stage');
    if (rows.length > 0) {
      const now = new Date().toISOString();
      // Counted as they go (a COUNT(*) per batch costs more than the inserts of a big upload).
      const added = staging.upsertAll(migrationId, rows, now);
      migrations.setStagedCount(migrationId, COUNTERPARTIES, migrations.component(migrationId, COUNTERPARTIES)!.staged + added);
      migrations.setStagingStatus(migrationId, COUNTERPARTIES, 'InProgress');
      migrations.bumpGeneration(migrationId);
      parts.log(migrationId, {
        component: COUNTERPARTIES,
        action: 'StagedEntities',
        logLevel: 'INFO',
        entityReferenceIds: rows.map((r) => r.referenceId),
        message: `staged ${rows.length} counterpart${rows.length === 1 ? 'y' : 'ies'}`,
      });
    }
    for (const r of rejected) {
      parts.log(migrationId, {
        component: COUNTERPARTIES,
        action: 'RejectedEntities',
        logLevel: 'WARN',
        entityReferenceIds: r.referenceId ? [r.referenceId] : [],
        message: `record ${r.referenceId || '(no referenceId)'} not staged: ${r.errors.map((e) => `${e.field || '(record)'} ${e.message}`).join(', ')}`,
      });
    }
  });

  app.put<{ Params: { id: string } }>(
    '/counterparty-management/migrations/:id/staging/counterparties',
    { config: { area: 'counterparty-management', produces: [MEDIA.jsonSeq, MEDIA.jsonl, MEDIA.json] } },
    async (request, reply) => {
      const migration = migrations.get(request.principal.brokerKey, request.params.id);
      requireStagingOpen(parts, migration, 'stage');
      const format = requestFormat(request);
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes, `Content-Length ${declared}`);

      const out = responseShape(request, format);
      const res = reply.raw;
      let started = false;
      let wroteAny = false;
      let results: string[] = [];
      let valid: StagingRow[] = [];
      let rejected: StagingResult[] = [];

      const push = (result: StagingResult) => {
        results.push(out === 'json' ? JSON.stringify(result) : encodeFrame(out, result));
        if (!result.isSuccessful) rejected.push(result);
      };
      // The common result, written without building and serialising an object (referenceId is
      // a checked UUID: nothing to escape). Same bytes as push({referenceId, isSuccessful: true, errors: []}).
      const [okStart, okEnd] =
        out === 'json'
          ? ['{"referenceId":"', '","isSuccessful":true,"errors":[]}']
          : [out === 'json-seq' ? '\x1e{"referenceId":"' : '{"referenceId":"', '","isSuccessful":true,"errors":[]}\n'];
      const pushSuccess = (referenceId: string) => results.push(okStart + referenceId + okEnd);
      /** The pending results as response text (JSON arrays need commas between items). */
      const take = (): string => {
        if (results.length === 0) return '';
        const text = out === 'json' ? (wroteAny ? ',' : '') + results.join(',') : results.join('');
        wroteAny = true;
        results = [];
        return text;
      };
      /** Commits what is pending and sends its results (starting the response on first use). */
      const flush = () => {
        commit(migration.reference_id, valid, rejected);
        valid = [];
        rejected = [];
        if (!started) {
          reply.hijack();
          res.writeHead(200, { 'content-type': out === 'json' ? MEDIA.json : streamMediaType(out), 'cache-control': 'no-store' });
          if (out === 'json') res.write('[');
          started = true;
        }
        // No wait for 'drain' while the body is still coming: a client that reads the response
        // only after sending would deadlock. Results are a few dozen bytes per record.
        const text = take();
        if (text) res.write(text);
      };
      /** Ends the response with a last result saying why the rest of the body was not read. */
      const endWith = (code: string) => {
        results = [];
        push({ referenceId: '', isSuccessful: false, errors: [{ field: '', message: code }] });
        res.end(take() + (out === 'json' ? ']' : ''));
      };

      // An empty body may arrive unparsed.
      const body = (request.body ?? Readable.from([])) as Readable;
      // Not destroyed when we stop reading early: a 413 must still reach the client.
      const source = body.iterator({ destroyOnReturn: false });
      // The frames of one chunk, staged once the chunk is within the byte limit. A plain loop, not
      // an async iterator of frames: that costs a promise per record (about 1 µs).
      let frames: Frame[] = [];
      const decoder = createFrameDecoder(format, (f) => frames.push(f), { maxRecordBytes });
      let pending = 0;
      let pendingBytes = 0;
      const stage = (batch: Frame[]) => {
        for (const frame of batch) {
          const staged = stageFrame(frame, maxRecordBytes);
          if ('data' in staged) {
            pushSuccess(staged.referenceId);
            valid.push(staged);
          } else push(staged);
          pendingBytes += frame.bytes;
          if (++pending >= STAGING_BATCH_RECORDS || pendingBytes >= STAGING_BATCH_BYTES) {
            flush();
            pending = 0;
            pendingBytes = 0;
          }
        }
      };
      try {
        for await (const chunk of source) {
          decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
          if (decoder.bytesRead > maxBytes) throw new StagingOverflow();
          const batch = frames;
          frames = [];
          stage(batch);
        }
        decoder.end();
        stage(frames);
        flush();
        res.end(out === 'json' ? ']' : '');
      } catch (err) {
        if (err instanceof StagingOverflow) {
          if (!started) throw tooLarge(maxBytes, 'the body');
          flush();
          endWith('PAYLOAD_TOO_LARGE');
          discardRest(body, res, maxBytes);
          return;
        }
        if (err instanceof HttpProblem) {
          if (!started) throw err;
          // Staging closed under a running upload (canceled): the uncommitted batch has no results.
          endWith(err.code);
          discardRest(body, res, maxBytes);
          return;
        }
        if (!started && !request.raw.destroyed && !request.raw.aborted) throw err;
        // The client went away (or the service failed mid-response): uncommitted records have
        // no result, and the client sends them again.
        request.log.warn({ err, migration: migration.reference_id }, 'staging upload ended early');
        if (!started) reply.hijack();
        res.destroy();
      }
    },
  );
}

/**
 * Reads and drops what is left of a body we stopped staging, so the client receives the whole
 * response (closing a socket with unread data sends a reset, which can destroy the response on
 * its way). A client that keeps sending more than `limit` further bytes is cut off.
 */
function discardRest(body: Readable, res: ServerResponse, limit: number): void {
  if (body.readableEnded) return;
  let dropped = 0;
  body.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limit) res.socket?.destroy();
  });
  body.on('error', () => undefined);
  body.resume();
}

/** One frame → the row to store (serialised once, here) when it is valid, else its failed staging result. */
function stageFrame(frame: Frame, maxRecordBytes: number): StagingRow | StagingResult {
  if (frame.kind === 'invalid') {
    return {
      referenceId: recoverReferenceId(frame.text),
      isSuccessful: false,
      errors: [{ field: '', message: INVALID_FRAME_CODE[frame.reason] }],
    };
  }
  const value = frame.value as { referenceId?: unknown } | null;
  const referenceId = typeof value === 'object' && value !== null && typeof value.referenceId === 'string' ? value.referenceId : '';
  // The decoder flags records that span chunks; a big record inside one chunk is caught here.
  if (frame.bytes > maxRecordBytes) return { referenceId, isSuccessful: false, errors: [{ field: '', message: 'RECORD_TOO_LARGE' }] };
  const checked = checkStagedCounterparty(frame.value);
  if (!checked.ok) return { referenceId, isSuccessful: false, errors: checked.errors };
  const r = checked.record;
  return { referenceId: r.referenceId, type: r.type, identity: identityKey(r), data: JSON.stringify(r) };
}

/** The referenceId of a broken record, when its text still shows it. */
function recoverReferenceId(text: string): string {
  return /"referenceId"\s*:\s*"([^"\\]{1,100})"/.exec(text)?.[1] ?? '';
}

/** The upload's format; a body-less request without Content-Type reaches here too (415). */
function requestFormat(request: FastifyRequest): StreamFormat {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === MEDIA.jsonl) return 'jsonl';
  if (type === MEDIA.jsonSeq) return 'json-seq';
  throw new HttpProblem(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `content type ${type || '(none)'} is not accepted here; send ${MEDIA.jsonSeq} or ${MEDIA.jsonl}`,
  );
}

/** The request's own format unless Accept names a produced type explicitly. */
function responseShape(request: FastifyRequest, format: StreamFormat): StreamFormat | 'json' {
  const chosen = request.negotiated.mediaType;
  const explicit = parseAccept(request.headers.accept).some((r) => r.q > 0 && r.type === chosen);
  if (!explicit) return format;
  return chosen === MEDIA.json ? 'json' : chosen === MEDIA.jsonl ? 'jsonl' : 'json-seq';
}

function tooLarge(maxBytes: number, what: string): HttpProblem {
  return new HttpProblem(
    413,
    'PAYLOAD_TOO_LARGE',
    `staging upload too large: ${what} exceeds the limit of ${maxBytes} bytes per request; send the records in several requests`,
    { headers: { connection: 'close' } },
  );
}
