/**
 * A run's writes of its records and batches: the hot path. Every state change is one SQLite
 * transaction, grouped per batch for speed: a batch's records go to `in_flight` together before
 * the upload, and to `staged`/`failed` together when the results are in. So a crash at any
 * instant leaves each record in exactly one state from which the next run continues: `in_flight`
 * records are sent again, `staged` ones with the same content are skipped.
 */
import { hexValue, nowValue, stateCode, stateCodes, uuidValue } from './compact.js';
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
const ORIGIN_OVER = `record_rows.origin_file IS NOT NULL AND record_rows.origin_file = (SELECT path FROM record_files WHERE id = excluded.file_id)`;
const ORIGIN_ON_WRITE = `origin_hash = CASE WHEN ${ORIGIN_OVER} THEN NULL ELSE record_rows.origin_hash END,
      origin_line = CASE WHEN ${ORIGIN_OVER} THEN NULL ELSE record_rows.origin_line END,
      origin_file = CASE WHEN ${ORIGIN_OVER} THEN NULL ELSE record_rows.origin_file END, former_key = NULL`;

/** Records per multi-row insert of a batch (15 parameters each; SQLite allows 32766). */
const SEND_ROWS = 100;

/** Inserts `rows` records (or updates them in place, keeping their attempts count going). */
function sendRecordsSql(rows: number): string {
  return `INSERT INTO record_rows (scope, keyed, legacy_key, reference_id, entity_type_id, state, content_hash, migration, last_batch, last_run, attempts, errors, file_id, line, byte_offset, row_hash, updated_at)
    VALUES ${Array<string>(rows).fill('(?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)').join(', ')}
    ON CONFLICT (scope, keyed, legacy_key) DO UPDATE SET reference_id = excluded.reference_id, entity_type_id = excluded.entity_type_id, state = excluded.state,
      content_hash = excluded.content_hash, migration = excluded.migration, last_batch = excluded.last_batch, last_run = excluded.last_run,
      attempts = record_rows.attempts + excluded.attempts, errors = NULL, file_id = excluded.file_id, line = excluded.line,
      byte_offset = excluded.byte_offset, row_hash = excluded.row_hash, updated_at = excluded.updated_at, ${ORIGIN_ON_WRITE}`;
}

const SETTLED = stateCodes('staged', 'invalid', 'imported');

/**
 * The ids of source files and entity types (record_files, entity_types), made on first use and
 * kept for the ledger's life: few, and looked up for every record written. An id made in a
 * transaction that rolls back is gone with it: `forget` drops them all.
 */
