#!/usr/bin/env node
/**
 * The stagecoach executable. It only decides how lean the heap is to be, then loads the commands
 * (program.ts): the young generation has to be held before loading them grows it (lean-heap.ts).
 */
import { leanHeapFor, modulesLoaded } from './lean-heap.js';

const lean = leanHeapFor(process.argv);
const { main } = await import('./program.js');
// The commands load their heavier modules (the client, the ledger, src/reconcile) when they run;
// a lean command loads them here instead, while the young generation is still held.
if (lean) await Promise.all([import('../pipeline/runner/index.js'), import('./progress.js'), import('../reconcile/migrate.js')]);
modulesLoaded();
await main(process.argv);
