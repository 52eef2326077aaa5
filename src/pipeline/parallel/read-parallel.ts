/**
 * The parallel reader: one file read by several worker threads at once, its rows handed on in
 * file order exactly as the one-thread reader hands them on. It wraps any source whose format can
 * be cut into ranges that start at records and read a range (splittable.ts: a format with a `splitter`).
 *
 *   split ─▶ byte ranges ─▶ workers: read, map, check, frame ─▶ this thread, in order:
 *                                         duplicate keys, missing relation targets ─▶ rows
 *
 * What needs only the row runs on the workers; what needs every key (a duplicate is the later
 * of two rows) runs here, in file order. At most a window of ranges is out at a time, so memory
 * stays flat and a slow consumer (the upload window is full) pauses the workers too; the window is
 * wider while the key pass keeps this thread busy and the workers read ahead (`prefetch`).
 *
 * A range is used only when it is seen to line up with its neighbours: the range before it
 * ended exactly at its first byte, at a record, on the line before its first line. When one
 * does not (the splitter read a record boundary differently from the reader: for CSV a stray
 * quote or a lone CR), the file
 * is read on from there on this thread, so the rows are the same either way.
 */
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StagecoachError, type ErrorCode } from '../../contract/errors.js';
import type { StreamFormat } from '../../codec/index.js';
import { stringAt } from './string-column.js';
import type { FrontRow } from '../types.js';
import { settleRow, type KeyChecks } from '../checks/index.js';
import type { PreparedSource } from '../prepare-pipeline.js';
import type { ChunkJob, ChunkPack, WorkerReply, WorkerSetup } from './protocol.js';
import { readChunk } from './read-chunk.js';
import { RefColumnsReader } from './ref-columns.js';
import { splittableFor, type FileSplit, type RecordChunk, type RecordRange, type SplitOverride } from './splittable.js';
import { addTally, type SourceTally } from '../source/tally.js';

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
  /** Hash each row into its provenance (default true; readPipeline passes its own option on). */
  hashRows?: boolean | undefined;
  /** Aimed size of a range (default 1 MiB); files under two ranges are read on one thread. */
  chunkBytes?: number | undefined;
  /** Filled in as reading goes: how the files were read (for tests and diagnostics). */
  stats?: ParallelStats | undefined;
  /** Cuts a file into ranges instead of its format's splitter; tests give a careless one to see ranges refused. */
  split?: SplitOverride | undefined;
  /** The worker script (default: the compiled worker.js); tests give one that dies. */
  workerUrl?: URL | undefined;
}

export interface ParallelStats {
  /** Ranges read by workers, and by the main thread while it would otherwise have waited. */
  rangesOnWorkers: number;
  rangesOnMain: number;
  /** Times a file was read on from a range that did not line up with its neighbour. */
  fallbacks: number;
  /** Of the ranges on workers, those handed out before the rows were asked for (`prefetch`). */
  rangesPrefetched?: number;
  /** Why the workers stopped, when one failed (its ranges and all later ones were read on the main thread). */
  workerFailure?: string;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);
const DEFAULT_CHUNK_BYTES = 1024 * 1024;

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

/** Reads (the rest of) a file on this thread: where the split and the reader disagree, or cannot split. */
export type ReadSequentially = (range: RecordRange | undefined) => AsyncGenerator<Iterable<FrontRow>>;

interface Slot {
  chunk: RecordChunk;
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
  /** Set when a worker failed (this thread reads the rest) or the reader closed. */
  failure: Error | undefined;
  private readonly chunkBytes: number;
  /** Workers to start. */
  readonly count: number;
  private readonly prefetched = new Map<string, Promise<FileRead | undefined>>();
  /** Files opened and not yet read to the end (close drops their ranges). */
  readonly open = new Set<FileRead>();
  private closed = false;
  /** What every range is read for, on a worker or here. */
  readonly mode: Omit<WorkerSetup, 'pipelineFile'>;

  constructor(
    private readonly pipelineFile: string,
    readonly options: ParallelOptions,
  ) {
    this.count = workerCount(options.workers, options.busyThreads);
    this.mode = { encode: options.encode, hashRows: options.hashRows !== false };
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  }

