/**
 * The uploader: sends closed batches to staging through a bounded in-flight window and writes
 * every result to the ledger. Three rules make a crash or Ctrl-C at any instant recoverable:
 *
 * - a batch's records are `in_flight` in the ledger (one transaction) before its PUT starts;
 * - its results are written (one transaction) before its window slot is given back, so a record
 *   counts as done only once the ledger has its result (the "ack" of Benthos outputs);
 * - `submit` returns only when the window has room again, so the caller does not pull the source
 *   while the window is full: at most `inFlight × batch size` records are ever outstanding.
 *
 * Retries (backoff, Retry-After, token refresh) happen inside the client; an upload that still
 * fails leaves its records `in_flight` (their fate on the platform is unknown; staging replaces
 * by referenceId, so the next run sends them again safely) and stops the run.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import type { StreamFormat } from '../../codec/index.js';
import { idKey, sameId } from '../../contract/canonical-form.js';
import { StagecoachError } from '../../contract/errors.js';
import type { StagingResult, StagingResultVisitor } from '../../contract/migration.js';
import type { RecordError, RecordOutcome } from '../../ledger/index.js';
import type { Batch } from '../batcher/index.js';
import { halves, part, refusedForSize, tooLargeAlone } from './split-batch.js';

/**
 * Where batches go: the client's staging upload fits (see `clientSink`). A sink returns the
 * batch's results, or hands each to `onResult` as it reads them (from index 0 again when it reads
 * a retried answer) and returns none.
 */
export interface StagingSink {
  stage(body: string, format: StreamFormat, signal: AbortSignal | undefined, onResult?: StagingResultVisitor): Promise<StagingResult[]>;
  /**
   * The same upload, given the body as the UTF-8 bytes it travels as. Used instead of `stage`
   * when present: the batch's body is built as bytes, so it need not be decoded to text and
   * encoded again.
   */
  stageBytes?(
    body: Uint8Array,
    format: StreamFormat,
    signal: AbortSignal | undefined,
    onResult?: StagingResultVisitor,
  ): Promise<StagingResult[]>;
}

/** The client method the sink adapter needs (`client.migrations.stageCounterparties`). */
export interface StagingApi {
  stageCounterparties(
    migrationId: string,
    body: Uint8Array | string,
    opts: { format?: StreamFormat; signal?: AbortSignal; onResult?: StagingResultVisitor },
  ): Promise<StagingResult[]>;
}

/**
 * The shared client as a sink for one migration.
 * @example const sink = clientSink(client.migrations, migration.referenceId);
 */
export function clientSink(api: StagingApi, migrationId: string): StagingSink {
  // The client takes text or bytes alike, so one function serves both ways in.
  const stage = (body: string | Uint8Array, format: StreamFormat, signal: AbortSignal | undefined, onResult?: StagingResultVisitor) =>
    api.stageCounterparties(migrationId, body, { format, signal, ...(onResult ? { onResult } : {}) });
  return { stage, stageBytes: stage };
}

/** The ledger writes of one run (bound to its run, scope and migration by the runner). */
export interface UploadLedger {
  beginBatch(batch: Batch): number | Promise<number>;
  /** The outcomes of the batch's records that were not staged; every other record of it was. */
  finishBatch(batchId: number, refused: RecordOutcome[]): void | Promise<void>;
  failBatch(batchId: number, error: string): void | Promise<void>;
}

/** Moments of a batch's life, for progress and for tests that kill the process at a given point. */
export type BatchEvent =
  | { type: 'in_flight'; seq: number; batchId: number; records: number; bytes: number }
  | { type: 'answered'; seq: number; batchId: number; results: number }
  | { type: 'done'; seq: number; batchId: number; staged: number; failed: number }
  | { type: 'failed'; seq: number; batchId: number; error: string; aborted: boolean };

export interface UploaderOptions {
  sink: StagingSink;
  ledger: UploadLedger;
  /** Uploads in flight at once (the window). */
  inFlight: number;
  format?: StreamFormat;
  /** Aborts the uploads in flight (their records stay `in_flight`). */
  signal?: AbortSignal;
  onBatch?: (event: BatchEvent) => void;
  /** Called with a batch once it is settled in the ledger, when nothing reads its body any more. */
  onSettled?: (batch: Batch) => void;
}

