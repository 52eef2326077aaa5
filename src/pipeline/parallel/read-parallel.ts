/**
 * The parallel reader: one CSV file read by several worker threads at once, its rows handed on
 * in file order exactly as the one-thread reader hands them on.
 *
 *   splitCsv ─▶ byte ranges ─▶ workers: read, map, check, frame ─▶ this thread, in order:
 *                                         duplicate keys, missing relation targets ─▶ rows
 *
 * What needs only the row runs on the workers; what needs every key (a duplicate is the later
 * of two rows) runs here, in file order. At most `window` ranges are out at a time, so memory
 * stays flat and a slow consumer (the upload window is full) pauses the workers too.
 *
 * A range is used only when it is seen to line up with its neighbours: the range before it
 * ended exactly at its first byte, at a record, on the line before its first line. When one
 * does not (the splitter read a stray quote or a lone CR differently from csv-parse), the file
 * is read on from there on this thread, so the rows are the same either way.
 */
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StagecoachError, type ErrorCode } from '../../contract/errors.js';
import type { StreamFormat } from '../../codec/index.js';
import type { RelationRef } from '../mapping/compile.js';
import { detectEncoding } from '../source/encoding.js';
import { splitCsv, type CsvChunk, type CsvSplit, type SplitCsvOptions } from '../source/csv-chunks.js';
import type { CsvRange } from '../source/source-csv.js';
import type { FrontRow } from '../types.js';
import { settleRow, type KeyChecks, type PreparedSource } from '../read-pipeline.js';
import type { ChunkJob, ChunkPack, WorkerReply, WorkerSetup } from './protocol.js';
import { readChunk } from './read-chunk.js';

export interface ParallelOptions {
  /**
   * Worker threads that read besides this one (which reads too whenever it would otherwise wait
   * for them); `auto`: the cores left after this thread and `busyThreads`. 0: no parallel reading.
   */
  workers: number | 'auto';
  /**
   * Threads of the command that stay busy beside reading (`run`: the ledger writer, and this
   * thread's uploads), so that `auto` leaves them their cores. Default 0 (`plan`).
   */
  busyThreads?: number | undefined;
  /** Frame clean records for upload on the workers (`run`), or only check them (`plan`). */
  encode?: StreamFormat | undefined;
  /**
   * Each worker's young generation in MB (default 8, lean: V8's own lets it grow past 30 MB per
   * worker). `plan` gives 32: its memory is no target, and a worker held at 8 MB spent twice the
   * time in scavenges.
   */
  youngGenerationMb?: number | undefined;
  /** Aimed size of a range (default 1 MiB); files under two ranges are read on one thread. */
  chunkBytes?: number | undefined;
  /** Filled in as reading goes: how the files were read (for tests and diagnostics). */
  stats?: ParallelStats | undefined;
  /** Cuts a file into ranges (default `splitCsv`); tests give a careless one to see ranges refused. */
  split?: ((options: SplitCsvOptions) => Promise<CsvSplit | undefined>) | undefined;
  /** The worker script (default: the compiled worker.js); tests give one that dies. */
  workerUrl?: URL | undefined;
}

export interface ParallelStats {
  /** Ranges read by workers, and by the main thread while it would otherwise have waited. */
  rangesOnWorkers: number;
  rangesOnMain: number;
  /** Times a file was read on from a range that did not line up with its neighbour. */
  fallbacks: number;
  /** Why the workers stopped, when one failed (its ranges and all later ones were read on the main thread). */
  workerFailure?: string;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);
const DEFAULT_CHUNK_BYTES = 1024 * 1024;
const NO_REFS: readonly RelationRef[] = [];
/** The default of `youngGenerationMb` (see there): what `run` keeps its workers to. */
const LEAN_YOUNG_GENERATION_MB = 8;

/**
 * Most workers `auto` starts: each costs 60-80 MB, and beyond a few the main thread, which
 * settles every row in order, is what bounds the reading.
 */
const AUTO_MAX_WORKERS = 4;

/**
 * How many workers `workers` means here; 0 when there is no compiled worker to start.
 * @example workerCount('auto', 1) // 0 on 2 cores, 4 on 8
 */
export function workerCount(workers: number | 'auto', busyThreads = 0): number {
  if (!existsSync(fileURLToPath(WORKER_URL))) return 0;
  return workers === 'auto' ? Math.min(AUTO_MAX_WORKERS, Math.max(0, availableParallelism() - 1 - busyThreads)) : workers;
}

/** Reads (the rest of) a file on this thread: where the split and csv-parse disagree, or cannot split. */
export type ReadSequentially = (range: CsvRange | undefined) => AsyncGenerator<Iterable<FrontRow>>;

