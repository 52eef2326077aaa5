/**
 * A parallel reader's worker (see protocol.ts): loads the pipeline, then reads one CSV range per
 * job (read-chunk.ts), one job at a time, in the order they came.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StagecoachError } from '../../contract/errors.js';
import { loadPipeline } from '../definition/load-pipeline.js';
import { preparePipeline } from '../prepare-pipeline.js';
import { readChunk, transferables } from './read-chunk.js';
import type { ChunkJob, WorkerReply, WorkerSetup } from './protocol.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;
const ready = loadPipeline(setup.pipelineFile).then(preparePipeline);
ready.catch(() => undefined); // the first job reports the failure

// One job at a time, in arrival order: a chunk's rows are read as a stream, and two
// interleaved reads would only share the same core.
let queue: Promise<void> = Promise.resolve();
port.on('message', (job: ChunkJob) => {
  queue = queue.then(async () => {
    let reply: WorkerReply;
    try {
      const { sources } = await ready;
      const pack = await readChunk(sources[job.source]!, job, setup);
      port.postMessage({ id: job.id, pack } satisfies WorkerReply, transferables(pack));
      return;
    } catch (err) {
      const e = err as Error;
      reply = {
        id: job.id,
        error: {
          code: err instanceof StagecoachError ? err.code : 'SOURCE_READ_FAILED',
          message: e.message,
          ...(err instanceof StagecoachError ? { context: { ...err.context } } : {}),
        },
      };
    }
    port.postMessage(reply);
  });
});