/** What the uploader did: its stage report. */
export interface UploadReport {
  batches: number;
  batchesFailed: number;
  recordsSent: number;
  bytesSent: number;
  staged: number;
  /** Records refused by staging (or left without a result), by their first error code. */
  failed: number;
  failedByCode: Record<string, number>;
  /** Records of batches whose upload failed or was aborted: still `in_flight`. */
  unconfirmed: number;
  /** Uploads refused for their size (413) and sent again in halves. */
  splits: number;
}

/** Code of a record the service returned no result for. */
export const NO_STAGING_RESULT = 'NO_STAGING_RESULT';

export class Uploader {
  private readonly limit: LimitFunction;
  private readonly window: number;
  private readonly format: StreamFormat;
  private active = 0;
  private waiters: Array<() => void> = [];
  private readonly tasks = new Set<Promise<void>>();
  private fatal: Error | undefined;
  readonly report: UploadReport = {
    batches: 0,
    batchesFailed: 0,
    recordsSent: 0,
    bytesSent: 0,
    staged: 0,
    failed: 0,
    failedByCode: {},
    unconfirmed: 0,
    splits: 0,
  };

  constructor(private readonly options: UploaderOptions) {
    if (!(options.inFlight >= 1)) throw new RangeError(`inFlight must be at least 1, got ${options.inFlight}`);
    this.window = options.inFlight;
    this.limit = pLimit(options.inFlight);
    this.format = options.format ?? 'json-seq';
  }

  /** The first error that stopped uploading (the caller stops reading when it is set). */
  get failure(): Error | undefined {
    return this.fatal;
  }

  /** Batches uploading or waiting for their ledger write. */
  get inFlight(): number {
    return this.active;
  }

