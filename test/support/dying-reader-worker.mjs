// A parallel reader's worker that dies on its first range (test/unit/pipeline-parallel.test.ts).
import { parentPort } from 'node:worker_threads';

parentPort.on('message', () => process.exit(3));
