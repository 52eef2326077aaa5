/**
 * A run's writes of its records and batches: the hot path. Every state change is one SQLite
 * transaction, grouped per batch for speed: a batch's records go to `in_flight` together before
 * the upload, and to `staged`/`failed` together when the results are in. So a crash at any
 * instant leaves each record in exactly one state from which the next run continues: `in_flight`
 * records are sent again, `staged` ones with the same content are skipped.
 */
import { assertWritable, type Db } from './schema.js';
import type { RecordList } from './packed-records.js';
import { errorsJson } from './record-errors.js';
import { keylessKey, once, toBatch, type BatchDbRow } from './rows.js';
import type { Scope } from './scopes.js';
import type { BatchRow, LedgerRecordInput, LedgerRejectInput, RecordOutcome } from './types.js';

/**
 * What a write of a record does to the correction it carries (docs/reconciliation.md, "A record's
 * life through corrections"). `origin_*` name the export row a correction replaced: a row read
 * from that export file again is a newer version of the record's own row, so the correction is
 * over; a row read from a corrections file keeps it. `former_key` is read by the story trigger
 * on this very write and is not needed after it.
 */
const ORIGIN_ON_WRITE = `origin_hash = CASE WHEN excluded.file = records.origin_file THEN NULL ELSE records.origin_hash END,
      origin_line = CASE WHEN excluded.file = records.origin_file THEN NULL ELSE records.origin_line END,
      origin_file = CASE WHEN excluded.file = records.origin_file THEN NULL ELSE records.origin_file END, former_key = NULL`;

/** Records per multi-row insert of a batch (16 parameters each; SQLite allows 32766). */
const SEND_ROWS = 100;

/** Inserts `rows` records (or updates them in place, keeping their attempts count going). */
function sendRecordsSql(rows: number): string {
  return `INSERT INTO records (scope, keyed, legacy_key, reference_id, entity_type, state, content_hash, migration, last_batch, last_run, attempts, errors, source, file, line, byte_offset, row_hash, updated_at)
    VALUES ${Array<string>(rows).fill('(?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)').join(', ')}
    ON CONFLICT (scope, keyed, legacy_key) DO UPDATE SET reference_id = excluded.reference_id, entity_type = excluded.entity_type, state = excluded.state,
      content_hash = excluded.content_hash, migration = excluded.migration, last_batch = excluded.last_batch, last_run = excluded.last_run,
      attempts = records.attempts + excluded.attempts, errors = NULL, source = excluded.source, file = excluded.file, line = excluded.line,
      byte_offset = excluded.byte_offset, row_hash = excluded.row_hash, updated_at = excluded.updated_at, ${ORIGIN_ON_WRITE}`;
}

