/**
 * Pure framing core for the two line-oriented stream formats of the spec:
 *  - JSON Text Sequences (RFC 7464): every record is RS (0x1E) + JSON text + LF;
 *  - JSON Lines: every record is JSON text + LF.
 *
 * The core knows nothing about streams: `write(chunk)` and `end()` call `emit` with one frame per
 * record, in order, synchronously. A bad record (malformed JSON, a record cut short, a record
 * over `maxRecordBytes`) becomes an `invalid` frame and the decoder goes on with the next one, so
 * one broken record never takes the valid ones down with it. The same core serves the service
 * (staging uploads) and the client (counterparty and log streams).
 */
import { isUtf8 } from 'node:buffer';

export type StreamFormat = 'jsonl' | 'json-seq';

export type InvalidReason = 'malformed' | 'truncated' | 'too-large';

export type Frame =
  | { kind: 'record'; value: unknown; index: number; offset: number; bytes: number }
  | { kind: 'invalid'; reason: InvalidReason; index: number; offset: number; bytes: number; text: string; message: string };

export interface DecoderOptions {
  /** Largest record accepted, in bytes; bigger ones become `too-large` frames (default 8 MiB). */
  maxRecordBytes?: number;
}

export interface FrameDecoder {
  write(chunk: Uint8Array): void;
  end(): void;
  /** Total bytes written so far. */
  readonly bytesRead: number;
}

const RS = 0x1e;
const LF = 0x0a;
const SNIPPET = 120;
// Shared: `pending` is replaced, never written to, and a new empty Buffer per record shows in profiles.
const EMPTY = Buffer.alloc(0);

/**
 * @example
 *   const frames: Frame[] = [];
 *   const d = createFrameDecoder('json-seq', (f) => frames.push(f));
 *   d.write(Buffer.from('\x1e{"a":1}\n\x1e{"a":')); d.end();
 *   // frames: [{ kind: 'record', value: { a: 1 }, … }, { kind: 'invalid', reason: 'truncated', … }]
 */