  /**
   * Starts uploading a batch and resolves once the window has room for the next one. Throws
   * the failure that stopped the uploader, if any.
   * @example for await (const batch of batches(items, limits)) await uploader.submit(batch);
   *          await uploader.drain();
   */
  async submit(batch: Batch): Promise<void> {
    if (this.fatal) throw this.fatal;
    this.active++;
    const task = this.limit(() => this.upload(batch)).finally(() => {
      this.active--;
      this.tasks.delete(task);
      const waiting = this.waiters;
      this.waiters = [];
      for (const w of waiting) w();
    });
    this.tasks.add(task);
    while (this.active >= this.window && !this.fatal) await new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.fatal) throw this.fatal;
  }

  /** Waits for every batch in flight to finish (or fail) and returns the report. */
  async drain(): Promise<UploadReport> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
    return this.report;
  }

  private async upload(batch: Batch): Promise<void> {
    const { ledger, onBatch } = this.options;
    let batchId: number;
    try {
      batchId = await ledger.beginBatch(batch);
    } catch (err) {
      this.fatal ??= asError(err);
      return;
    }
    this.report.batches++;
    this.report.recordsSent += batch.records.length;
    this.report.bytesSent += batch.bytes;
    onBatch?.({ type: 'in_flight', seq: batch.seq, batchId, records: batch.records.length, bytes: batch.bytes });
    const refused = await this.stage(batch, batchId);
    if (refused === undefined) return;
    try {
      await ledger.finishBatch(batchId, refused);
    } catch (err) {
      this.fatal ??= asError(err);
      return;
    }
    for (const o of refused) {
      const code = o.errors?.[0]?.code ?? 'UNKNOWN';
      this.report.failedByCode[code] = (this.report.failedByCode[code] ?? 0) + 1;
    }
    this.options.onSettled?.(batch);
    const staged = batch.records.length - refused.length;
    this.report.staged += staged;
    this.report.failed += refused.length;
    onBatch?.({ type: 'done', seq: batch.seq, batchId, staged, failed: refused.length });
  }

  /**
   * Sends a batch and returns the outcomes of its records that were not staged (undefined when the
   * upload failed: recorded here). The results are checked one by one as the client reads them
   * (BatchAnswer), not collected: an answer's 2,000 result objects, handed back through promises
   * made before the upload's wait (by then in V8's old generation), outlived the young generation
   * and were half of what piled up in the old one between full collections (docs/performance.md).
   */
  private async stage(batch: Batch, batchId: number): Promise<RecordOutcome[] | undefined> {
    const { ledger, onBatch, signal } = this.options;
    const answered = { results: 0 };
    let refused: RecordOutcome[];
    try {
      refused = await this.send(batch, answered);
    } catch (err) {
      const aborted = signal?.aborted === true || (err instanceof StagecoachError && err.code === 'ABORTED');
      const message = err instanceof StagecoachError ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
      this.report.batchesFailed++;
      this.report.unconfirmed += batch.records.length;
      try {
        await ledger.failBatch(batchId, message);
      } catch (ledgerErr) {
        this.fatal ??= asError(ledgerErr);
      }
      if (!aborted) this.fatal ??= asError(err);
      onBatch?.({ type: 'failed', seq: batch.seq, batchId, error: message, aborted });
      return undefined;
    }
    onBatch?.({ type: 'answered', seq: batch.seq, batchId, results: answered.results });
    return refused;
  }

  /**
   * Uploads a batch (or a part of one) and returns the outcomes of its records that were not
   * staged. Refused for its size (413), it is sent again in halves, down to one record, which is
   * then refused alone with its row named (split-batch.ts): the rest of the batch is staged.
   */
  private async send(batch: Batch, answered: { results: number }): Promise<RecordOutcome[]> {
    const { sink, signal } = this.options;
    if (this.fatal) throw this.fatal; // another batch already stopped the run: do not send this one
    if (signal?.aborted) throw new StagecoachError('ABORTED', 'the run was interrupted before this batch was sent');
    const answer = new BatchAnswer(batch);
    try {
      const returned = sink.stageBytes
        ? await sink.stageBytes(batch.payload, this.format, signal, answer.take)
        : await sink.stage(batch.body, this.format, signal, answer.take);
      // A sink that returns its results instead of handing them over one by one.
      returned.forEach(answer.take);
    } catch (err) {
      if (!refusedForSize(err)) throw err;
      if (batch.records.length === 1) return [tooLargeAlone(batch, err)];
      this.report.splits++;
      const [first, second] = halves(batch, this.format);
      return [...(await this.send(first, answered)), ...(await this.send(second, answered))];
    }
    answered.results += answer.results;
    const refused = answer.refused(this.format);
    // The platform stopped reading at its size limit after committing some (its last result
    // PAYLOAD_TOO_LARGE, without a referenceId): the records it did not answer are sent again,
    // halved as above if need be, instead of waiting for the next run.
    const cutOff = new Set(refused.filter(unansweredForSize).map((o) => o.legacyKey));
    if (cutOff.size === 0) return refused;
    const indices: number[] = [];
    batch.records.forEachIdentity((_id, key, i) => {
      if (cutOff.has(key)) indices.push(i);
    });
    const rest = part(batch, this.format, indices);
    this.report.splits++;
    const again =
      rest.records.length < batch.records.length
        ? await this.send(rest, answered)
        : rest.records.length === 1
          ? [tooLargeAlone(rest, new StagecoachError('PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE'))]
          : [...(await this.send(halves(rest, this.format)[0], answered)), ...(await this.send(halves(rest, this.format)[1], answered))];
    return [...refused.filter((o) => !cutOff.has(o.legacyKey)), ...again];
  }
}

/** A record left without a result because the platform's size limit ended the answer. */
const unansweredForSize = (o: RecordOutcome): boolean =>
  o.errors?.[0]?.code === NO_STAGING_RESULT && o.errors[0].message.includes('the service ended the upload with PAYLOAD_TOO_LARGE');

/**
 * A batch's staging results, checked as they are read. The common answer, every record staged
 * and answered in its place, needs no outcome per record and keeps nothing but a count; from the
 * first result that is not its record's staged result in place, the results are kept and paired
 * with the records by `matchResults`.
 * @example
 *   const answer = new BatchAnswer(batch);
 *   await sink.stageBytes(batch.payload, 'json-seq', signal, answer.take);
 *   answer.refused() // [] when every record was staged
 */
export class BatchAnswer {
  /** Results read so far, each its record's, staged, in its place. */
  private inPlace = 0;
  /** The records' referenceIds in order, read one per result. */
  private ids: Iterator<string> | undefined;
  /** Every result from the first that was not in place (undefined while all were). */
  private rest: StagingResult[] | undefined;

  constructor(private readonly batch: Batch) {}

  /** Results read. */
  get results(): number {
    return this.inPlace + this.held;
  }

  /** Results kept (none while every result read was its record's, staged, in place). */
  get held(): number {
    return this.rest?.length ?? 0;
  }

