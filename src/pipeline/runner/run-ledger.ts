/**
 * The ledger as one run's stages see it: the uploader's batch writes bound to the run, the
 * pipeline's scope and the migration, and rejected rows turned into ledger rows with their
 * provenance and every reason.
 */
import type { LedgerRejectInput, LedgerWriter, RecordError, Scope } from '../../ledger/index.js';
import type { FrontRow, RejectReason } from '../types.js';
import type { UploadLedger } from '../uploader/index.js';
import { CHILD_CODES } from '../definition/child-schema.js';

/**
 * Binds the uploader's writes to one run.
 * @example const uploader = new Uploader({ sink, ledger: uploadLedger(writer, run.id, scope, migrationNo), inFlight: 4 });
 */
export function uploadLedger(writer: LedgerWriter, runId: number, scope: Scope, migrationNo: number): UploadLedger {
  return {
    beginBatch: (batch) => writer.beginBatch(runId, scope, migrationNo, batch.records, batch.bytes),
    // Only the refusals travel: every other record of the batch is staged by one statement.
    finishBatch: (batchId, refused) => writer.finishBatch(scope, batchId, refused),
    failBatch: (batchId, error) => writer.failBatch(batchId, error),
  };
}

const SOURCE_CODES = new Set(['SOURCE_ROW_INVALID', 'SOURCE_READ_FAILED']);
const CHECK_CODES = new Set(['DUPLICATE_LEGACY_KEY', 'RELATION_TARGET_MISSING', ...CHILD_CODES]);

/** Which stage found a reject reason, from its code. */
function stageOf(code: string): RecordError['stage'] {
  if (SOURCE_CODES.has(code)) return 'source';
  if (CHECK_CODES.has(code)) return 'check';
  return 'mapping';
}

/**
 * A rejected row as the ledger keeps it. A duplicate of a legacy key is kept under its file:line
 * (the key belongs to the first occurrence, which may well be staged).
 */
export function rejectInput(row: Extract<FrontRow, { kind: 'rejected' }>): LedgerRejectInput {
  const duplicate = row.reasons.some((r) => r.code === 'DUPLICATE_LEGACY_KEY');
  const p = row.row.provenance;
  return {
    legacyKey: duplicate ? undefined : row.legacyKey,
    referenceId: duplicate ? undefined : row.referenceId,
    errors: row.reasons.map(toRecordError),
    provenance: { source: row.row.source, file: p.file, line: p.line, byteOffset: p.byteOffset, rowHash: p.hash },
  };
}

function toRecordError(r: RejectReason): RecordError {
  const e: RecordError = { stage: stageOf(r.code), field: r.field, code: r.code, message: r.message };
  if (r.value !== undefined) e.value = r.value;
  return e;
}
