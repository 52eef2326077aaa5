/**
 * The file side shared by the text formats that read whole files in order (JSON, JSON Lines,
 * fixed-width): resolve the file's encoding from its first bytes (encoding.ts), read its bytes
 * (file-chunks.ts) and yield decoded text pieces. Each format's pure core takes these pieces;
 * only these modules and the formats' `stream.ts` wrappers touch the file system.
 */
import { StringDecoder } from 'node:string_decoder';
import { StagecoachError } from '../../contract/errors.js';
import { detectEncoding, repairWindows1252, type ResolvedEncoding, type SourceEncoding } from './encoding.js';
import { fileChunks } from './file-chunks.js';

/** A piece of decoded text and the encoding it was decoded with. */
export interface DecodedChunk {
  text: string;
  enc: ResolvedEncoding;
}

/** The encoding a core assumes when given plain strings (tests): UTF-8 without a byte-order mark. */
export const UTF8: ResolvedEncoding = { name: 'utf-8', node: 'utf8', bomLength: 0, swap16: false, repair1252: false };

/**
 * Opens a file and yields decoded text chunks with the encoding resolved from its first bytes.
 * @example for await (const { text } of decodedChunks(path, 'samples/crm/bedrijven.json', 'auto')) …
 */
export async function* decodedChunks(
  path: string,
  file: string,
  declared: SourceEncoding,
  signal?: AbortSignal,
): AsyncGenerator<DecodedChunk> {
  const enc = await detectEncoding(path, file, declared);
  const decoder = new StringDecoder(enc.node);
  try {
    for await (const chunk of fileChunks(path, file, enc, { readBytes: 256 * 1024, range: { start: enc.bomLength }, signal })) {
      const text = decoder.write(chunk);
      if (text) yield { text: enc.repair1252 ? repairWindows1252(text) : text, enc };
    }
    const rest = decoder.end();
    if (rest) yield { text: rest, enc };
  } catch (err) {
    if (err instanceof StagecoachError) throw err; // ABORTED
    throw new StagecoachError('SOURCE_READ_FAILED', `Cannot read ${file}: ${(err as Error).message}`, { file }, { cause: err });
  }
}

/** Bytes a piece of decoded text took in the file. */
/**
 * The first chunk of a file without its byte-order mark, and the byte offset in the file of its
 * first character (past a BOM the decoder kept as U+FEFF, or one it had already skipped).
 */
export function afterBom(text: string, enc: ResolvedEncoding): { text: string; byteOffset: number } {
  if (text.charCodeAt(0) !== 0xfeff) return { text, byteOffset: enc.bomLength };
  return { text: text.slice(1), byteOffset: enc.bomLength + byteLength('\ufeff', enc) };
}

export function byteLength(text: string, enc: ResolvedEncoding): number {
  if (enc.node === 'utf8') return Buffer.byteLength(text, 'utf8');
  return enc.node === 'utf16le' ? text.length * 2 : text.length;
}

/** Strings as decoded chunks (UTF-8): how tests and other in-memory callers feed a core. */
export function* textChunks(...texts: string[]): Generator<DecodedChunk> {
  for (const text of texts) yield { text, enc: UTF8 };
}
