/**
 * Fixed-width sources on files: the thin wrapper that feeds a file's decoded text (any of the
 * pipeline's encodings, decoded-text.ts) to the pure core in core.ts.
 */
import type { SourceRow, SourceRowError } from '../../types.js';
import type { SourceEncoding } from '../encoding.js';
import type { FixedWidthOptions } from './options.js';
import { decodedChunks } from '../decoded-text.js';
import type { SourceTally } from '../tally.js';
import { fixedWidthBatches } from './core.js';

export interface FixedWidthFileOptions {
  source: string;
  path: string;
  file: string;
  encoding: SourceEncoding;
  fixedWidth: FixedWidthOptions;
  requiredColumns?: ReadonlySet<string>;
  signal?: AbortSignal;
  hashRows?: boolean;
  tally?: SourceTally;
}

/**
 * The records of a fixed-width file, in batches.
 * @example for await (const batch of readFixedWidthBatches({ source: 'klanten', path, file, encoding: 'windows-1252', fixedWidth })) …
 */
export function readFixedWidthBatches(opts: FixedWidthFileOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { path, encoding, signal, ...core } = opts;
  return fixedWidthBatches(decodedChunks(path, opts.file, encoding, signal), core);
}
