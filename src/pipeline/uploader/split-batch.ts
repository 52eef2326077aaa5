/**
 * A size limit is a reason to split, not to stop: when the platform (or a proxy in front of it)
 * refuses an upload as too large (413), the uploader sends the batch again in two halves, each
 * half halved again while it is refused, down to one record; a record refused alone is too large
 * by itself and is refused with its row named (RECORD_TOO_LARGE), where every other record of
 * the batch is staged as usual. This module cuts a batch in halves and says when an upload failed
 * for its size.
 */
import type { StreamFormat } from '../../codec/index.js';
import { StagecoachError } from '../../contract/errors.js';
import { cutText } from '../../contract/cut.js';
import { PackedRecords, type RecordOutcome } from '../../ledger/index.js';
import type { Batch } from '../batcher/index.js';

/** Whether an upload failed because of its size (413, however the platform's body reads). */
export function refusedForSize(err: unknown): boolean {
  if (!(err instanceof StagecoachError)) return false;
  const status = (err as { status?: unknown }).status;
  return status === 413 || err.code === 'PAYLOAD_TOO_LARGE';
}

/**
 * The batch's two halves (by record count), each with its records and the bytes of their frames.
 * Frames are found by their first byte (json-seq: RS, which JSON text never holds raw) or their
 * last (JSON Lines: a line feed, which JSON text never holds raw).
 * @example const [a, b] = halves(batch, 'json-seq'); a.records.length + b.records.length === batch.records.length
 */
export function halves(batch: Batch, format: StreamFormat): [Batch, Batch] {
  const middle = Math.ceil(batch.records.length / 2);
  const all = [...Array(batch.records.length).keys()];
  return [part(batch, format, all.slice(0, middle)), part(batch, format, all.slice(middle))];
}

/**
 * The records of a batch at `indices` (in order), as a batch of their own: their frames, as
 * they were sent.
 * @example part(batch, 'json-seq', [3, 4]).records.length // 2
 */
export function part(batch: Batch, format: StreamFormat, indices: readonly number[]): Batch {
  const records = [...batch.records];
  const starts = frameStarts(batch.payload, format);
  if (starts.length !== records.length)
    throw new StagecoachError('INTERNAL_ERROR', `batch ${batch.seq}: ${starts.length} frames in the body for ${records.length} records`);
  const frame = (i: number) => batch.payload.subarray(starts[i]!, starts[i + 1] ?? batch.payload.length);
  // One run of neighbours (a half) is a view of the body; scattered records are copied together.
  const contiguous = indices.every((i, k) => k === 0 || i === indices[k - 1]! + 1);
  const payload =
    indices.length === 0
      ? Buffer.alloc(0)
      : contiguous
        ? batch.payload.subarray(starts[indices[0]!]!, starts[indices[indices.length - 1]! + 1] ?? batch.payload.length)
        : Buffer.concat(indices.map(frame));
  const b = { seq: batch.seq, records: PackedRecords.of(indices.map((i) => records[i]!)), payload, bytes: payload.length };
  return {
    ...b,
    get body() {
      return payload.toString('utf8');
    },
  };
}

/** Where each frame of a body begins. */
function frameStarts(payload: Buffer, format: StreamFormat): number[] {
  const starts: number[] = [];
  if (format === 'json-seq') {
    for (let i = payload.indexOf(0x1e); i >= 0; i = payload.indexOf(0x1e, i + 1)) starts.push(i);
    return starts;
  }
  for (let i = 0; i < payload.length; ) {
    starts.push(i);
    const end = payload.indexOf(0x0a, i);
    i = end < 0 ? payload.length : end + 1;
  }
  return starts;
}

/**
 * The outcome of a record the platform refused alone for its size: failed at staging with
 * RECORD_TOO_LARGE, naming its row and the platform's answer (one line, never an HTML page).
 */
export function tooLargeAlone(batch: Batch, err: unknown): RecordOutcome {
  const [record] = [...batch.records];
  const p = record!.provenance;
  // The platform's own words, one line (an HTML page is its status and title: client/errors.ts).
  const detail = (err as { problem?: { detail?: unknown } }).problem?.detail;
  const why = typeof detail === 'string' && detail ? detail : err instanceof Error ? err.message : String(err);
  return {
    legacyKey: record!.legacyKey,
    state: 'failed',
    errors: [
      {
        stage: 'staging',
        field: '',
        code: 'RECORD_TOO_LARGE',
        message: `${p.file}:${p.line}: record ${cutText(record!.legacyKey)} is ${batch.bytes} bytes as staged and the platform refused it alone for its size (${cutText(why, 200)}); every other record of its batch was sent in smaller uploads; shorten its largest field in the export or leave it out of the mapping`,
      },
    ],
  };
}