class RecordNames {
  private readonly files = new Map<string, number>();
  private readonly types = new Map<string, number>();
  private readonly statements = once(() => ({
    addFile: this.db.prepare('INSERT INTO record_files (source, path) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    file: this.db.prepare<[string, string], number>('SELECT id FROM record_files WHERE source = ? AND path = ?').pluck(),
    addType: this.db.prepare('INSERT INTO entity_types (name) VALUES (?) ON CONFLICT DO NOTHING'),
    type: this.db.prepare<[string], number>('SELECT id FROM entity_types WHERE name = ?').pluck(),
  }));

  constructor(private readonly db: Db) {}

  fileId(source: string, path: string): number {
    const key = `${source}\u0000${path}`;
    let id = this.files.get(key);
    if (id === undefined) {
      const s = this.statements();
      s.addFile.run(source, path);
      id = s.file.get(source, path)!;
      this.files.set(key, id);
    }
    return id;
  }

  entityTypeId(name: string | undefined): number | null {
    if (name === undefined) return null;
    let id = this.types.get(name);
    if (id === undefined) {
      const s = this.statements();
      s.addType.run(name);
      id = s.type.get(name)!;
      this.types.set(name, id);
    }
    return id;
  }

  forget(): void {
    this.files.clear();
    this.types.clear();
  }
}

/** Runs `fn` in a transaction; ids made in one that rolls back are forgotten. */
function inTransaction<T>(db: Db, names: RecordNames, fn: () => T): T {
  try {
    return db.transaction(fn)();
  } catch (err) {
    names.forget();
    throw err;
  }
}

/** The statements of the hot path, prepared together on the first write (never on a read-only ledger). */
function prepareWrites(db: Db) {
  const p = <T = unknown>(sql: string) => db.prepare<unknown[], T>(sql);
  return {
    settled: p<number>(
      `SELECT 1 FROM record_rows WHERE scope = ? AND keyed = 1 AND legacy_key = ? AND content_hash = ? AND migration = ? AND state IN (${SETTLED})`,
    ).pluck(),
    // Positional parameters: binding an object by name costs about a microsecond a row more.
    sendRecord: p(sendRecordsSql(1)),
    // The same for SEND_ROWS records in one statement (rows apply in order, as one by one).
    sendRecords: p(sendRecordsSql(SEND_ROWS)),
    anySettled: p<number>(`SELECT 1 FROM record_rows WHERE scope = ? AND migration = ? AND state IN (${SETTLED}) LIMIT 1`).pluck(),
    rejectRecord: p(
      `INSERT INTO record_rows (scope, keyed, legacy_key, reference_id, entity_type_id, state, content_hash, migration, last_batch, last_run, attempts, errors, file_id, line, byte_offset, row_hash, updated_at)
       VALUES (@scope, @keyed, @legacyKey, @referenceId, NULL, ${stateCodes('rejected')}, NULL, NULL, NULL, @run, 0, @errors, @fileId, @line, @byteOffset, @rowHash, @now)
       ON CONFLICT (scope, keyed, legacy_key) DO UPDATE SET reference_id = excluded.reference_id, state = ${stateCodes('rejected')}, content_hash = NULL, migration = NULL,
         last_run = excluded.last_run, errors = excluded.errors, file_id = excluded.file_id, line = excluded.line,
         byte_offset = excluded.byte_offset, row_hash = excluded.row_hash, updated_at = excluded.updated_at, ${ORIGIN_ON_WRITE}`,
    ),
    outcome: p(
      `UPDATE record_rows SET state = ?, errors = ?, updated_at = ? WHERE scope = ? AND keyed = 1 AND legacy_key = ? AND last_batch = ?`,
    ),
    stageRest: p(
      `UPDATE record_rows SET state = ${stateCodes('staged')}, updated_at = NULL WHERE last_batch = ? AND state = ${stateCodes('in_flight')}`,
    ),
    batchInsert: p(`INSERT INTO batches (run, state, records, bytes, attempts, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    batchFinish: p(`UPDATE batches SET state = ?, error = ?, finished_at = ? WHERE id = ?`),
    batchEnd: p('INSERT INTO batch_ends (batch, file_id, line, byte_offset, row_hash) VALUES (?, ?, ?, ?, ?)'),
  };
}

export class RecordWrites {
  private readonly statements = once(() => {
    assertWritable(this.db, this.file);
    return prepareWrites(this.db);
  });
  private readonly names: RecordNames;
  private readonly batchById = once(() => this.db.prepare<[number], BatchDbRow>('SELECT * FROM batches WHERE id = ?'));
  private readonly batchesOfRun = once(() => this.db.prepare<[number], BatchDbRow>('SELECT * FROM batches WHERE run = ? ORDER BY id'));

  constructor(
    private readonly db: Db,
    private readonly file: string,
  ) {
    this.names = new RecordNames(db);
  }

  /**
   * True when the record is on the platform with exactly this content: staged (or validated
   * invalid, or imported) in this migration with the same content hash. Such a record is not
   * sent again.
   */
  isSettled(scope: Scope, migrationNo: number, legacyKey: string, contentHash: string): boolean {
    return this.statements().settled.get(scope.id, legacyKey, hexValue(contentHash), migrationNo) !== undefined;
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
      for (const r of records)
        if (s.settled.get(scope.id, r.legacyKey, hexValue(r.contentHash), migrationNo) !== undefined) settled.add(r.legacyKey);
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
    const now = nowValue();
    inTransaction(this.db, this.names, () => {
      for (const r of rejects) {
        const keyed = r.legacyKey !== undefined && r.legacyKey !== '';
        s.rejectRecord.run({
          scope: scope.id,
          keyed: keyed ? 1 : 0,
          legacyKey: keyed ? r.legacyKey : keylessKey(r.provenance),
          referenceId: uuidValue(r.referenceId),
          run: runId,
          errors: errorsJson(r.errors),
          fileId: this.names.fileId(r.provenance.source, r.provenance.file),
          line: r.provenance.line,
          byteOffset: r.provenance.byteOffset,
          rowHash: hexValue(r.provenance.rowHash),
          now,
        });
      }
    });
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
    return inTransaction(this.db, this.names, () => {
      const batch = Number(
        s.batchInsert.run(runId, state, records.length, bytes, sending ? 1 : 0, now, sending ? now : null).lastInsertRowid,
      );
      const state_ = stateCode(sending ? 'in_flight' : 'mapped');
      const attempts = sending ? 1 : 0;
      const params: unknown[] = [];
      // Each file's furthest row of the batch (batch_ends: where a resumed run starts).
      const ends = new Map<number, { line: number; byteOffset: number; rowHash: string }>();
      const bind = (r: LedgerRecordInput) => {
        const p = r.provenance;
        const fileId = this.names.fileId(p.source, p.file);
        const end = ends.get(fileId);
        if (end === undefined || p.byteOffset > end.byteOffset) ends.set(fileId, p);
        params.push(
          scope.id,
          r.legacyKey,
          uuidValue(r.referenceId),
          this.names.entityTypeId(r.entityType),
          state_,
          hexValue(r.contentHash),
          migrationNo,
          batch,
          runId,
          attempts,
          fileId,
          p.line,
          p.byteOffset,
          hexValue(p.rowHash),
          // Written as the batch is opened: its created_at (compact.ts, updatedAtText).
          null,
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
      for (const [fileId, end] of ends) s.batchEnd.run(batch, fileId, end.line, end.byteOffset, hexValue(end.rowHash));
      return batch;
    });
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
      // Refusals one by one, then every record of the batch still in flight is staged at once;
      // their time is the batch's finished_at (compact.ts, updatedAtText).
      for (const o of outcomes)
        if (o.state !== 'staged')
          s.outcome.run(
            stateCode(o.state),
            o.errors && o.errors.length > 0 ? errorsJson(o.errors) : null,
            null,
            scope.id,
            o.legacyKey,
            batchId,
          );
      s.stageRest.run(batchId);
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
