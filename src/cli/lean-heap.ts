/**
 * Keeps a staging command's heap near what it holds. A run allocates a few kB per record that die
 * soon, and V8 left alone lets both generations grow well past the live data:
 *
 * - the old generation to several times the live data before it collects:
 *   `--heap-growing-percent=100` collects at twice the live data (measured on Node 20 with
 *   100,000 persons: client peak RSS 207 MB against 261 MB without it, for about 12% more CPU on
 *   the reading thread);
 * - the young generation (both semi-spaces) from 1 MB to 32 MB on this machine, doubling whenever
 *   many objects survive a scavenge, as records in the upload window do. It is held at
 *   YOUNG_GENERATION_BYTES by setting `--semi-space-growth-factor=1` once it has grown that far.
 *
 * V8 reads both flags at every collection, so setting them at run time works, with one catch:
 * whenever V8 sets up a heap (at start-up, and for every worker thread: the ledger writer, the
 * parallel readers) it raises a growth factor below 2 back to 2 (`Heap::ConfigureHeap`). So the
 * factor is set again as each worker comes online, or the main thread's young generation grows
 * to 32 MB after all (that is what earlier measurements here saw, and why they concluded that
 * only `--max-semi-space-size` at start-up could hold it).
 *
 * The young generation must not grow past its hold before the hold starts, and it grows in
 * doublings a watcher can miss while the CLI's modules load (one long synchronous stretch, in
 * which it went from 8 to 16 or 32 MB). So it is held at its start-up size (1–2 MB) while they
 * load (main.ts), then let grow while a run turns the event loop every few milliseconds, and held
 * as soon as the watcher sees it at YOUNG_GENERATION_BYTES. Held at 1–2 MB for a whole run it
 * would cost 15–20% more CPU.
 *
 * `STAGECOACH_LEAN_HEAP=0` leaves V8's defaults (faster, more memory).
 */
import v8 from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** The young generation (both semi-spaces) a lean command keeps: what `--max-semi-space-size=4` gives. */
export const YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;

/** How often the young generation's size is looked at until it has grown to its hold. */
const WATCH_MS = 5;

/** The commands that stream a whole export through this process. */
export const LEAN_COMMANDS: readonly string[] = ['run', 'migrate'];

/** The young generation: held while the modules load, growing to its hold, then held. */
let young: 'v8' | 'loading' | 'growing' | 'held' = 'v8';

/**
 * Makes the heap lean when the command line (process.argv) runs one of LEAN_COMMANDS. Call it
 * before loading the commands' modules, and `modulesLoaded` after. Returns whether it did.
 */
export function leanHeapFor(argv: readonly string[]): boolean {
  if (!LEAN_COMMANDS.includes(argv[2] ?? '') || process.env.STAGECOACH_LEAN_HEAP === '0' || young !== 'v8') return false;
  v8.setFlagsFromString('--heap-growing-percent=100');
  young = 'loading';
  applyHold();
  process.on('worker', (worker: Worker) => worker.once('online', applyHold));
  return true;
}

/** Lets the young generation grow to its hold (after leanHeapFor, once the modules are loaded). */
export function modulesLoaded(): void {
  if (young !== 'loading') return;
  young = 'growing';
  v8.setFlagsFromString('--semi-space-growth-factor=2');
  const watch = setInterval(() => {
    if (youngGenerationBytes() < YOUNG_GENERATION_BYTES) return;
    clearInterval(watch);
    young = 'held';
    applyHold();
  }, WATCH_MS);
  watch.unref();
}

/** Sets the growth factor again: V8 raises it to 2 whenever a worker thread sets up its heap. */
function applyHold(): void {
  if (young === 'loading' || young === 'held') v8.setFlagsFromString('--semi-space-growth-factor=1');
}

/** Bytes V8 has given the young generation (both semi-spaces). */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}
