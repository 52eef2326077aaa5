/**
 * Thin stream wrapper over the framing core: turns any async iterable of byte chunks (a Node
 * Readable, an undici body, a fastify request) into an async iterator of frames. Frames of one
 * chunk are handed out before the next chunk is read, so the source is paused while the
 * consumer works: backpressure without a queue.
 */
import { createFrameDecoder, type DecoderOptions, type Frame, type StreamFormat } from './frames.js';

export interface FrameStreamOptions extends DecoderOptions {
  /** Called with the byte count after every chunk, e.g. to enforce a per-request byte limit. */
  onBytes?: (total: number) => void;
}

export async function* decodeFrames(
  source: AsyncIterable<Uint8Array | string>,
  format: StreamFormat,
  options: FrameStreamOptions = {},
): AsyncGenerator<Frame> {
  let batch: Frame[] = [];
  const decoder = createFrameDecoder(format, (f) => batch.push(f), options);
  for await (const chunk of source) {
    decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    options.onBytes?.(decoder.bytesRead);
    if (batch.length) {
      const out = batch;
      batch = [];
      yield* out;
    }
  }
  decoder.end();
  yield* batch;
}