  /** Whether this file is worth reading in parallel (a format that splits, big enough, workers to be had). */
  async takes(s: PreparedSource, path: string): Promise<boolean> {
    if (this.count < 1 || !splittableFor(s)) return false;
    return (await stat(path)).size >= 2 * this.chunkBytes;
  }

  /**
   * Starts reading the file's first ranges on the workers before its rows are asked for, while
   * this thread is busy with something else: `readPipeline` calls it before the key pass, which
   * reads every key on this thread alone and left the other cores idle (about 2 s of 20 at
   * 1,000,000 persons). Up to `PREFETCH_RANGES_PER_WORKER` ranges per worker are read ahead;
   * they are settled once `readFile` asks for the rows. Failures surface there.
   */
  prefetch(sourceIndex: number, s: PreparedSource, f: PreparedSource['files'][number], signal?: AbortSignal): void {
    const opening = this.openFile(sourceIndex, s, f, signal).then(async (file) => {
      await file?.prefetch();
      return file;
    });
    opening.catch(() => undefined); // reported by readFile, or dropped by close
    this.prefetched.set(f.path, opening);
  }

  /**
   * The rows of one file, in batches, settled here in file order.
   * @example for await (const rows of reader.readFile(0, source, file, keys, sequential)) …
   */
  async *readFile(
    sourceIndex: number,
    s: PreparedSource,
    f: PreparedSource['files'][number],
    keys: KeyChecks,
    sequential: ReadSequentially,
    signal?: AbortSignal,
    tally?: SourceTally,
  ): AsyncGenerator<Iterable<FrontRow>> {
    const opening = this.prefetched.get(f.path) ?? this.openFile(sourceIndex, s, f, signal);
    this.prefetched.delete(f.path);
    const file = await opening;
    if (!file) {
      yield* sequential(undefined);
      return;
    }
    yield* file.rows(keys, sequential, tally);
  }

  /** A file cut into ranges, ready to hand them out; undefined when it cannot be split. */
  private async openFile(
    sourceIndex: number,
    s: PreparedSource,
    f: PreparedSource['files'][number],
    signal: AbortSignal | undefined,
  ): Promise<FileRead | undefined> {
    const split = await splittableFor(s, this.options.split)?.split(f, this.chunkBytes, signal);
    if (!split) return undefined;
    if (this.closed) {
      await split.chunks.return(undefined);
      return undefined;
    }
    this.start();
    const file = new FileRead(this, sourceIndex, s, f, split, signal);
    this.open.add(file);
    return file;
  }

