/**
 * GET /counterparty-management/counterparties/stream: every live counterparty of the tenant,
 * in sequence order, as JSON Lines or JSON Text Sequences, from `continue-from` on.
 *
 * Memory stays flat whatever the count: rows are read from SQLite in keyset pages
 * (`seq >= ? ORDER BY seq LIMIT 1000`), each page is written once, and the next page is read
 * only when the socket has taken the previous one ('drain'). When the client goes away, or the
 * service shuts down, the loop stops at the next page.
 */
import type { FastifyInstance } from 'fastify';
import { encodeFrame, type StreamFormat } from '../../codec/index.js';
import { MEDIA } from '../../contract/media.js';
import type { ServiceContext } from '../context.js';
import { streamWriter } from '../faults/index.js';
import { readIntegerParam } from './query.js';
import { renderCounterparty } from './render.js';
import { parseDialect } from '../dialect/switches.js';
import { drained } from '../http/drained.js';

/** Rows read from SQLite per page (and written per socket write). */
export const STREAM_PAGE_ROWS = 1000;
/** Size of one socket write, in characters. */
const WRITE_CHUNK_CHARS = 64 * 1024;

/** What the stream routes of one database are doing; tests read it to see a stream stop. */
export interface StreamActivity {
  open: number;
  started: number;
  completed: number;
  /** Ended early: the client went away or the service shut down. */
  stopped: number;
  rowsRead: number;
}
const activityByFile = new Map<string, StreamActivity>();
/**
 * Counters of the streams served from one database file (`<dataDir>/service.db`).
 * @example streamActivity(join(service.dataDir, 'service.db')).open // 0 once every stream ended
 */
export function streamActivity(dbFile: string): StreamActivity {
  let a = activityByFile.get(dbFile);
  if (!a) activityByFile.set(dbFile, (a = { open: 0, started: 0, completed: 0, stopped: 0, rowsRead: 0 }));
  return a;
}

export async function streamRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const fillIn = parseDialect(ctx.config.dialect).countryDerived === true;
  const pageStmt = ctx.db.prepare<[string, number, number], { seq: number; data: string }>(
    'SELECT seq, data FROM live_counterparties WHERE broker_key = ? AND seq >= ? ORDER BY seq LIMIT ?',
  );
  const activity = streamActivity(ctx.db.name);
  // Shutdown must not wait for a client that reads a million rows slowly.
  const open = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const c of open) c.abort();
  });

  app.get(
    '/counterparty-management/counterparties/stream',
    { config: { area: 'counterparty-management', produces: [MEDIA.jsonl, MEDIA.jsonSeq], requireExplicitAccept: true } },
    async (request, reply) => {
      const from = readIntegerParam(request.query, 'continue-from', { min: 0, fallback: 1 });
      const mediaType = request.negotiated.mediaType;
      const format: StreamFormat = mediaType === MEDIA.jsonl ? 'jsonl' : 'json-seq';
      const { brokerKey } = request.principal;

      const stop = new AbortController();
      const res = reply.raw;
      const onClose = () => stop.abort();
      res.on('close', onClose);
      open.add(stop);
      activity.open++;
      activity.started++;
      reply.hijack();
      try {
        // Fault injection may cut this response mid-record (docs/fault-injection.md); off: res.write.
        const write = streamWriter(request, res);
        res.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          'content-type': mediaType,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        let next = from;
        for (;;) {
          if (stop.signal.aborted) break;
          const rows = pageStmt.all(brokerKey, next, STREAM_PAGE_ROWS);
          activity.rowsRead += rows.length;
          if (rows.length === 0) break;
          // Written in pieces below V8's large-object size (~128 KiB): big strings live in
          // old space until a full GC, and RSS would grow with the length of the stream.
          let chunk = '';
          let more = true;
          for (const row of rows) {
            chunk += encodeFrame(format, renderCounterparty(row.seq, row.data, fillIn));
            if (chunk.length >= WRITE_CHUNK_CHARS) {
              more = write(chunk);
              chunk = '';
            }
          }
          if (chunk) more = write(chunk);
          next = rows[rows.length - 1]!.seq + 1;
          if (rows.length < STREAM_PAGE_ROWS) break;
          if (!more) await drained(res, stop.signal);
          // Let other requests in between pages even when the client reads fast.
          else await new Promise<void>((r) => setImmediate(r));
        }
        if (stop.signal.aborted || res.destroyed) {
          activity.stopped++;
          res.destroy();
        } else {
          res.end();
          activity.completed++;
        }
      } catch (err) {
        request.log.error({ err }, 'counterparty stream failed');
        activity.stopped++;
        res.destroy(); // the client sees a cut stream and resumes with continue-from
      } finally {
        res.off('close', onClose);
        open.delete(stop);
        activity.open--;
      }
    },
  );
}
