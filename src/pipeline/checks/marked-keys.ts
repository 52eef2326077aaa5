/**
 * The keys a key pass marked, as sorted 53-bit fingerprints, in bounded memory: what the
 * relation-target check asks (does any source hold this key?) and which keys more than one row
 * holds (the only ones the duplicate check must then follow). Fingerprints are collected in a
 * buffer of `runLength` (8 bytes each: 8 MB by default); a pipeline with no more keys than that
 * keeps them in memory, sorted. Past it, each full buffer is sorted and written to a scratch file
 * (a run), and sealing merges the runs into one sorted file of distinct fingerprints, read a block
 * at a time by a lookup; only the first fingerprint of each block stays in memory (16 kB at ten
 * million keys). So memory stays flat whatever the number of keys, and a lookup past the buffer
 * costs one read of a 4 kB block the operating system has most likely cached.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StagecoachError } from '../../contract/errors.js';

/** Fingerprints sorted in memory at once; past this they go to scratch runs. */
const RUN_LENGTH = 1 << 20;
/** Fingerprints in a block of the merged file (4 kB), read whole by a lookup. */
const BLOCK_LENGTH = 512;
/** Fingerprints read from or written to a scratch file at once while merging. */
const IO_LENGTH = 8192;

export class MarkedKeys {
  private buffer: Float64Array;
  private filled = 0;
  /** Scratch files (runs, then the merged file) live here, removed by `close`. */
  private dir: string | undefined;
  private runs: Array<{ path: string; length: number }> = [];
  /** Sealed in memory: the distinct fingerprints, sorted. */
  private sorted: Float64Array | undefined;
  /** Sealed on disk: the merged file, its length and the first fingerprint of each block. */
  private merged: { fd: number; length: number; firsts: Float64Array } | undefined;
  private readonly block: Float64Array;
  /** Fingerprints marked more than once (set by `seal`). */
  readonly repeated = new Set<number>();
  /** Marked after sealing (a corrected row's key: a few). */
  private readonly late = new Set<number>();

  constructor(
    private readonly runLength = RUN_LENGTH,
    private readonly blockLength = BLOCK_LENGTH,
  ) {
    this.buffer = new Float64Array(runLength);
    this.block = new Float64Array(blockLength);
  }

  get sealed(): boolean {
    return this.sorted !== undefined || this.merged !== undefined;
  }

  /** Whether the fingerprints went to scratch files (more than one buffer of them). */
  get spilled(): boolean {
    return this.merged !== undefined;
  }

  add(fp: number): void {
    if (this.sealed) {
      this.late.add(fp);
      return;
    }
    this.buffer[this.filled++] = fp;
    if (this.filled === this.runLength) this.spill();
  }

  /** Sorts (and merges) what was marked; what is added after this is kept apart. */
  seal(): void {
    if (this.sealed) return;
    if (this.runs.length === 0) {
      const run = this.buffer.subarray(0, this.filled).sort();
      const out = new Float64Array(run.length);
      let n = 0;
      for (let i = 0; i < run.length; i++) {
        if (n > 0 && out[n - 1] === run[i]) this.repeated.add(run[i]!);
        else out[n++] = run[i]!;
      }
      this.sorted = out.slice(0, n);
    } else {
      if (this.filled > 0) this.spill();
      this.merge();
    }
    this.buffer = new Float64Array(0);
  }

  has(fp: number): boolean {
    if (this.late.size > 0 && this.late.has(fp)) return true;
    if (this.sorted) return search(this.sorted, this.sorted.length, fp);
    const m = this.merged!;
    // The last block whose first fingerprint is not above fp.
    let lo = 0;
    let hi = m.firsts.length - 1;
    if (hi < 0 || m.firsts[0]! > fp) return false;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (m.firsts[mid]! <= fp) lo = mid;
      else hi = mid - 1;
    }
    const length = Math.min(this.blockLength, m.length - lo * this.blockLength);
    readAll(m.fd, this.block, length, lo * this.blockLength);
    return search(this.block, length, fp);
  }

  /** Removes the scratch files. */
  close(): void {
    if (this.merged) closeSync(this.merged.fd);
    this.merged = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private spill(): void {
    this.dir ??= mkdtempSync(join(tmpdir(), 'stagecoach-keys-'));
    const path = join(this.dir, `run-${this.runs.length}`);
    const fd = openSync(path, 'w');
    try {
      const run = this.buffer.subarray(0, this.filled).sort();
      writeAll(fd, run);
    } finally {
      closeSync(fd);
    }
    this.runs.push({ path, length: this.filled });
    this.filled = 0;
  }

  /** Merges the sorted runs into one file of distinct fingerprints, noting the repeated ones. */
  private merge(): void {
    const path = join(this.dir!, 'merged');
    const out = openSync(path, 'w+');
    const readers = this.runs.map((r) => new RunReader(r.path, r.length));
    const pending = new Float64Array(IO_LENGTH);
    const firsts: number[] = [];
    let waiting = 0;
    let written = 0;
    let last = -1;
    try {
      for (;;) {
        // The runs are few (one a million keys): the smallest head by a scan.
        let min = -1;
        for (let i = 0; i < readers.length; i++) {
          const r = readers[i]!;
          if (!r.done && (min < 0 || r.head < readers[min]!.head)) min = i;
        }
        if (min < 0) break;
        const fp = readers[min]!.head;
        readers[min]!.next();
        if (fp === last) {
          this.repeated.add(fp);
          continue;
        }
        last = fp;
        if (written % this.blockLength === 0) firsts.push(fp);
        pending[waiting++] = fp;
        written++;
        if (waiting === IO_LENGTH) {
          writeAll(out, pending);
          waiting = 0;
        }
      }
      writeAll(out, pending.subarray(0, waiting));
    } catch (err) {
      closeSync(out);
      throw err;
    } finally {
      for (const r of readers) r.close();
      for (const r of this.runs) rmSync(r.path, { force: true });
      this.runs = [];
    }
    this.merged = { fd: out, length: written, firsts: Float64Array.from(firsts) };
  }
}

/** Reads one sorted run a buffer at a time. */
class RunReader {
  private readonly fd: number;
  private readonly buffer = new Float64Array(IO_LENGTH);
  private at = 0;
  private inBuffer = 0;
  private read = 0;
  head = 0;
  done = false;

  constructor(
    path: string,
    private readonly length: number,
  ) {
    this.fd = openSync(path, 'r');
    this.next();
  }

  next(): void {
    if (this.at === this.inBuffer) {
      this.inBuffer = Math.min(IO_LENGTH, this.length - this.read);
      if (this.inBuffer === 0) {
        this.done = true;
        return;
      }
      readAll(this.fd, this.buffer, this.inBuffer, this.read);
      this.read += this.inBuffer;
      this.at = 0;
    }
    this.head = this.buffer[this.at++]!;
  }

  close(): void {
    closeSync(this.fd);
  }
}

function search(sorted: Float64Array, length: number, fp: number): boolean {
  let lo = 0;
  let hi = length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === fp) return true;
    if (v < fp) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

function writeAll(fd: number, values: Float64Array): void {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** Reads `length` fingerprints from fingerprint offset `at` into the start of `into`. */
function readAll(fd: number, into: Float64Array, length: number, at: number): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, length * 8);
  for (let done = 0; done < bytes.length; ) {
    const n = readSync(fd, bytes, done, bytes.length - done, at * 8 + done);
    if (n === 0)
      throw new StagecoachError('INTERNAL_ERROR', `the scratch file of marked keys ended early, at fingerprint ${at + done / 8}`);
    done += n;
  }
}