export function createFrameDecoder(format: StreamFormat, emit: (frame: Frame) => void, options: DecoderOptions = {}): FrameDecoder {
  const maxRecordBytes = options.maxRecordBytes ?? 8 * 1024 * 1024;
  const separator = format === 'json-seq' ? RS : LF;
  let pending: Buffer = EMPTY; // bytes of the current, unfinished record
  let pendingOffset = 0; // stream offset of pending[0]
  let skippingOversize = false; // inside a record already reported as too large
  let oversizeStart = 0;
  // The first bytes of a record skipped as too large: they name it (its referenceId comes first).
  let oversizeHead = '';
  let index = 0;
  let bytesRead = 0;

  const invalid = (reason: InvalidReason, offset: number, bytes: number, text: string, message: string) => {
    emit({ kind: 'invalid', reason, index: index++, offset, bytes, text: text.slice(0, SNIPPET), message });
  };

  /** One complete piece between separators (json-seq: after RS; jsonl: before LF). */
  const piece = (buf: Buffer, offset: number, atEnd: boolean) => {
    // The same bound whether the record spanned chunks (caught while buffering) or arrived whole.
    if (buf.length > maxRecordBytes) {
      return invalid(
        'too-large',
        offset,
        buf.length,
        buf.subarray(0, SNIPPET).toString('utf8'),
        `record larger than ${maxRecordBytes} bytes`,
      );
    }
    // JSON text is UTF-8 (RFC 8259, RFC 7464); decoding other bytes would turn them into U+FFFD
    // and store "M�ller" as if it had been sent.
    if (!isUtf8(buf)) return invalid('malformed', offset, buf.length, buf.subarray(0, SNIPPET).toString('utf8'), 'not valid UTF-8');
    if (format === 'json-seq') {
      // RFC 7464: a record is RS, JSON text, LF. Text not ending in LF was cut short.
      if (buf.length === 0) return; // two RS in a row: an empty record is ignored by parsers
      const endsWithLf = buf[buf.length - 1] === LF;
      const text = buf.toString('utf8');
      if (!endsWithLf) {
        // Possibly truncated: RFC 7464 says parse it anyway if it is a complete JSON text.
        const value = tryParse(text);
        if (value !== NOT_JSON && atEnd && isStructured(value)) return record(value, offset, buf.length);
        return invalid(
          'truncated',
          offset,
          buf.length,
          text,
          atEnd ? 'record cut short at end of stream: no final LF' : 'record cut short: next RS before its LF',
        );
      }
      return parseRecord(text, offset, buf.length);
    }
    const text = stripCr(buf.toString('utf8'));
    if (text.trim() === '') return; // blank lines carry no record
    if (atEnd) {
      const value = tryParse(text);
      if (value === NOT_JSON)
        return invalid('truncated', offset, buf.length, text, 'last line is incomplete JSON and has no final newline');
      return record(value, offset, buf.length);
    }
    return parseRecord(text, offset, buf.length);
  };

  const parseRecord = (text: string, offset: number, bytes: number) => {
    const value = tryParse(text);
    if (value === NOT_JSON) return invalid('malformed', offset, bytes, text, describeJsonError(text));
    record(value, offset, bytes);
  };
  const record = (value: unknown, offset: number, bytes: number) => {
    emit({ kind: 'record', value, index: index++, offset, bytes });
  };

  function write(chunk: Uint8Array) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const chunkOffset = bytesRead;
    bytesRead += buf.length;
    let start = 0;
    for (;;) {
      const at = buf.indexOf(separator, start);
      if (at < 0) break;
      if (skippingOversize) {
        skippingOversize = false;
        invalid('too-large', oversizeStart, chunkOffset + at - oversizeStart, oversizeHead, `record larger than ${maxRecordBytes} bytes`);
        pending = EMPTY;
      } else if (format === 'json-seq') {
        // everything before this RS finishes the previous record
        if (pending.length > 0 || at > start) {
          const whole = pending.length ? Buffer.concat([pending, buf.subarray(start, at)]) : buf.subarray(start, at);
          if (pendingStarted) piece(whole, pendingOffset, false);
          else if (whole.toString('utf8').trim() !== '')
            invalid('malformed', pendingOffset, whole.length, whole.toString('utf8'), 'text before the first RS (0x1E) is not a record');
        }
        pending = EMPTY;
      } else {
        const whole = pending.length ? Buffer.concat([pending, buf.subarray(start, at)]) : buf.subarray(start, at);
        piece(whole, pendingOffset, false);
        pending = EMPTY;
      }
      // the next record starts after the separator
      pendingStarted = format === 'json-seq';
      pendingOffset = chunkOffset + at + (format === 'json-seq' ? 1 : 1);
      start = at + 1;
    }
    const rest = buf.subarray(start);
    if (skippingOversize) return;
    if (pending.length + rest.length > maxRecordBytes) {
      skippingOversize = true;
      oversizeStart = pendingOffset;
      oversizeHead = Buffer.concat([pending, rest.subarray(0, SNIPPET)])
        .subarray(0, SNIPPET)
        .toString('utf8');
      pending = EMPTY;
      return;
    }
    if (rest.length) pending = pending.length ? Buffer.concat([pending, rest]) : Buffer.from(rest);
  }
  // json-seq: whether `pending` follows an RS (text before the first RS is not a record)
  let pendingStarted = false;

  function end() {
    if (skippingOversize) {
      invalid('too-large', oversizeStart, bytesRead - oversizeStart, oversizeHead, `record larger than ${maxRecordBytes} bytes`);
      skippingOversize = false;
    } else if (format === 'json-seq') {
      if (pendingStarted) piece(pending, pendingOffset, true);
      else if (pending.toString('utf8').trim() !== '')
        invalid('malformed', pendingOffset, pending.length, pending.toString('utf8'), 'text without a leading RS (0x1E) is not a record');
    } else if (pending.length) {
      piece(pending, pendingOffset, true);
    }
    pending = EMPTY;
    pendingStarted = false;
  }

  return {
    write,
    end,
    get bytesRead() {
      return bytesRead;
    },
  };
}

const NOT_JSON = Symbol('not-json');
function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}
function isStructured(v: unknown): boolean {
  return typeof v === 'object' && v !== null;
}
function stripCr(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}
function describeJsonError(text: string): string {
  try {
    JSON.parse(text);
    return 'malformed JSON';
  } catch (err) {
    return `malformed JSON: ${(err as Error).message}`;
  }
}

/** One record in the wire format. */
export function encodeFrame(format: StreamFormat, value: unknown): string {
  const json = JSON.stringify(value);
  return format === 'json-seq' ? `\x1e${json}\n` : `${json}\n`;
}