interface Slot {
  chunk: CsvChunk;
  job: Omit<ChunkJob, 'id'>;
  pack: Promise<ChunkPack> | undefined;
  done: boolean;
}

interface Pending {
  resolve: (pack: ChunkPack) => void;
  reject: (err: Error) => void;
}

export class ParallelReader {
  private workers: Worker[] = [];
  private load: number[] = [];
  private pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;
  private readonly chunkBytes: number;
  private readonly count: number;

  constructor(
    private readonly pipelineFile: string,
    private readonly options: ParallelOptions,
  ) {
    this.count = workerCount(options.workers, options.busyThreads);
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  }

  /** Whether this file is worth reading in parallel (CSV, big enough, workers to be had). */
  async takes(s: PreparedSource, path: string): Promise<boolean> {
    if (this.count < 1 || s.def.format !== 'csv') return false;
    return (await stat(path)).size >= 2 * this.chunkBytes;
  }

  /**
   * The rows of one file, in batches, settled here in file order.
   * @example for await (const rows of reader.readFile(0, source, file, keys, sequential)) …
   */
  async *readFile(sourceIndex: number, s: PreparedSource, f: PreparedSource['files'][number], keys: KeyChecks, sequential: ReadSequentially, signal?: AbortSignal): AsyncGenerator<Iterable<FrontRow>> {
    const enc = await detectEncoding(f.path, f.file, s.def.encoding);
    const split = await (this.options.split ?? splitCsv)({ path: f.path, enc, delimiter: s.def.csv.delimiter, quote: s.def.csv.quote, chunkBytes: this.chunkBytes, signal });
    if (!split) {
      yield* sequential(undefined);
      return;
    }
    this.start();
    // Ranges in file order, each read by a worker, or here when this thread would otherwise wait.
    const window = (this.count + 1) * 2;
    let columns = s.def.csv.header ? undefined : s.def.csv.columns;
    const queue: Slot[] = [];
    let exhausted = false;
    const fill = async () => {
      while (!exhausted && queue.length < window) {
        if (queue.length > 0 && columns === undefined) return; // the header's range first
        const next = await split.chunks.next();
        if (next.done) {
          exhausted = true;
          return;
        }
        const range: CsvRange = { start: next.value.start, line: next.value.line, recordDelimiter: split.recordDelimiter, ...(next.value.end !== undefined ? { end: next.value.end } : {}), ...(columns ? { columns } : {}) };
        queue.push({ chunk: next.value, job: { source: sourceIndex, path: f.path, file: f.file, range }, pack: undefined, done: false });
      }
    };
    const stats = this.options.stats;
    const take = (slot: Slot, here: boolean) => {
      if (stats) here ? stats.rangesOnMain++ : stats.rangesOnWorkers++;
      slot.pack = here ? readChunk(s, slot.job, this.options.encode) : this.submit({ id: 0, ...slot.job });
      slot.pack.then(
        () => (slot.done = true),
        () => (slot.done = true),
      );
    };
    // Each worker keeps two ranges: one to read, one waiting, so it never idles between them.
    const dispatch = () => {
      if (this.failure) return; // a worker died: this thread reads the rest
      for (const slot of queue) if (!slot.pack && this.idlest() < 2) take(slot, false);
    };
    // A range a worker could not deliver (it died, ran out of memory) is read here instead; a
    // range that cannot be read fails here the same way, with the reader's own error.
    const delivered = (slot: Slot) =>
      slot.pack!.catch((err: unknown) => {
        if (!this.failure) throw err;
        if (stats) stats.workerFailure ??= this.failure.message;
        return readChunk(s, slot.job, this.options.encode);
      });
    try {
      let expectLine = 1;
      await fill();
      dispatch();
      while (queue.length > 0) {
        if (signal?.aborted) throw new StagecoachError('ABORTED', 'Reading stopped', { file: f.file });
        const head = queue[0]!;
        if (!head.pack) take(head, true);
        else if (!head.done) {
          const spare = queue.find((q) => !q.pack);
          if (spare) {
            take(spare, true);
            await spare.pack!.catch(() => undefined);
            continue;
          }
        }
        queue.shift();
        const { chunk } = head;
        const pack = await delivered(head);
        const last = chunk.end === undefined;
        const lined = chunk.line === expectLine;
        const ended = last || (pack.outcome.endedAtRecord && pack.outcome.endByte === chunk.end);
        if (!lined || !ended) {
          // The split and csv-parse disagree here: read on from this range's start on this thread.
          if (stats) stats.fallbacks++;
          yield* sequential({ start: chunk.start, line: expectLine, recordDelimiter: split.recordDelimiter, ...(columns ? { columns } : {}) });
          return;
        }
        if (columns === undefined) {
          columns = pack.outcome.columns;
          if (columns === undefined && !last) {
            yield this.settle(pack, s, f, keys);
            yield* sequential({ start: chunk.end!, line: pack.outcome.endLine + 1, recordDelimiter: split.recordDelimiter });
            return;
          }
        }
        expectLine = pack.outcome.endLine + 1;
        await fill();
        dispatch();
        yield this.settle(pack, s, f, keys);
      }
    } finally {
      for (const q of queue) q.pack?.catch(() => undefined); // results nobody waits for any more
      if (!exhausted) await split.chunks.return(undefined);
    }
  }

