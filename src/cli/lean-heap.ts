/**
 * Keeps a staging command's heap near what it holds. A run allocates a few kB per record that die
 * soon, and V8 left alone lets the heap grow to about four times the live data before collecting
 * (client peak RSS 265–285 MB at 100,000 persons with ~30 MB live); holding the young generation
 * at its start size and the old one at twice the live data brings that to 167–180 MB, for about
 * 12% more CPU on the reading thread. Both flags are read by V8 at every collection, so they take
 * effect when set at run time. `STAGECOACH_LEAN_HEAP=0` leaves V8's defaults (faster, more memory).
 * Measured since on Node 20 (docs/running.md, Speed): the old-generation flag is the one that
 * shows (100,000 persons: 207 MB against 261 MB without these flags); the main thread's young
 * generation still grows to 34 MB with the growth factor at 1, even when it is given on the
 * command line; only `--max-semi-space-size` at start-up holds it, and a process cannot set that
 * for itself.
 */
import v8 from 'node:v8';

export function leanHeap(): void {
  if (process.env.STAGECOACH_LEAN_HEAP === '0') return;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  v8.setFlagsFromString('--heap-growing-percent=100');
}
