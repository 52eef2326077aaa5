/** json-seq and JSON Lines codec, shared by the client and the service. */
export {
  createFrameDecoder,
  encodeFrame,
  type Frame,
  type FrameDecoder,
  type InvalidReason,
  type StreamFormat,
  type DecoderOptions,
} from './frames.js';
export { decodeFrames, type FrameStreamOptions } from './frame-stream.js';
