// A phone worker's thread that dies on its first batch (test/unit/pipeline-phone-worker.test.ts).
import { parentPort } from 'node:worker_threads';

parentPort.on('message', () => process.exit(3));
