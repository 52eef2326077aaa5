/**
 * Text encodings of legacy exports. Sources parse the file's own bytes (so byte offsets in the
 * provenance are offsets in the file) and decode field text with these helpers: a BOM sniffer
 * for `auto`, a byte-pair swapper that turns UTF-16BE into UTF-16LE without moving any byte
 * offset, and the windows-1252 repair of text read as latin1 (bytes 0x80–0x9F, where the two
 * differ: € is 0x80). The repair table comes from iconv-lite, not from Node's TextDecoder, which
 * maps 0x80 to U+0080 on Node 20 (docs/dependencies.md).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { open } from 'node:fs/promises';
import { StagecoachError } from '../../contract/errors.js';
import iconv from 'iconv-lite';

/** The text encodings a source may declare (`encoding:` in a pipeline source). */
export const ENCODINGS = ['utf-8', 'utf-8-bom', 'windows-1252', 'utf-16le', 'utf-16be', 'auto'] as const;
export type SourceEncoding = (typeof ENCODINGS)[number];

/** The encodings the byte-level readers work in, plus the BOM length to skip. */
export interface ResolvedEncoding {
  /** Node Buffer encoding the parser decodes fields with. */
  node: 'utf8' | 'latin1' | 'utf16le';
  /** The declared or detected encoding. */
  name: Exclude<SourceEncoding, 'auto'>;
  /** Swap byte pairs first (UTF-16BE). */
  swap16: boolean;
  /** Text read as latin1 must be repaired to windows-1252. */
  repair1252: boolean;
  bomLength: number;
}

/** Bytes of a file's head looked at: its byte-order mark, and the NUL pattern of UTF-16 without one. */
const HEAD_BYTES = 4096;

/**
 * Decides the encoding from the declaration and the file's first bytes. `auto` takes a
 * byte-order mark, else the NUL pattern of UTF-16 text (below), else UTF-8. A one-byte or UTF-8
 * declaration of a file that is plainly UTF-16 (its byte-order mark, or that pattern) is refused:
 * read as declared, every other byte is a NUL and every line break counts twice.
 * @example resolveEncoding('auto', Buffer.from([0xff, 0xfe, 0x61, 0])) // utf-16le, bomLength 2
 */
