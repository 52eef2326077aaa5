/**
 * How far a reading is through a pipeline's sources, for progress lines: the share of the source
 * bytes before the last row read, and the time left it implies. A run and `plan` both use it.
 */
import { stat } from 'node:fs/promises';
import type { FrontRow } from '../types.js';
import { listSourceFiles } from './index.js';

/**
 * How far the reading is through the sources: the share of their bytes before the last row read
 * (0..1), once their sizes are known. Shared by a run's progress and `plan`'s. Takes only the
 * pipeline's folder and sources (the definition module builds on this folder, not the reverse).
 */
export function sourcePosition(def: { dir: string; sources: readonly Parameters<typeof listSourceFiles>[1][] }) {
  const fileStart = new Map<string, number>();
  let totalBytes = 0;
  let position = 0;
  return {
    /** Learns the source files' sizes (not fatal when it cannot: the share stays unknown). */
    async init() {
      try {
        for (const s of def.sources) {
          for (const f of await listSourceFiles(def.dir, s)) {
            if (fileStart.has(f.file)) continue;
            fileStart.set(f.file, totalBytes);
            totalBytes += (await stat(f.path)).size;
          }
        }
      } catch {
        totalBytes = 0;
      }
    },
    at(row: FrontRow) {
      const start = fileStart.get(row.row.provenance.file);
      if (start !== undefined) position = start + row.row.provenance.byteOffset;
    },
    fraction(): number | undefined {
      return totalBytes > 0 ? Math.min(1, position / totalBytes) : undefined;
    },
  };
}

/** Estimated time left from the share done so far (undefined before it means anything). */
export function etaFrom(elapsedMs: number, fraction: number | undefined): number | undefined {
  return fraction !== undefined && fraction > 0.001 ? Math.round((elapsedMs * (1 - fraction)) / fraction) : undefined;
}
