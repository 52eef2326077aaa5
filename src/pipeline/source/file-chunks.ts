/**
 * The file side of every core fed with bytes: a file, or a byte range of it, read in chunks of
 * a given size, UTF-16BE swapped to LE on the way (encoding.ts), and stopping as `ABORTED` when
 * the run's signal fires. The stream is closed as soon as the reader stops taking chunks (a
 * caller that has what it wants). Any other read error is handed on as it is: the core that is
 * fed decides what it becomes (a row error where the rows stopped, or a failed read).
 */
import { createReadStream } from 'node:fs';
import { StagecoachError } from '../../contract/errors.js';
import { swap16Stream, type ResolvedEncoding } from './encoding.js';

export interface ChunkRange {
  /** First byte to read. */
  start: number;
  /** Exclusive end byte; the file's end when absent. */
  end?: number | undefined;
}

/**
 * The bytes of `path` (`file` as messages show it), `readBytes` at a time.
 * @example for await (const chunk of fileChunks(path, 'klanten.csv', enc, { readBytes: 16 * 1024 })) core.push(chunk);
 */
export async function* fileChunks(
  path: string,
  file: string,
  enc: ResolvedEncoding,
  opts: { readBytes: number; range?: ChunkRange | undefined; signal?: AbortSignal | undefined },
): AsyncGenerator<Buffer> {
  const { range } = opts;
  const input = createReadStream(path, {
    highWaterMark: opts.readBytes,
    signal: opts.signal,
    ...(range ? { start: range.start, ...(range.end !== undefined ? { end: range.end - 1 } : {}) } : {}),
  });
  const body: AsyncIterable<Buffer> = enc.swap16 ? input.pipe(swap16Stream()) : input;
  try {
    for await (const chunk of body) yield chunk;
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw new StagecoachError('ABORTED', 'Reading stopped', { file }, { cause: err });
    throw err;
  } finally {
    input.destroy();
  }
}
