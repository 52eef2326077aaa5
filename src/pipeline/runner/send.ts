/**
 * The send stage of a run: what happens to each row once it is read, mapped and checked.
 *
 *   rejected ─▶ ledger (in groups, never later than the next batch)
 *   mapped   ─▶ skip-unchanged ─▶ batcher ─▶ uploader ─▶ ledger
 *
 * One way in per kind of row (`reject`, `mapped`), one way out (`windDown`), which leaves the
 * ledger consistent whatever stopped the run: records still in the batcher or waiting for their
 * lookup are recorded as unsent, and the uploads in flight finish (or are aborted) and are recorded.
 */
import { keylessKey, type LedgerWriter, type Scope } from '../../ledger/index.js';
import type { LedgerRejectInput } from '../../ledger/index.js';
import { Batcher, oversizeReject, prepareRecord, type Batch, type BatchItem } from '../batcher/index.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import type { FrontRow } from '../types.js';
import { Uploader, type BatchEvent, type StagingSink, type UploadReport } from '../uploader/index.js';
import { rejectInput, uploadLedger } from './run-ledger.js';
import type { SkipUnchanged } from './skip-unchanged.js';

/** The wire format of staging uploads. */
export const SEND_FORMAT = 'json-seq' as const;

/** What `mapped` answers for a record over the platform's per-record limit (kept as a reject instead). */
export const TOO_LARGE = 'RECORD_TOO_LARGE' as const;

export interface SendStageOptions {
  def: PipelineDefinition;
  writer: LedgerWriter;
  runId: number;
  scope: Scope;
  migrationNo: number;
  sink: StagingSink;
  skip: SkipUnchanged;
  signal?: AbortSignal | undefined;
  onBatch: (event: BatchEvent) => void;
}

/** What the stage did, for the run report. */
export interface SendReport {
  upload: UploadReport;
  /** Records never sent: in the batcher or waiting for their lookup when the run stopped. */
  unsent: number;
}

export class SendStage {
  readonly uploader: Uploader;
  private readonly batcher: Batcher;
  private readonly rejects: LedgerRejectInput[] = [];

  constructor(private readonly o: SendStageOptions) {
    this.uploader = new Uploader({
      sink: o.sink,
      ledger: uploadLedger(o.writer, o.runId, o.scope, o.migrationNo),
      inFlight: o.def.concurrency.inFlight,
      format: SEND_FORMAT,
      ...(o.signal ? { signal: o.signal } : {}),
      onBatch: o.onBatch,
      onSettled: (batch) => this.batcher.recycle(batch),
    });
    this.batcher = new Batcher({ maxRecords: o.def.batching.records, maxBytes: o.def.batching.bytes, format: SEND_FORMAT });
  }

  /** The run cannot go on: an upload failed for good. */
  get failure(): unknown {
    return this.uploader.failure;
  }

  /** Records skipped as unchanged so far. */
  get skipped(): number {
    return this.o.skip.report.skipped;
  }

  /**
   * A row of a corrections file: tied to the record it corrects (by its `_origin`, else its key)
   * before its own write, which the writer applies after this (src/ledger/corrections.ts).
   */
  claim(row: FrontRow): void {
    const p = row.row.provenance;
    const identity =
      row.kind === 'mapped'
        ? { keyed: 1 as const, legacyKey: row.legacyKey }
        : (() => {
            const { legacyKey } = rejectInput(row);
            return legacyKey !== undefined && legacyKey !== ''
              ? { keyed: 1 as const, legacyKey }
              : { keyed: 0 as const, legacyKey: keylessKey(p) };
          })();
    void this.o.writer.claimCorrections(this.o.scope, [{ ...identity, origin: p.origin }]);
  }

  /** A row refused before upload: kept for the ledger, written in groups. */
  reject(row: Extract<FrontRow, { kind: 'rejected' }>): void {
    this.rejects.push(rejectInput(row));
    if (this.rejects.length >= this.o.def.batching.records) this.flushRejects();
  }

  /**
   * A mapped row: on to the batcher unless it is unchanged. Returns a promise only when a batch
   * closed (await it: that is the backpressure); most rows return at once, without one.
   * `TOO_LARGE`: the record is over the platform's per-record limit and was kept as a reject.
   */
  mapped(row: Extract<FrontRow, { kind: 'mapped' }>): Promise<void> | undefined | typeof TOO_LARGE {
    const prepared = prepareRecord(mappedInput(row), SEND_FORMAT);
    // Over the platform's per-record limit: refused here, before it takes an upload's room.
    const tooLarge = oversizeReject(prepared, row.record);
    if (tooLarge) {
      this.rejects.push(tooLarge);
      if (this.rejects.length >= this.o.def.batching.records) this.flushRejects();
      return TOO_LARGE;
    }
    const items = this.o.skip.take(prepared);
    for (let i = 0; i < items.length; i++) {
      const closed = this.batcher.add(items[i]!);
      if (closed) return this.submitThenAdd(closed, items, i + 1);
    }
    return undefined;
  }

  /** The input ended: the records waiting for their lookup and the last batch go out. */
  async finish(): Promise<void> {
    const items = this.o.skip.flush();
    for (const item of items) {
      const closed = this.batcher.add(item);
      if (closed) await this.submit(closed);
    }
    const last = this.batcher.flush();
    if (last) await this.submit(last);
  }

  /** Whatever stopped the run: records what was not sent and waits for the uploads in flight. */
  async windDown(): Promise<SendReport> {
    if (this.rejects.length > 0) this.flushRejects();
    const unsent = this.batcher.takePending();
    // Records still waiting for their lookup: those not settled stay `mapped`, sent next run.
    for (const item of this.o.skip.flush()) {
      unsent.records.push(item.record);
      unsent.bytes += item.bytes;
    }
    if (unsent.records.length > 0)
      void this.o.writer.recordUnsent(this.o.runId, this.o.scope, this.o.migrationNo, unsent.records, unsent.bytes);
    return { upload: await this.uploader.drain(), unsent: unsent.records.length };
  }

  private async submitThenAdd(batch: Batch, items: readonly BatchItem[], from: number): Promise<void> {
    await this.submit(batch);
    for (let i = from; i < items.length; i++) {
      const closed = this.batcher.add(items[i]!);
      if (closed) await this.submit(closed);
    }
  }

  private async submit(batch: Batch): Promise<void> {
    // Rejects read before this batch go to the ledger no later than the batch itself.
    if (this.rejects.length > 0) this.flushRejects();
    await this.uploader.submit(batch);
  }

  private flushRejects(): void {
    // Not awaited: the writer applies writes in order and close() reports a failure.
    void this.o.writer.recordRejects(this.o.runId, this.o.scope, this.rejects.splice(0));
  }
}

function mappedInput(row: Extract<FrontRow, { kind: 'mapped' }>) {
  const p = row.row.provenance;
  return {
    legacyKey: row.legacyKey,
    referenceId: row.referenceId,
    record: row.record,
    encoded: row.encoded,
    provenance: { source: row.row.source, file: p.file, line: p.line, byteOffset: p.byteOffset, rowHash: p.hash },
  };
}