  /** Takes the result at `index` of the answer; index 0 starts the answer again (a retried upload). */
  readonly take = (result: StagingResult, index: number): void => {
    if (index === 0) {
      this.inPlace = 0;
      this.ids = this.batch.records.referenceIds();
      this.rest = undefined;
    }
    if (this.rest === undefined) {
      const id = this.ids!.next();
      if (!id.done && result.isSuccessful === true && sameId(result.referenceId, id.value)) {
        this.inPlace++;
        return;
      }
      this.rest = [];
    }
    this.rest.push(result);
  };

  /** The outcomes of the batch's records that were not staged (none when all were, in place). */
  refused(format: StreamFormat = 'json-seq'): RecordOutcome[] {
    if (this.rest === undefined && this.inPlace === this.batch.records.length) return [];
    // The answer as it came: the results in place were each its record's, staged.
    const results: StagingResult[] = [];
    this.batch.records.forEachIdentity((referenceId, _key, i) => {
      if (i >= this.inPlace) return false;
      results.push({ referenceId, isSuccessful: true, errors: [] });
    });
    results.push(...(this.rest ?? []));
    return matchResults(this.batch, results, format).filter((o) => o.state !== 'staged');
  }
}

/**
 * Pairs staging results with the batch's records by referenceId. A record without a result is
 * `failed` with NO_STAGING_RESULT (saying why, when the service ended the response with a
 * record-less result such as PAYLOAD_TOO_LARGE). Refused records get each error with the value
 * the record held at that field.
 */
export function matchResults(batch: Batch, results: readonly StagingResult[], format: StreamFormat = 'json-seq'): RecordOutcome[] {
  const byRef = new Map<string, StagingResult>();
  const stray: StagingResult[] = [];
  for (const r of results) {
    // A platform may write the UUIDs it was sent in upper case: the same ids (canonical-form.ts).
    const key = r.referenceId ? idKey(r.referenceId) : '';
    if (key && !byRef.has(key)) byRef.set(key, r);
    else stray.push(r);
  }
  let frames: string[] | undefined; // decoded and split only when a refused record needs its values
  const valueOf = (index: number, field: string): unknown => {
    frames ??= splitFrames(batch.body, format);
    const text = frames[index];
    if (text === undefined || field === '') return undefined;
    try {
      return valueAt(JSON.parse(text), field);
    } catch {
      return undefined;
    }
  };
  const strayReason = stray.flatMap((r) => r.errors.map((e) => e.message)).filter(Boolean)[0];
  const outcomes: RecordOutcome[] = [];
  batch.records.forEachIdentity((referenceId, legacyKey, index) => {
    outcomes.push(outcome(referenceId, legacyKey, index));
  });
  return outcomes;

  function outcome(referenceId: string, legacyKey: string, index: number): RecordOutcome {
    const result = byRef.get(idKey(referenceId));
    if (!result) {
      const message = `no staging result came back for referenceId ${referenceId}${strayReason ? ` (the service ended the upload with ${strayReason})` : ''}; the next run sends it again`;
      return { legacyKey, state: 'failed', errors: [{ stage: 'staging', field: '', code: NO_STAGING_RESULT, message }] };
    }
    if (result.isSuccessful) return { legacyKey, state: 'staged' };
    const errors: RecordError[] = (result.errors.length > 0 ? result.errors : [{ field: '', message: 'REFUSED' }]).map((e) => {
      const value = valueOf(index, e.field);
      const error: RecordError = {
        stage: 'staging',
        field: e.field,
        code: codeOf(e.message),
        message: `staging refused ${e.field || 'the record'}: ${e.message}`,
      };
      if (value !== undefined) error.value = value;
      return error;
    });
    return { legacyKey, state: 'failed', errors };
  }
}

function splitFrames(body: string, format: StreamFormat): string[] {
  if (format === 'json-seq') return body.split('\x1e').slice(1);
  return body.split('\n').slice(0, -1);
}

/** `addresses.0.postalCode` → the value at that path. */
function valueAt(value: unknown, path: string): unknown {
  let cur = value;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** A staging message is a code ("MISSING_REQUIRED_FIELD") or begins with one. */
function codeOf(message: string): string {
  return /^([A-Z][A-Z0-9_]{2,})\b/.exec(message)?.[1] ?? message;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
