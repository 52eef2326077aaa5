/**
 * Resumable streams (counterparties, migration logs): an async iterator over JSON Lines or
 * json-seq that, when the connection drops or the stream is cut (a truncated last record
 * included, which is never yielded), asks again with `continue-from` = last counter + 1 and
 * skips anything at or below the last counter it handed out: no duplicates, no gaps. One record
 * at a time is held, so memory stays flat however long the stream is.
 */
import { decodeFrames } from '../codec/index.js';
import { readCounter } from '../contract/shared.js';
import { streamMediaType, type StreamFormat, type VersionedArea } from '../contract/media.js';
import { StagecoachError } from '../contract/errors.js';
import { ClientError } from './errors.js';
import { retryDelayMs, sleep } from './retry.js';
import type { QueryValue, Transport } from './transport.js';

export interface StreamOptions {
  /** Wire format asked for (default json-seq). */
  format?: StreamFormat;
  /** First counter wanted (`continue-from`); omitted = from the start. */
  continueFrom?: number;
  signal?: AbortSignal;
  /** Called before each resume, e.g. to log or count them. */
  onResume?: (info: StreamResumeInfo) => void;
}

export interface StreamResumeInfo {
  /** Counter the next request starts from. */
  continueFrom: number | undefined;
  /** Why the previous request ended early. */
  reason: string;
  /** Resumes in a row without a new record, this one included. */
  attempt: number;
}

export interface StreamSpec<T> extends StreamOptions {
  path: string;
  area: VersionedArea;
  query?: Record<string, QueryValue>;
  /** Validates one record (may throw a StagecoachError). */
  parse: (value: unknown, counter: number | undefined) => T;
}

export async function* resumableStream<T>(transport: Transport, spec: StreamSpec<T>): AsyncGenerator<T, void, undefined> {
  const format = spec.format ?? 'json-seq';
  const { maxResumes } = transport.options.stream;
  let last: number | undefined;
  let withoutProgress = 0;
  let sawRecordWithoutCounter = false;
  for (;;) {
    const continueFrom = last !== undefined ? last + 1 : spec.continueFrom;
    const res = await transport.open({
      method: 'GET',
      path: spec.path,
      query: { ...spec.query, 'continue-from': continueFrom },
      area: spec.area,
      accept: streamMediaType(format),
      signal: spec.signal,
    });
    let cut: string | undefined;
    let progressed = false;
    try {
      for await (const frame of decodeFrames(res.body, format)) {
        if (frame.kind === 'invalid') {
          if (frame.reason === 'truncated') {
            cut = `record cut short at byte ${frame.offset} (${frame.message})`;
            break;
          }
          throw new ClientError(
            'MALFORMED_RECORD',
            `record ${frame.index + 1} of ${spec.path} (byte ${frame.offset}) is not valid ${format}: ${frame.message}`,
            { method: 'GET', path: spec.path, status: res.status },
          );
        }
        const value = frame.value;
        const counter = value && typeof value === 'object' ? readCounter(value as Record<string, unknown>) : undefined;
        if (counter === undefined) sawRecordWithoutCounter = true;
        else if (last !== undefined && counter <= last) continue; // already handed out before a resume
        const parsed = spec.parse(value, counter);
        if (counter !== undefined) last = counter;
        progressed = true;
        withoutProgress = 0;
        yield parsed;
      }
    } catch (err) {
      if (spec.signal?.aborted)
        throw new ClientError('ABORTED', `GET ${spec.path} was aborted`, { method: 'GET', path: spec.path, cause: spec.signal.reason });
      if (err instanceof StagecoachError) throw err; // refused records, bad shapes: not a cut
      cut = `connection ended early: ${(err as Error).message}${(err as { code?: string }).code ? ` (${(err as { code?: string }).code})` : ''}`;
    } finally {
      // Consumer stopped early, or an error: never leave the socket half read.
      res.body.destroy();
    }
    if (cut === undefined) return;
    if (sawRecordWithoutCounter) {
      throw new ClientError(
        'STREAM_TRUNCATED',
        `GET ${spec.path} was cut (${cut}) and its records carry no sequence counter to resume from`,
        { method: 'GET', path: spec.path },
      );
    }
    if (!progressed) withoutProgress++;
    const attempt = progressed ? 1 : withoutProgress;
    if (withoutProgress > maxResumes) {
      throw new ClientError(
        'STREAM_TRUNCATED',
        `GET ${spec.path} was cut ${withoutProgress} times in a row without a new record (last: ${cut}); last counter received: ${last ?? 'none'}; resume later with continue-from ${last !== undefined ? last + 1 : (spec.continueFrom ?? 'omitted')}`,
        { method: 'GET', path: spec.path, attempts: withoutProgress },
      );
    }
    const next = last !== undefined ? last + 1 : spec.continueFrom;
    spec.onResume?.({ continueFrom: next, reason: cut, attempt });
    transport.options.logger?.info({ path: spec.path, continueFrom: next, reason: cut, attempt }, 'stream cut; resuming');
    if (!progressed) {
      await sleep(retryDelayMs(withoutProgress - 1, transport.options.retry), spec.signal).catch((reason) => {
        throw new ClientError('ABORTED', `GET ${spec.path} was aborted`, { method: 'GET', path: spec.path, cause: reason });
      });
    }
  }
}