  /**
   * The second half of each row's checks, in file order (see read-pipeline.ts settleRow), as the
   * rows are taken: a range's thousands of rows are not all alive at once.
   */
  private *settle(pack: ChunkPack, s: PreparedSource, f: PreparedSource['files'][number], keys: KeyChecks): Generator<FrontRow> {
    const frames = Buffer.from(pack.frames.buffer, pack.frames.byteOffset, pack.frames.byteLength);
    let extra = 0;
    let final = 0;
    let at = 0;
    for (let i = 0; i < pack.n; i++) {
      const bytes = pack.frameBytes[i]!;
      const frameAt = at;
      at += bytes;
      if (pack.kinds[i] === 1) {
        yield pack.finals[final++]!.row;
        continue;
      }
      const x = pack.extras[extra]?.i === i ? pack.extras[extra++] : undefined;
      const legacyKey = pack.keys[i]!;
      const line = pack.lines[i]!;
      const reasons = settleRow(s.mapping, legacyKey, f.index, line, x?.mappingReasons ?? null, x?.refs ?? NO_REFS, x?.checkReasons ?? null, keys);
      const row = { source: s.def.name, provenance: { file: f.file, line, byteOffset: pack.byteOffsets[i]!, hash: pack.rowHashes[i]! } };
      const referenceId = pack.referenceIds[i]!;
      if (reasons === null && x?.checkReasons === undefined) {
        const encoded = bytes > 0 ? { frame: frames.subarray(frameAt, frameAt + bytes), bytes, contentHash: pack.contentHashes[i]!, entityType: pack.entityTypes[i] } : undefined;
        yield { kind: 'mapped', component: 'Counterparties', legacyKey, referenceId, row, ...(encoded ? { encoded } : {}) };
      } else {
        yield { kind: 'rejected', component: 'Counterparties', legacyKey, referenceId, reasons: reasons ?? [], row };
      }
    }
  }

  private start(): void {
    if (this.workers.length > 0) return;
    const setup: WorkerSetup = { pipelineFile: this.pipelineFile, encode: this.options.encode };
    for (let w = 0; w < this.count; w++) {
      const worker = new Worker(this.options.workerUrl ?? WORKER_URL, { workerData: setup, resourceLimits: { maxYoungGenerationSizeMb: this.options.youngGenerationMb ?? LEAN_YOUNG_GENERATION_MB } });
      worker.on('message', (reply: WorkerReply) => {
        const p = this.pending.get(reply.id);
        if (!p) return;
        this.pending.delete(reply.id);
        this.load[w]!--;
        if ('pack' in reply) p.resolve(reply.pack);
        else if ('error' in reply) p.reject(new StagecoachError(reply.error.code as ErrorCode, reply.error.message, reply.error.context ?? {}));
      });
      worker.on('error', (err) => this.fail(new StagecoachError('INTERNAL_ERROR', `a reader worker failed: ${err.message}`, {}, { cause: err })));
      worker.on('exit', (code) => {
        if (code !== 0) this.fail(new StagecoachError('INTERNAL_ERROR', `a reader worker exited with ${code}`));
      });
      this.workers.push(worker);
      this.load.push(0);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Ranges the least loaded worker holds. */
  private idlest(): number {
    return Math.min(...this.load);
  }

  private submit(job: ChunkJob): Promise<ChunkPack> {
    if (this.failure) return Promise.reject(this.failure);
    const id = ++this.nextId;
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.load[i]! < this.load[w]!) w = i;
    this.load[w]!++;
    return new Promise<ChunkPack>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.workers[w]!.postMessage({ ...job, id });
    });
  }

  /** Stops the workers (their unfinished ranges are dropped). */
  async close(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    this.failure ??= new StagecoachError('ABORTED', 'the parallel reader is closed');
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
