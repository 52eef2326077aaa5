/**
 * Reading a corrections file: the rows a previous run refused, fixed by the engineer, in their
 * original columns. Columns whose name starts with `_` are metadata and never reach the
 * mapping: `_source` names the pipeline source the row belongs to (needed when the pipeline has
 * several), and the rest (`_file`, `_line`, `_field`, `_code`, `_message`, `_stage`…) are the
 * error columns the report wrote. CSV (comma or semicolon, UTF-8, header) or JSON Lines
 * (`.jsonl`, `.ndjson`).
 */
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { SourceRow, SourceRowError } from '../types.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import { displayPath } from '../definition/load-pipeline.js';
import { readCsvFile } from '../source/csv/index.js';
import { readJsonLinesFile } from '../source/json/stream.js';
import { StagecoachError } from '../../contract/errors.js';

export interface CorrectionsIndex {
  file: string;
  rows(): AsyncGenerator<{ row: SourceRow | SourceRowError; sourceName: string }>;
  /** Index of the corrections file in the run's file list (added on first use). */
  fileIndex(files: string[]): number;
}

export async function readCorrections(path: string, def: PipelineDefinition, signal?: AbortSignal): Promise<CorrectionsIndex> {
  const abs = resolve(path);
  const file = displayPath(abs);
  const jsonl = /\.(jsonl|ndjson)$/i.test(abs);
  let delimiter = ',';
  try {
    const fh = await open(abs, 'r');
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const first = buf.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '';
      if (!jsonl && first.includes(';') && !first.includes(',')) delimiter = ';';
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `Cannot read the corrections file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { file },
    );
  }
  const names = new Set(def.sources.map((s) => s.name));
  const only = def.sources.length === 1 ? def.sources[0]!.name : undefined;
  let index = -1;
  return {
    file,
    fileIndex(files) {
      if (index < 0) index = files.push(file) - 1;
      return index;
    },
    async *rows() {
      const common = { source: '_corrections', path: abs, file, encoding: 'auto' as const, ...(signal ? { signal } : {}) };
      const reader = jsonl ? readJsonLinesFile(common) : readCsvFile({ ...common, csv: { delimiter, quote: '"', header: true } });
      for await (const row of reader) {
        if ('code' in row) {
          yield { row: { ...row, source: only ?? '_corrections' }, sourceName: only ?? def.sources[0]!.name };
          continue;
        }
        const sourceName = String(row.values._source ?? only ?? '');
        if (!names.has(sourceName)) {
          const error: SourceRowError = {
            source: '_corrections',
            provenance: row.provenance,
            code: 'SOURCE_ROW_INVALID',
            message: `${file}:${row.provenance.line}: _source must name a source of ${def.file} (${[...names].join(', ')}), got ${JSON.stringify(row.values._source ?? '')}`,
          };
          yield { row: error, sourceName: def.sources[0]!.name };
          continue;
        }
        const values: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(row.values)) if (!k.startsWith('_')) values[k] = v;
        yield { row: { source: sourceName, values, provenance: row.provenance }, sourceName };
      }
    },
  };
}
