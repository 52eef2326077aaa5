/**
 * Sources: the files a pipeline source names (a glob, read in sorted order) and one reader per
 * format. Each yields `SourceRow`s and `SourceRowError`s with provenance, streamed.
 */
import { resolve } from 'node:path';
import { glob } from 'tinyglobby';
import { StagecoachError } from '../../contract/errors.js';
import type { SourceRow, SourceRowError } from '../types.js';
import type { SourceDefinition } from '../definition/load-pipeline.js';
import { displayPath } from '../definition/load-pipeline.js';
import { readCsvBatches, type CsvRange } from './csv/index.js';
import type { SourceTally } from './tally.js';
import { readJsonArrayBatches, readJsonLinesBatches } from './source-json.js';

export interface SourceFile {
  /** Absolute path. */
  path: string;
  /** Path for provenance and messages (relative to the working folder when below it). */
  file: string;
}

/**
 * The files of a source, sorted; a glob that matches nothing is a configuration error.
 * @example await listSourceFiles(def.dir, def.sources[0]) // [{ path: '/…/samples/crm/klanten.csv', file: 'samples/crm/klanten.csv' }]
 */
export async function listSourceFiles(dir: string, source: Pick<SourceDefinition, 'name' | 'path'>): Promise<SourceFile[]> {
  const paths = await glob(source.path, { cwd: dir, absolute: true, onlyFiles: true, expandDirectories: false });
  if (paths.length === 0) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `source ${source.name}: ${JSON.stringify(source.path)} matches no file (relative to ${displayPath(dir) || '.'})`,
      { field: 'path', value: source.path },
    );
  }
  return paths.sort().map((p) => ({ path: resolve(p), file: displayPath(p) }));
}

/** Reads one file of a source in its format, row by row. */
export async function* readSourceFile(
  source: SourceDefinition,
  file: SourceFile,
  options: { requiredColumns?: ReadonlySet<string>; signal?: AbortSignal | undefined; hashRows?: boolean; tally?: SourceTally } = {},
): AsyncGenerator<SourceRow | SourceRowError> {
  for await (const batch of readSourceBatches(source, file, options)) yield* batch;
}

/** Reads one file of a source in batches of rows (one await per batch: the hot path). */
export function readSourceBatches(
  source: SourceDefinition,
  file: SourceFile,
  options: {
    requiredColumns?: ReadonlySet<string>;
    signal?: AbortSignal | undefined;
    range?: CsvRange | undefined;
    hashRows?: boolean | undefined;
    /** Filled in as the file is read (CSV): its two-way count, tally.ts. */
    tally?: SourceTally | undefined;
  } = {},
): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const common = {
    source: source.name,
    path: file.path,
    file: file.file,
    encoding: source.encoding,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.hashRows === false ? { hashRows: false } : {}),
  };
  switch (source.format) {
    case 'csv':
      return readCsvBatches({
        ...common,
        csv: source.csv,
        ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
        ...(options.range ? { range: options.range } : {}),
        ...(options.tally ? { tally: options.tally } : {}),
      });
    case 'json':
      return readJsonArrayBatches({ ...common, arrayPath: source.json.path });
    case 'jsonl':
      return readJsonLinesBatches(common);
  }
}

export function isSourceRowError(row: SourceRow | SourceRowError): row is SourceRowError {
  return (row as SourceRowError).code !== undefined;
}