  private start(): void {
    if (this.workers.length > 0) return;
    const setup: WorkerSetup = { pipelineFile: this.pipelineFile, ...this.mode };
    for (let w = 0; w < this.count; w++) {
      const worker = new Worker(this.options.workerUrl ?? WORKER_URL, { workerData: setup });
      worker.on('message', (reply: WorkerReply) => {
        const p = this.pending.get(reply.id);
        if (!p) return;
        this.pending.delete(reply.id);
        this.load[w]!--;
        if ('pack' in reply) p.resolve(reply.pack);
        else if ('error' in reply)
          p.reject(new StagecoachError(reply.error.code as ErrorCode, reply.error.message, reply.error.context ?? {}));
      });
      worker.on('error', (err) =>
        this.fail(new StagecoachError('INTERNAL_ERROR', `a reader worker failed: ${err.message}`, {}, { cause: err })),
      );
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
  idlest(): number {
    return Math.min(...this.load);
  }

  /** Hands a range to the least loaded worker. */
  submit(job: ChunkJob): Promise<ChunkPack> {
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
    this.closed = true;
    for (const file of this.open) await file.drop();
    const workers = this.workers;
    this.workers = [];
    this.failure ??= new StagecoachError('ABORTED', 'the parallel reader is closed');
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * The second half of each row's checks, in file order (checks/row-verdict.ts), as the
 * rows are taken: a range's thousands of rows are not all alive at once.
 */
function* settle(pack: ChunkPack, s: PreparedSource, f: PreparedSource['files'][number], keys: KeyChecks): Generator<FrontRow> {
  const frames = Buffer.from(pack.frames.buffer, pack.frames.byteOffset, pack.frames.byteLength);
  const refs = new RefColumnsReader(pack.refs);
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
    const legacyKey = stringAt(pack.keys, i);
    const line = pack.lines[i]!;
    const reasons = settleRow(
      s.mapping,
      { key: legacyKey, fileIndex: f.index, line, refs: refs.of(i), mappingReasons: x?.mappingReasons, checkReasons: x?.checkReasons },
      keys,
    );
    const row = {
      source: s.def.name,
      provenance: { file: f.file, line, byteOffset: pack.byteOffsets[i]!, hash: stringAt(pack.rowHashes, i) },
    };
    const referenceId = stringAt(pack.referenceIds, i);
    if (reasons === null && x?.checkReasons === undefined) {
      const encoded =
        bytes > 0
          ? {
              frame: frames.subarray(frameAt, frameAt + bytes),
              bytes,
              contentHash: stringAt(pack.contentHashes, i),
              entityType: stringAt(pack.entityTypes, i) || undefined,
            }
          : undefined;
      yield { kind: 'mapped', component: 'Counterparties', legacyKey, referenceId, row, ...(encoded ? { encoded } : {}) };
    } else {
      yield { kind: 'rejected', component: 'Counterparties', legacyKey, referenceId, reasons: reasons ?? [], row };
    }
  }
}

/** Ranges a worker holds at once: one to read, one waiting, so it never idles between them. */
const RANGES_PER_WORKER = 2;
/**
 * Ranges per worker read ahead while this thread is busy elsewhere (prefetch): about the key pass
 * of a 1,000,000-row file. They wait, read, until the rows are asked for.
 */
const PREFETCH_RANGES_PER_WORKER = 8;

/**
 * One file's ranges on their way through the workers and this thread, and back in file order.
 * Ranges are queued from the split as the window allows, handed to workers as they have room,
 * and read here whenever this thread would otherwise wait.
 */
class FileRead {
  private columns: string[] | undefined;
  private readonly queue: Slot[] = [];
  private exhausted = false;
  private filling: Promise<void> = Promise.resolve();
  private prefetching = false;
  /** Ranges queued at most, read or not. */
  private window: number;
  private dropped = false;

  constructor(
    private readonly reader: ParallelReader,
    private readonly sourceIndex: number,
    private readonly s: PreparedSource,
    private readonly f: PreparedSource['files'][number],
    private readonly split: FileSplit,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.columns = split.columns;
    this.window = (reader.count + 1) * RANGES_PER_WORKER;
  }

  /**
   * Hands the first ranges to the workers and, as each finishes, the next, until more are read
   * than usual. A worker still holds two at a time, so that when the rows are asked for, this
   * thread does not wait for a worker's long queue but reads the next unread range itself.
   */
  async prefetch(): Promise<void> {
    this.prefetching = true;
    this.window = this.reader.count * PREFETCH_RANGES_PER_WORKER;
    await this.fill();
    this.dispatch();
  }

  /** The rows, range by range, settled in file order. */
  /** `tally`: the file's count, to which each settled range adds its own (a range read again on this thread counts there). */
  async *rows(keys: KeyChecks, sequential: ReadSequentially, tally?: SourceTally): AsyncGenerator<Iterable<FrontRow>> {
    const { queue, split, s, f, signal } = this;
    this.prefetching = false;
    this.window = (this.reader.count + 1) * RANGES_PER_WORKER;
    try {
      let expectLine = 1;
      await this.fill();
      this.dispatch();
      while (queue.length > 0) {
        if (signal?.aborted) throw new StagecoachError('ABORTED', 'Reading stopped', { file: f.file });
        const head = queue[0]!;
        if (!head.pack) this.take(head, true);
        else if (!head.done) {
          const spare = queue.find((q) => !q.pack);
          if (spare) {
            this.take(spare, true);
            await spare.pack!.catch(() => undefined);
            continue;
          }
        }
        queue.shift();
        const { chunk } = head;
        const pack = await this.delivered(head);
        const last = chunk.end === undefined;
        const lined = chunk.line === expectLine;
        const ended = last || (pack.outcome.endedAtRecord && pack.outcome.endByte === chunk.end);
        if (!lined || !ended) {
          // The split and the reader disagree here: read on from this range's start on this thread,
          // with the columns this range was read with (none for the header's range, even when a
          // read-ahead has learnt them meanwhile: the header is read again).
          if (this.reader.options.stats) this.reader.options.stats.fallbacks++;
          yield* sequential(split.range({ start: chunk.start, line: expectLine }, head.job.range.columns));
          return;
        }
        if (head.job.range.columns === undefined) {
          this.columns = pack.outcome.columns;
          if (this.columns === undefined && !last) {
            if (tally) addTally(tally, pack.tally);
            yield settle(pack, s, f, keys);
            yield* sequential(split.range({ start: chunk.end!, line: pack.outcome.endLine + 1 }, undefined));
            return;
          }
        }
        expectLine = pack.outcome.endLine + 1;
        await this.fill();
        this.dispatch();
        if (tally) addTally(tally, pack.tally);
        yield settle(pack, s, f, keys);
      }
    } finally {
      await this.drop();
    }
  }

  /** Stops: no more ranges, and results nobody waits for any more are let go. */
  async drop(): Promise<void> {
    if (this.dropped) return;
    this.dropped = true;
    this.reader.open.delete(this);
    for (const q of this.queue) q.pack?.catch(() => undefined);
    await this.filling.catch(() => undefined);
    if (!this.exhausted) await this.split.chunks.return(undefined);
  }

  /** Queues ranges up to the window, one fill at a time (prefetching fills from callbacks too). */
  private fill(): Promise<void> {
    this.filling = this.filling.then(() => this.fillNow());
    return this.filling;
  }

  private async fillNow(): Promise<void> {
    while (!this.dropped && !this.exhausted && this.queue.length < this.window) {
      // The header's range first: the others need its columns.
      if (this.queue.length > 0 && this.columns === undefined) return;
      const next = await this.split.chunks.next();
      if (next.done) {
        this.exhausted = true;
        return;
      }
      const range = this.split.range(next.value, this.columns);
      this.queue.push({
        chunk: next.value,
        job: { source: this.sourceIndex, path: this.f.path, file: this.f.file, range },
        pack: undefined,
        done: false,
      });
    }
  }

  private take(slot: Slot, here: boolean): void {
    const stats = this.reader.options.stats;
    if (stats) here ? stats.rangesOnMain++ : stats.rangesOnWorkers++;
    if (stats && !here && this.prefetching) stats.rangesPrefetched = (stats.rangesPrefetched ?? 0) + 1;
    slot.pack = here ? readChunk(this.s, slot.job, this.reader.mode) : this.reader.submit({ id: 0, ...slot.job });
    slot.pack.then(
      (pack) => {
        slot.done = true;
        if (this.prefetching) this.topUp(slot, pack);
      },
      () => (slot.done = true),
    );
  }

  /** While prefetching, a finished range makes room for the next (the header's range, for all others). */
  private topUp(slot: Slot, pack: ChunkPack): void {
    if (this.columns === undefined && slot === this.queue[0]) this.columns = pack.outcome.columns;
    this.fill().then(
      () => this.prefetching && this.dispatch(),
      () => undefined, // the split's error comes again where the rows are read
    );
  }

  /** Gives queued ranges to workers with room (none once a worker died: this thread reads the rest). */
  private dispatch(): void {
    if (this.reader.failure || this.dropped) return;
    for (const slot of this.queue) if (!slot.pack && this.reader.idlest() < RANGES_PER_WORKER) this.take(slot, false);
  }

  /**
   * A range a worker could not deliver (it died, ran out of memory) is read here instead; a
   * range that cannot be read fails here the same way, with the reader's own error.
   */
  private delivered(slot: Slot): Promise<ChunkPack> {
    return slot.pack!.catch((err: unknown) => {
      if (!this.reader.failure) throw err;
      const stats = this.reader.options.stats;
      if (stats) stats.workerFailure ??= this.reader.failure.message;
      return readChunk(this.s, slot.job, this.reader.mode);
    });
  }
}
