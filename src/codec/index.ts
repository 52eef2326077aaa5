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
export { stringAt, StringColumnBuilder, type StringColumn } from './string-column.js';
export { NumberColumnBuilder, Utf8Builder } from './number-column.js';
