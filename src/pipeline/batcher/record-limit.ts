/**
 * The platform's limit on one staged record, checked before upload: a record over it would be
 * refused by staging anyway (RECORD_TOO_LARGE), after travelling in a batch and holding a
 * slot of the upload window. The check costs nothing on the hot path: the record's frame
 * length is known once it is framed; only a record over the limit is looked into, to name its
 * largest field.
 */
import { cutText } from '../../contract/cut.js';
import type { LedgerRecordInput, LedgerRejectInput } from '../../ledger/index.js';

/**
 * Bytes of one staged record's frame the platform accepts: the embedded service's
 * `maxRecordBytes` default (1 MiB; `serve --max-record-bytes` changes the service's side).
 */
export const MAX_RECORD_BYTES = 1024 * 1024;

/** The longest text in the record (field path in mapping terms, and its length). */
function largestField(value: unknown, path = '', best = { field: '', chars: 0, text: '' }): typeof best {
  if (typeof value === 'string') {
    if (value.length > best.chars) return { field: path, chars: value.length, text: value };
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => (best = largestField(v, `${path}[${i}]`, best)));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) best = largestField(v, path ? `${path}.${k}` : k, best);
  }
  return best;
}

/** The record back from its frame (a parallel reader sends only the frame). */
function fromFrame(frame: string | Buffer): unknown {
  const text = (typeof frame === 'string' ? frame : frame.toString('utf8')).replace(/^\x1e/, '');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A record over the limit as the ledger's reject (RECORD_TOO_LARGE, naming file:line, key, the
 * largest field, the size and the limit), or undefined when it fits.
 * @example const reject = oversizeReject(item, row.record); if (reject) rejects.push(reject);
 */
export function oversizeReject(
  item: { record: LedgerRecordInput; frame: string | Buffer; bytes: number },
  record: unknown,
  limit: number = MAX_RECORD_BYTES,
): LedgerRejectInput | undefined {
  if (item.bytes <= limit) return undefined;
  const { record: r } = item;
  const largest = largestField(record ?? fromFrame(item.frame));
  const p = r.provenance;
  const field = largest.field ? `; its largest field ${largest.field} holds ${largest.chars} characters` : '';
  return {
    legacyKey: r.legacyKey,
    referenceId: r.referenceId,
    errors: [
      {
        stage: 'check',
        field: largest.field,
        code: 'RECORD_TOO_LARGE',
        message: `${p.file}:${p.line}: record ${cutText(r.legacyKey)} is ${item.bytes} bytes as staged, expected at most ${limit} (the platform's limit on one record)${field}; shorten that field in the export or leave it out of the mapping`,
        ...(largest.field ? { value: cutText(largest.text) } : {}),
      },
    ],
    provenance: p,
  };
}