/** The statements of the hot path, prepared together on the first write (never on a read-only ledger). */
function prepareWrites(db: Db) {
  const p = <T = unknown>(sql: string) => db.prepare<unknown[], T>(sql);
  return {
    settled: p<number>(
      `SELECT 1 FROM records WHERE scope = ? AND keyed = 1 AND legacy_key = ? AND content_hash = ? AND migration = ? AND state IN ('staged', 'invalid', 'imported')`,
    ).pluck(),
    // Positional parameters: binding an object by name costs about a microsecond a row more.
    sendRecord: p(sendRecordsSql(1)),
    // The same for SEND_ROWS records in one statement (rows apply in order, as one by one).
    sendRecords: p(sendRecordsSql(SEND_ROWS)),
    anySettled: p<number>(
      `SELECT 1 FROM records WHERE scope = ? AND migration = ? AND state IN ('staged', 'invalid', 'imported') LIMIT 1`,
    ).pluck(),
    rejectRecord: p(
      `INSERT INTO records (scope, keyed, legacy_key, reference_id, entity_type, state, content_hash, migration, last_batch, last_run, attempts, errors, source, file, line, byte_offset, row_hash, updated_at)
       VALUES (@scope, @keyed, @legacyKey, @referenceId, NULL, 'rejected', NULL, NULL, NULL, @run, 0, @errors, @source, @file, @line, @byteOffset, @rowHash, @now)
       ON CONFLICT (scope, keyed, legacy_key) DO UPDATE SET reference_id = excluded.reference_id, state = 'rejected', content_hash = NULL, migration = NULL,
         last_run = excluded.last_run, errors = excluded.errors, source = excluded.source, file = excluded.file, line = excluded.line,
         byte_offset = excluded.byte_offset, row_hash = excluded.row_hash, updated_at = excluded.updated_at, ${ORIGIN_ON_WRITE}`,
    ),
    outcome: p(
      `UPDATE records SET state = ?, errors = ?, updated_at = ? WHERE scope = ? AND keyed = 1 AND legacy_key = ? AND last_batch = ?`,
    ),
    stageRest: p(`UPDATE records SET state = 'staged', updated_at = ? WHERE last_batch = ? AND state = 'in_flight'`),
    batchInsert: p(`INSERT INTO batches (run, state, records, bytes, attempts, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    batchFinish: p(`UPDATE batches SET state = ?, error = ?, finished_at = ? WHERE id = ?`),
  };
}

export class RecordWrites {
  private readonly statements = once(() => {
    assertWritable(this.db, this.file);
    return prepareWrites(this.db);
  });
  private readonly batchById = once(() => this.db.prepare<[number], BatchDbRow>('SELECT * FROM batches WHERE id = ?'));
  private readonly batchesOfRun = once(() => this.db.prepare<[number], BatchDbRow>('SELECT * FROM batches WHERE run = ? ORDER BY id'));

  constructor(
    private readonly db: Db,
    private readonly file: string,
  ) {}

  /**
   * True when the record is on the platform with exactly this content: staged (or validated
   * invalid, or imported) in this migration with the same content hash. Such a record is not
   * sent again.
   */
  isSettled(scope: Scope, migrationNo: number, legacyKey: string, contentHash: string): boolean {
    return this.statements().settled.get(scope.id, legacyKey, contentHash, migrationNo) !== undefined;
  }

  /** Whether any record of the scope is settled in the migration (if none, no lookup can hit). */
  hasSettled(scope: Scope, migrationNo: number): boolean {
    return this.statements().anySettled.get(scope.id, migrationNo) !== undefined;
  }

  /**
   * `isSettled` for many records in one read transaction (one WAL snapshot instead of one per
   * lookup). Returns the legacy keys of the settled ones.
   */
  settledKeys(scope: Scope, migrationNo: number, records: ReadonlyArray<{ legacyKey: string; contentHash: string }>): Set<string> {
    const s = this.statements();
    const settled = new Set<string>();
    this.db.transaction(() => {
      for (const r of records) if (s.settled.get(scope.id, r.legacyKey, r.contentHash, migrationNo) !== undefined) settled.add(r.legacyKey);
    })();
    return settled;
  }

  /**
   * Records rows refused before upload, in one transaction. A row with a legacy key replaces
   * that key's earlier state; a row without one is kept under `file:line`. A refused row is in no
   * migration (so the report of whichever migration the pipeline runs into counts it, also when
   * the record was staged in an earlier one).
   */
  recordRejects(runId: number, scope: Scope, rejects: readonly LedgerRejectInput[]): void {
    if (rejects.length === 0) return;
    const s = this.statements();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const r of rejects) {
        const keyed = r.legacyKey !== undefined && r.legacyKey !== '';
        s.rejectRecord.run({
          scope: scope.id,
          keyed: keyed ? 1 : 0,
          legacyKey: keyed ? r.legacyKey : keylessKey(r.provenance),
          referenceId: r.referenceId ?? null,
          run: runId,
          errors: errorsJson(r.errors),
          source: r.provenance.source,
          file: r.provenance.file,
          line: r.provenance.line,
          byteOffset: r.provenance.byteOffset,
          rowHash: r.provenance.rowHash,
          now,
        });
      }
    })();
  }

  /**
   * Opens a batch and moves its records to `in_flight` (with the migration they go to), in one
   * transaction, before the upload starts. Returns the batch id.
   */
  beginBatch(runId: number, scope: Scope, migrationNo: number, records: RecordList, bytes: number): number {
    return this.writeBatch(runId, scope, migrationNo, records, bytes, 'in_flight');
  }

  /**
   * Keeps records that were mapped but never sent (a run stopped while their batch was being
   * built) as `mapped`, under a batch left `building`. The next run sends them.
   */
  recordUnsent(runId: number, scope: Scope, migrationNo: number | null, records: RecordList, bytes: number): number | undefined {
    if (records.length === 0) return undefined;
    return this.writeBatch(runId, scope, migrationNo, records, bytes, 'building');
  }

  private writeBatch(
    runId: number,
    scope: Scope,
    migrationNo: number | null,
    records: RecordList,
    bytes: number,
    state: 'in_flight' | 'building',
  ): number {
    const s = this.statements();
    const now = new Date().toISOString();
    const sending = state === 'in_flight';
    return this.db.transaction(() => {
      const batch = Number(
        s.batchInsert.run(runId, state, records.length, bytes, sending ? 1 : 0, now, sending ? now : null).lastInsertRowid,
      );
      const state_ = sending ? 'in_flight' : 'mapped';
      const attempts = sending ? 1 : 0;
      const params: unknown[] = [];
      const bind = (r: LedgerRecordInput) => {
        const p = r.provenance;
        params.push(
          scope.id,
          r.legacyKey,
          r.referenceId,
          r.entityType ?? null,
          state_,
          r.contentHash,
          migrationNo,
          batch,
          runId,
          attempts,
          p.source,
          p.file,
          p.line,
          p.byteOffset,
          p.rowHash,
          now,
        );
      };
      // SEND_ROWS records a statement while whole groups remain, then one at a time.
      let left = records.length;
      let inGroup = 0;
      for (const r of records) {
        bind(r);
        if (left < SEND_ROWS) {
          s.sendRecord.run(params);
          params.length = 0;
        } else if (++inGroup === SEND_ROWS) {
          s.sendRecords.run(params);
          params.length = 0;
          inGroup = 0;
          left -= SEND_ROWS;
        }
      }
      return batch;
    })();
  }

  /**
   * Stores a batch's staging results in one transaction: each record `staged` or `failed` (with
   * its errors), the batch `done`. `outcomes` must hold one entry per record of the batch (a
   * record without a result is `failed`, see the uploader); the `staged` ones need no own write.
   * Outcomes for records no longer in this batch (sent again by a later batch) are ignored.
   */
  finishBatch(scope: Scope, batchId: number, outcomes: readonly RecordOutcome[]): void {
    const s = this.statements();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      // Refusals one by one, then every record of the batch still in flight is staged at once.
      for (const o of outcomes)
        if (o.state !== 'staged')
          s.outcome.run(o.state, o.errors && o.errors.length > 0 ? errorsJson(o.errors) : null, now, scope.id, o.legacyKey, batchId);
      s.stageRest.run(now, batchId);
      s.batchFinish.run('done', null, now, batchId);
    })();
  }

  /**
   * Marks a batch `failed` when its upload failed as a whole (service unreachable after the
   * client's retries, aborted). Its records stay `in_flight`: whether the platform stored them
   * is unknown, so the next run sends them again.
   */
  failBatch(batchId: number, error: string): void {
    this.statements().batchFinish.run('failed', error, new Date().toISOString(), batchId);
  }

  batch(id: number): BatchRow | undefined {
    const row = this.batchById().get(id);
    return row && toBatch(row);
  }

  /** Batches of a run, in order. */
  batches(runId: number): BatchRow[] {
    return this.batchesOfRun().all(runId).map(toBatch);
  }
}
