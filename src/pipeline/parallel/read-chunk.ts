/**
 * Reads one range of a file (splittable.ts), maps and checks its rows, frames the clean ones when asked, and
 * packs the lot as columns (protocol.ts). Runs on a worker, or on the main thread when it would
 * otherwise wait (read-parallel.ts).
 */
import { encodeRecord } from '../batcher/index.js';
import { StagecoachError } from '../../contract/errors.js';
import { NumberColumnBuilder, Utf8Builder } from './number-column.js';
import { StringColumnBuilder } from './string-column.js';
import type { MapContext } from '../mapping/compile.js';
import { mapAndCheck, rejectUnreadable } from '../checks/index.js';
import type { PreparedSource } from '../prepare-pipeline.js';
import { isSourceRowError } from '../source/index.js';
import { newTally } from '../source/tally.js';
import type { ChunkJob, ChunkPack, WorkerSetup } from './protocol.js';
import { RefColumnsBuilder } from './ref-columns.js';
import { splittableFor, type RangeOutcome } from './splittable.js';

const ctx: MapContext = { reasons: null, refs: [], key: '' };

/** The pack's typed arrays, to hand over without copying. */
export function transferables(pack: ChunkPack): ArrayBuffer[] {
  const columns = [pack.rowHashes, pack.keys, pack.referenceIds, pack.contentHashes, pack.entityTypes, pack.refs.keys].map((c) => c.ends);
  return [pack.kinds, pack.lines, pack.byteOffsets, pack.frameBytes, pack.frames, pack.refs.rows, pack.refs.declarations, ...columns].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

/**
 * One range's rows as a pack, in file order.
 * @example const pack = await readChunk(source, { path, file, range: { start: 131136, end: 1179799, line: 1005, columns } }, { encode: 'json-seq', hashRows: true });
 *          pack.n // rows read; pack.outcome.endedAtRecord // whether the range ended at a record
 */
export async function readChunk(
  s: PreparedSource,
  job: Omit<ChunkJob, 'id' | 'source'>,
  mode: Omit<WorkerSetup, 'pipelineFile'>,
): Promise<ChunkPack> {
  const { encode } = mode;
  const outcome: RangeOutcome = { endLine: 0, endByte: 0, endedAtRecord: true };
  const splittable = splittableFor(s);
  if (!splittable) throw new StagecoachError('INTERNAL_ERROR', `source ${s.def.name} is ${s.def.format}: it cannot be read in ranges`);
  // Columns, not arrays of numbers or objects: see number-column.ts and ref-columns.ts.
  const kinds = new NumberColumnBuilder(Uint8Array);
  const lines = new NumberColumnBuilder(Uint32Array);
  const byteOffsets = new NumberColumnBuilder(Float64Array);
  const rowHashes = new StringColumnBuilder();
  const keys = new StringColumnBuilder();
  const referenceIds = new StringColumnBuilder();
  const extras: ChunkPack['extras'] = [];
  const refs = new RefColumnsBuilder();
  const finals: ChunkPack['finals'] = [];
  const frameBytes = new NumberColumnBuilder(Uint32Array);
  const contentHashes = new StringColumnBuilder();
  const entityTypes = new StringColumnBuilder();
  const frames = new Utf8Builder();
  const tally = newTally(s.def.name, job.file, s.def.format);
  const rows = splittable.read(job, job.range, outcome, mode.hashRows, tally);
  for await (const batch of rows) {
    for (const row of batch) {
      const i = kinds.length;
      const p = row.provenance;
      lines.push(p.line);
      byteOffsets.push(p.byteOffset);
      // A column nothing is pushed to reads '' for every row (stringAt): plan hashes no rows.
      if (mode.hashRows) rowHashes.push(p.hash);
      const v = isSourceRowError(row)
        ? { kind: 'final' as const, row: rejectUnreadable(row) }
        : mapAndCheck(s.mapping, row, ctx, encode !== undefined);
      if (v.kind === 'final') {
        kinds.push(1);
        finals.push({ i, row: v.row });
        keys.push('');
        referenceIds.push('');
        frameBytes.push(0);
        if (encode) {
          contentHashes.push('');
          entityTypes.push('');
        }
        continue;
      }
      kinds.push(0);
      keys.push(v.legacyKey);
      referenceIds.push(v.referenceId);
      if (v.refs.length > 0) refs.push(i, v.refs);
      if (v.mappingReasons !== null || !v.check.ok) {
        extras.push({
          i,
          ...(v.mappingReasons !== null ? { mappingReasons: v.mappingReasons } : {}),
          ...(!v.check.ok ? { checkReasons: v.check.reasons } : {}),
        });
      }
      if (encode && v.check.ok && v.mappingReasons === null) {
        const e = encodeRecord(v.check.record!, encode); // kept: mapAndCheck keeps records when framing
        frameBytes.push(frames.write(e.frame));
        contentHashes.push(e.contentHash);
        entityTypes.push(e.entityType ?? '');
      } else {
        frameBytes.push(0);
        if (encode) {
          contentHashes.push('');
          entityTypes.push('');
        }
      }
    }
  }
  return {
    n: kinds.length,
    kinds: kinds.build(),
    lines: lines.build(),
    byteOffsets: byteOffsets.build(),
    rowHashes: rowHashes.build(),
    keys: keys.build(),
    referenceIds: referenceIds.build(),
    extras,
    refs: refs.build(),
    finals,
    frameBytes: frameBytes.build(),
    contentHashes: contentHashes.build(),
    entityTypes: entityTypes.build(),
    frames: frames.build(),
    outcome,
    tally,
  };
}
