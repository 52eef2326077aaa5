/**
 * Reading one record back at its provenance (file + byte offset), the part every format shares:
 * the row type, the file's text encoding, and the text from a byte on. Each format's `rowAt`
 * (in its folder, registered in index.ts) builds on these; the report and the corrections files
 * read a refused row exactly as the legacy system wrote it, reading only that row.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import iconv from 'iconv-lite';
import type { SourceEncoding } from './encoding.js';

/** A legacy row as its columns and values, both in file order. */
export interface RawRow {
  columns: string[];
  values: Record<string, unknown>;
  /** The number of fields the record has when it may differ from its columns' (a CSV row refused for it). */
  width?: number;
  /**
   * What of a refused record does not fit its columns (cells beyond the header, a note of the
   * cells missing, a fixed-width line of another length): kept in the corrections file's
   * `_extra` column so the error columns stay in place and the row stays refused until fixed.
   */
  extra?: string;
}

/** Longest row text re-read: a longer row is shown cut, as text. */
export const MAX_ROW_CHARS = 1024 * 1024;

/** Decides the text encoding of a file: the declared one, or its byte-order mark under `auto`. */
export async function encodingOf(file: string, declared: SourceEncoding): Promise<{ encoding: string; bomBytes: number }> {
  if (declared !== 'auto' && declared !== 'utf-8-bom') return { encoding: declared, bomBytes: 0 };
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(3);
    const { bytesRead } = await fh.read(head, 0, 3, 0);
    const b = head.subarray(0, bytesRead);
    if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { encoding: 'utf-8', bomBytes: 3 };
    if (b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', bomBytes: 2 };
    if (b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', bomBytes: 2 };
    return { encoding: 'utf-8', bomBytes: 0 };
  } finally {
    await fh.close();
  }
}

/** The decoded text of `file` from byte `start` on. */
export function textFrom(file: string, encoding: string, start: number): NodeJS.ReadableStream {
  const bytes = createReadStream(file, { start });
  const text = iconv.decodeStream(encoding);
  // pipe() does not pass an error on: a file gone since (ENOENT) would be an unhandled error
  // event that ends the process; passed on, the reader's loop throws it where it is caught.
  bytes.on('error', (err) => text.emit('error', err));
  return bytes.pipe(text);
}

/** The line that starts at byte `start` (its line break left off, cut at MAX_ROW_CHARS). */
export async function lineAt(file: string, encoding: string, start: number): Promise<string> {
  return (await lineWithCut(file, encoding, start)).text;
}

/**
 * The line that starts at byte `start`, its line break left off; `cut`: it was longer than
 * MAX_ROW_CHARS and `text` holds only its first MAX_ROW_CHARS characters (a caller shows that,
 * so that a corrections file never passes a part of a row for the whole of it).
 */
export async function lineWithCut(file: string, encoding: string, start: number): Promise<{ text: string; cut: boolean }> {
  const stream = textFrom(file, encoding, start);
  let text = '';
  let cut = false;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const nl = chunk.search(/[\r\n]/);
      text += nl >= 0 ? chunk.slice(0, nl) : chunk;
      if (text.length > MAX_ROW_CHARS) {
        cut = true;
        break;
      }
      if (nl >= 0) break;
    }
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
  return { text: text.slice(0, MAX_ROW_CHARS), cut };
}

/** The note a re-read row carries when only part of it could be shown. */
export function cutNote(what: string): string {
  return `${what}; only its first ${MAX_ROW_CHARS.toLocaleString('en-US')} characters are shown here: fix the row in the export itself`;
}
