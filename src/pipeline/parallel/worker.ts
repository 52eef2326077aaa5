/**
 * A parallel reader's worker (see protocol.ts): loads the pipeline, then reads, maps, checks
 * and frames one CSV byte range per job, one job at a time, in the order they came.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StagecoachError } from '../../contract/errors.js';
import { encodeRecord } from '../batcher/index.js';
import type { MapContext } from '../mapping/compile.js';
import { loadPipeline } from '../definition/load-pipeline.js';
import { mapAndCheck, preparePipeline, rejectUnreadable } from '../read-pipeline.js';
import { isSourceRowError } from '../source/index.js';
import { readCsvBatches, type CsvReadOutcome } from '../source/source-csv.js';
import type { ChunkJob, ChunkPack, WorkerReply, WorkerSetup } from './protocol.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;
const ready = loadPipeline(setup.pipelineFile).then(preparePipeline);
const ctx: MapContext = { reasons: null, refs: [], key: '' };

async function read(job: ChunkJob): Promise<ChunkPack> {
  const { sources } = await ready;
  const s = sources[job.source]!;
  const outcome: CsvReadOutcome = { endLine: 0, endByte: 0, endedAtRecord: true };
  const kinds: number[] = [];
  const lines: number[] = [];
  const byteOffsets: number[] = [];
  const rowHashes: string[] = [];
  const keys: string[] = [];
  const referenceIds: string[] = [];
  const extras: ChunkPack['extras'] = [];
  const finals: ChunkPack['finals'] = [];
  const frameBytes: number[] = [];
  const contentHashes: string[] = [];
  const entityTypes: (string | undefined)[] = [];
  const frames: string[] = [];
  let total = 0;
  const rows = readCsvBatches({ source: s.def.name, path: job.path, file: job.file, encoding: s.def.encoding, csv: s.def.csv, requiredColumns: s.mapping.columns, range: job.range, outcome });
  for await (const batch of rows) {
    for (const row of batch) {
      const i = kinds.length;
      const p = row.provenance;
      lines.push(p.line);
      byteOffsets.push(p.byteOffset);
      rowHashes.push(p.hash);
      const v = isSourceRowError(row) ? undefined : mapAndCheck(s.mapping, row, ctx);
      if (v === undefined || v.kind === 'final') {
        kinds.push(1);
        finals.push({ i, row: v ? v.row : rejectUnreadable(row as Parameters<typeof rejectUnreadable>[0]) });
        keys.push('');
        referenceIds.push('');
        frameBytes.push(0);
        contentHashes.push('');
        entityTypes.push(undefined);
        continue;
      }
      kinds.push(0);
      keys.push(v.legacyKey);
      referenceIds.push(v.referenceId);
      if (v.mappingReasons !== null || v.refs.length > 0 || !v.check.ok) {
        extras.push({
          i,
          ...(v.mappingReasons !== null ? { mappingReasons: v.mappingReasons } : {}),
          ...(v.refs.length > 0 ? { refs: v.refs } : {}),
          ...(!v.check.ok ? { checkReasons: v.check.reasons } : {}),
        });
      }
      if (setup.encode && v.check.ok && v.mappingReasons === null) {
        const e = encodeRecord(v.check.record, setup.encode);
        frames.push(e.frame);
        frameBytes.push(e.bytes);
        contentHashes.push(e.contentHash);
        entityTypes.push(e.entityType);
        total += e.bytes;
      } else {
        frameBytes.push(0);
        contentHashes.push('');
        entityTypes.push(undefined);
      }
    }
  }
  // Its own memory (not the shared pool's) so that it can be transferred.
  const out = new Uint8Array(total);
  const view = Buffer.from(out.buffer, 0, total);
  let at = 0;
  for (const f of frames) at += view.write(f, at);
  return {
    n: kinds.length,
    kinds: Uint8Array.from(kinds),
    lines: Uint32Array.from(lines),
    byteOffsets: Float64Array.from(byteOffsets),
    rowHashes,
    keys,
    referenceIds,
    extras,
    finals,
    frameBytes: Uint32Array.from(frameBytes),
    contentHashes,
    entityTypes,
    frames: out,
    outcome,
  };
}

// One job at a time, in arrival order: a chunk's rows are read as a stream, and two
// interleaved reads would only share the same core.
let queue: Promise<void> = Promise.resolve();
port.on('message', (job: ChunkJob) => {
  queue = queue.then(async () => {
    let reply: WorkerReply;
    try {
      const pack = await read(job);
      const moved = [pack.kinds, pack.lines, pack.byteOffsets, pack.frameBytes, pack.frames].map((a) => a.buffer as ArrayBuffer);
      port.postMessage({ id: job.id, pack } satisfies WorkerReply, moved);
      return;
    } catch (err) {
      const e = err as Error;
      reply = { id: job.id, error: { code: err instanceof StagecoachError ? err.code : 'SOURCE_READ_FAILED', message: e.message, ...(err instanceof StagecoachError ? { context: { ...err.context } } : {}) } };
    }
    port.postMessage(reply);
  });
});
ready.catch(() => undefined); // the first job reports the failure
