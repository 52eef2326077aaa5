#!/usr/bin/env node
/**
 * The stagecoach executable. It only decides how lean the heap is to be, then loads the commands
 * (program.ts): the young generation has to be held before loading them grows it (lean-heap.ts).
 */
import { leanHeapFor, modulesLoaded } from './lean-heap.js';

leanHeapFor(process.argv);
const { main } = await import('./program.js');
modulesLoaded();
await main(process.argv);
