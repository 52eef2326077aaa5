/**
 * Follows a migration's log stream, keeping the position in the ledger: after each entry is
 * handed on, the ledger's log cursor moves to the next sequence number (src/ledger/log-cursor.ts),
 * so a disconnect, Ctrl-C or crash resumes with `continue-from` exactly after the last entry
 * handed on: nothing repeated, nothing missed. The entries themselves are not kept (the log is
 * the platform's, and can be read from it again).
 * The client's iterator already resumes after a dropped connection; this module adds the
 * persistence and, with `follow`, reopens the stream when it ends to wait for new entries.
 */
import type { Ledger } from '../ledger/index.js';
import type { LogEntry, LogQuery } from '../contract/migration.js';
import { readCounter } from '../contract/shared.js';
import type { StreamFormat } from '../contract/media.js';

/** The part of the typed client this module uses (`client.migrations.logs`). */
export interface LogsApi {
  logs(
    migrationId: string,
    query: LogQuery,
    options: { format?: StreamFormat; continueFrom?: number; signal?: AbortSignal },
  ): AsyncIterable<LogEntry>;
}

/** Where the log's position is kept: the ledger's log cursor. */
export type LogCursor = Pick<Ledger, 'logCursor' | 'setLogCursor'>;

export interface FollowOptions {
  /** Keep waiting for new entries after the stream ends, until `signal` aborts. */
  follow?: boolean;
  signal?: AbortSignal;
  format?: StreamFormat;
  /**
   * Filters of the spec's log query. A filtered read neither uses nor moves the stored cursor
   * (entries it skips would otherwise be skipped for good); it starts at `continueFrom`.
   */
  query?: Omit<LogQuery, 'continue-from'>;
  /** Start here instead of at the stored cursor. */
  continueFrom?: number;
  /**
   * Start at the first entry the platform holds, whatever its number (continue-from is left out:
   * a platform may count from 0 or from 1); like `continueFrom`, the stored cursor is not used.
   */
  fromStart?: boolean;
  /** Wait between two reads when following and the stream ended; doubles up to 8× while idle. */
  idleMs?: number;
  onEntry?: (entry: LogEntry & { sequenceNumber: number }) => void;
}

const filtered = (q: FollowOptions['query']) => !!q && Object.values(q).some((v) => v !== undefined && (!Array.isArray(v) || v.length > 0));

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Reads the migration's log from the stored cursor, handing each entry to `onEntry` and moving the cursor past it.
 * @example
 *   const ac = new AbortController(); process.once('SIGINT', () => ac.abort());
 *   await followLogs(client.migrations, ledger, migrationId, { follow: true, signal: ac.signal, onEntry: print });
 */
export async function followLogs(
  api: LogsApi,
  cursor: LogCursor,
  migrationId: string,
  options: FollowOptions = {},
): Promise<{ received: number; continueFrom: number | undefined }> {
  const useCursor = !filtered(options.query) && options.continueFrom === undefined && !options.fromStart;
  const moveCursor = useCursor ? (n: number) => cursor.setLogCursor(migrationId, n) : undefined;
  // undefined: from the start. The next position is always the last number received + 1, never
  // an assumed first number (a platform counting from 0 would lose its first entry to a 1).
  let next: number | undefined = options.fromStart
    ? undefined
    : (options.continueFrom ?? (useCursor ? cursor.logCursor(migrationId) : undefined));
  let received = 0;
  let idle = options.idleMs ?? 1000;
  for (;;) {
    let got = 0;
    try {
      for await (const entry of api.logs(
        migrationId,
        { ...options.query },
        { format: options.format, ...(next !== undefined ? { continueFrom: next } : {}), signal: options.signal },
      )) {
        const seq = readCounter(entry as Record<string, unknown>);
        // An entry without a counter cannot be resumed from; an old one was already stored.
        if (seq === undefined || (next !== undefined && seq < next)) continue;
        options.onEntry?.({ ...entry, sequenceNumber: seq });
        next = seq + 1;
        moveCursor?.(next);
        got++;
        received++;
      }
    } catch (err) {
      if (options.signal?.aborted) break;
      throw err;
    }
    if (!options.follow || options.signal?.aborted) break;
    idle = got > 0 ? (options.idleMs ?? 1000) : Math.min(idle * 2, (options.idleMs ?? 1000) * 8);
    await sleep(idle, options.signal);
    if (options.signal?.aborted) break;
  }
  return { received, continueFrom: next };
}
