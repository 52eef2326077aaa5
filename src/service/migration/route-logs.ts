/**
 * GET /migration-assistance/migrations/{id}/logs/stream: the migration log as JSON Lines or
 * JSON Text Sequences (Accept must name one), each entry with its `sequenceNumber`.
 *
 * Filters (all optional; lists comma-separated or repeated): EntityReferenceIds, Components,
 * Actions, LogLevels, After and Before (timestamps, exclusive), continue-from (the first
 * sequenceNumber to return). Entries are read from SQLite in keyset pages; the next page is
 * read only once the socket took the previous one, and the loop stops when the client leaves.
 */
import type { FastifyInstance } from 'fastify';
import { encodeFrame, type StreamFormat } from '../../codec/index.js';
import { LOG_LEVELS } from '../../contract/migration.js';
import { MEDIA } from '../../contract/media.js';
import { readIntegerParam } from '../counterparties/query.js';
import { streamWriter } from '../faults/index.js';
import { HttpProblem } from '../http/problem.js';
import type { MigrationParts } from './parts.js';
import { renderLogEntry, type LogRow } from './store-logs.js';
import { drained } from '../http/drained.js';

/** Entries read from SQLite per page. */
export const LOG_PAGE_ROWS = 500;
/** Bytes gathered before a socket write (then the route waits for 'drain' when asked to). */
const LOG_WRITE_BYTES = 256 * 1024;

interface LogFilter {
  entityIds?: string[];
  components?: string[];
  actions?: string[];
  levels?: string[];
  after?: string;
  before?: string;
}

export async function logStreamRoute(app: FastifyInstance, parts: MigrationParts): Promise<void> {
  const { ctx, migrations } = parts;
  const open = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const c of open) c.abort();
  });

  app.get<{ Params: { id: string } }>(
    '/migration-assistance/migrations/:id/logs/stream',
    { config: { area: 'migration-assistance', produces: [MEDIA.jsonl, MEDIA.jsonSeq], requireExplicitAccept: true } },
    async (request, reply) => {
      const migration = migrations.get(request.principal.brokerKey, request.params.id);
      const from = readIntegerParam(request.query, 'continue-from', { min: 0, fallback: 1 });
      const filter = readFilter(request.query as Record<string, unknown>);
      const { sql, args } = pageQuery(filter);
      const page = ctx.db.prepare<unknown[], LogRow>(sql);
      const format: StreamFormat = request.negotiated.mediaType === MEDIA.jsonl ? 'jsonl' : 'json-seq';

      const stop = new AbortController();
      const res = reply.raw;
      const onClose = () => stop.abort();
      res.on('close', onClose);
      open.add(stop);
      reply.hijack();
      const write = streamWriter(request, res);
      try {
        res.writeHead(200, {
          'content-type': request.negotiated.mediaType,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        let next = from;
        pages: for (;;) {
          if (stop.signal.aborted) break;
          const rows = page.all(migration.reference_id, next, ...args, LOG_PAGE_ROWS);
          if (rows.length === 0) break;
          next = rows[rows.length - 1]!.seq + 1;
          // Entries of a staging batch list thousands of ids: bound each write by bytes too.
          let chunk = '';
          for (let i = 0; i < rows.length; i++) {
            chunk += encodeFrame(format, renderLogEntry(rows[i]!));
            if (chunk.length < LOG_WRITE_BYTES && i < rows.length - 1) continue;
            const more = write(chunk);
            chunk = '';
            if (!more) await drained(res, stop.signal);
            if (stop.signal.aborted) break pages;
          }
          if (rows.length < LOG_PAGE_ROWS) break;
          await new Promise<void>((r) => setImmediate(r));
        }
        if (stop.signal.aborted) res.destroy();
        else res.end();
      } catch (err) {
        request.log.error({ err }, 'log stream failed');
        res.destroy();
      } finally {
        res.off('close', onClose);
        open.delete(stop);
      }
    },
  );
}

/** The page statement for a filter; its parameters are (migrationId, fromSeq, ...args, limit). */
function pageQuery(filter: LogFilter): { sql: string; args: unknown[] } {
  const where = ['migration_id = ?', 'seq >= ?'];
  const args: unknown[] = [];
  const anyOf = (column: string, values: string[] | undefined) => {
    if (!values) return;
    where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    args.push(...values);
  };
  anyOf('component', filter.components);
  anyOf('action', filter.actions);
  anyOf('log_level', filter.levels);
  if (filter.after) {
    where.push('timestamp > ?');
    args.push(filter.after);
  }
  if (filter.before) {
    where.push('timestamp < ?');
    args.push(filter.before);
  }
  if (filter.entityIds) {
    where.push(`EXISTS (SELECT 1 FROM json_each(entity_ids) WHERE value IN (${filter.entityIds.map(() => '?').join(', ')}))`);
    args.push(...filter.entityIds);
  }
  return {
    sql: `SELECT seq, component, entity_ids, action, timestamp, message, log_level FROM migration_logs WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`,
    args,
  };
}

function readFilter(query: Record<string, unknown>): LogFilter {
  const levels = readList(query, 'LogLevels')?.map((l) => l.toUpperCase());
  const unknown = levels?.filter((l) => !(LOG_LEVELS as readonly string[]).includes(l));
  if (unknown?.length) {
    throw new HttpProblem(
      400,
      'INVALID_QUERY_PARAMETER',
      `query parameter LogLevels: expected ${LOG_LEVELS.join(', ')}, got "${unknown.join(', ')}"`,
      {
        errors: [{ field: 'LogLevels', message: 'INVALID_QUERY_PARAMETER' }],
      },
    );
  }
  return {
    entityIds: readList(query, 'EntityReferenceIds'),
    components: readList(query, 'Components'),
    actions: readList(query, 'Actions'),
    levels,
    after: readTimestamp(query, 'After'),
    before: readTimestamp(query, 'Before'),
  };
}

/** A list parameter, comma-separated or repeated; the name is matched without regard to case. */
function readList(query: Record<string, unknown>, name: string): string[] | undefined {
  const raw = valueOf(query, name);
  if (raw === undefined) return undefined;
  const values = (Array.isArray(raw) ? raw : [raw])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return values.length ? values : undefined;
}

function readTimestamp(query: Record<string, unknown>, name: string): string | undefined {
  const raw = valueOf(query, name);
  if (raw === undefined) return undefined;
  const text = String(Array.isArray(raw) ? raw[0] : raw);
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(ms)) {
    throw new HttpProblem(
      400,
      'INVALID_QUERY_PARAMETER',
      `query parameter ${name}: expected an ISO 8601 timestamp such as 2025-01-31T12:00:00Z, got "${text}"`,
      {
        errors: [{ field: name, message: 'INVALID_QUERY_PARAMETER' }],
      },
    );
  }
  // Stored timestamps are toISOString() text, so equal forms compare correctly.
  return new Date(ms).toISOString();
}

function valueOf(query: Record<string, unknown>, name: string): unknown {
  if (query[name] !== undefined) return query[name];
  const key = Object.keys(query).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : query[key];
}