export function resolveEncoding(declared: SourceEncoding, head: Buffer, file = 'the file'): ResolvedEncoding {
  const utf8Bom = head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
  const le = head.length >= 2 && head[0] === 0xff && head[1] === 0xfe;
  const be = head.length >= 2 && head[0] === 0xfe && head[1] === 0xff;
  const pattern = le || be || utf8Bom ? undefined : utf16Pattern(head);
  let name: ResolvedEncoding['name'];
  if (declared === 'auto') name = utf8Bom ? 'utf-8-bom' : le ? 'utf-16le' : be ? 'utf-16be' : (pattern ?? 'utf-8');
  else name = declared;
  if (name !== 'utf-16le' && name !== 'utf-16be' && (le || be || pattern)) {
    const looks = le || pattern === 'utf-16le' ? 'utf-16le' : 'utf-16be';
    const why =
      le || be
        ? `it starts with a ${looks.toUpperCase()} byte-order mark (${le ? 'FF FE' : 'FE FF'})`
        : `a NUL byte is every other byte of its first ${head.length.toLocaleString('en-US')} bytes`;
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${file} looks like ${looks.toUpperCase()}, declared ${declared}: ${why}; declare encoding: ${looks} (or auto)`,
      { file, field: 'encoding', value: declared },
    );
  }
  switch (name) {
    case 'utf-8':
    case 'utf-8-bom':
      return { node: 'utf8', name, swap16: false, repair1252: false, bomLength: utf8Bom ? 3 : 0 };
    case 'windows-1252':
      return { node: 'latin1', name, swap16: false, repair1252: true, bomLength: 0 };
    case 'utf-16le':
      return { node: 'utf16le', name, swap16: false, repair1252: false, bomLength: le ? 2 : 0 };
    case 'utf-16be':
      // After the swap, a BE BOM (FE FF) reads as the LE BOM (FF FE).
      return { node: 'utf16le', name, swap16: true, repair1252: false, bomLength: be ? 2 : 0 };
  }
}

/**
 * UTF-16 without a byte-order mark, told by where its NUL bytes fall: text of Latin letters,
 * digits and punctuation (an export) has a NUL in the high byte of nearly every code unit, and
 * a NUL almost never in the low one. Other binary data (an image, random bytes) has NULs on
 * both sides or few at all. Undefined when the head is too short to tell.
 * @example utf16Pattern(Buffer.from('nr;naam\r\n', 'utf16le')) // 'utf-16le'
 */
export function utf16Pattern(head: Buffer): 'utf-16le' | 'utf-16be' | undefined {
  const pairs = Math.floor(head.length / 2);
  if (pairs < 8) return undefined;
  let low = 0;
  let high = 0;
  for (let i = 0; i + 1 < head.length; i += 2) {
    if (head[i] === 0) low++;
    if (head[i + 1] === 0) high++;
  }
  if (high >= pairs / 2 && low <= pairs / 20) return 'utf-16le';
  if (low >= pairs / 2 && high <= pairs / 20) return 'utf-16be';
  return undefined;
}

/** Swaps each byte pair, carrying an odd byte over to the next chunk. */
export function swap16Stream(): Transform {
  let carry: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      let buf = carry ? Buffer.concat([carry, chunk]) : Buffer.from(chunk);
      carry = undefined;
      if (buf.length % 2 === 1) {
        carry = buf.subarray(buf.length - 1);
        buf = buf.subarray(0, buf.length - 1);
      }
      done(null, buf.swap16());
    },
    flush(done: TransformCallback) {
      done(null, carry);
    },
  });
}

const C1 = /[\u0080-\u009f]/;
const C1_GLOBAL = /[\u0080-\u009f]/g;
// windows-1252 for bytes 0x80–0x9F, decoded once by iconv-lite.
const REPAIR: string[] = Array.from(iconv.decode(Buffer.from(Array.from({ length: 32 }, (_, i) => 0x80 + i)), 'windows-1252'));

/**
 * Turns text decoded as latin1 into windows-1252 text (the two differ only in 0x80–0x9F).
 * @example repairWindows1252('\u0080 12') // '€ 12'
 */
export function repairWindows1252(latin1: string): string {
  if (!C1.test(latin1)) return latin1;
  return latin1.replace(C1_GLOBAL, (c) => REPAIR[c.charCodeAt(0) - 0x80]!);
}

/**
 * Reads a file's first bytes and resolves its encoding.
 * @example const enc = await detectEncoding('/…/klanten.csv', 'klanten.csv', 'auto');
 */
export async function detectEncoding(path: string, file: string, declared: SourceEncoding): Promise<ResolvedEncoding> {
  const head = Buffer.alloc(HEAD_BYTES);
  let n = 0;
  try {
    const fh = await open(path, 'r');
    try {
      n = (await fh.read(head, 0, HEAD_BYTES, 0)).bytesRead;
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  return resolveEncoding(declared, head.subarray(0, n), file);
}

// NUL, a byte-order mark inside the text, the replacement character a decoder puts for bytes it
// cannot decode; lone UTF-16 surrogates are tested apart (isWellFormed).
const TEXT_DEFECT = /[\u0000\ufeff\ufffd]/;

/**
 * What makes decoded text unfit to stage, or undefined: undecodable bytes (the file is not in
 * the declared encoding), a NUL byte (binary data, or UTF-16 read as a one-byte encoding), a
 * byte-order mark inside the text (files concatenated), a lone surrogate (broken UTF-16).
 * @example textDefect('M\ufffdller') // 'undecodable bytes (U+FFFD)'
 */
export function textDefect(text: string): string | undefined {
  const m = TEXT_DEFECT.exec(text);
  if (m) return m[0] === '\u0000' ? 'a NUL byte' : m[0] === '\ufeff' ? 'a byte-order mark (U+FEFF)' : 'undecodable bytes (U+FFFD)';
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) return 'a lone UTF-16 surrogate';
  return undefined;
}

/** The advice that goes with a text defect, given the encoding the file was read in. */
export function textDefectHint(defect: string, encoding: string): string {
  if (defect.startsWith('undecodable'))
    return `the file is not valid ${encoding}: declare its encoding, for example encoding: windows-1252`;
  if (defect === 'a NUL byte') return 'binary data, or a UTF-16 file without a byte-order mark: declare encoding: utf-16le';
  if (defect.startsWith('a byte-order mark')) return 'two exports glued together? remove the mark';
  return 'broken UTF-16 text';
}
