/**
 * JSON cores, pure (decoded text in, rows and row errors out, no I/O): a top-level array of
 * objects, an array at a dotted path inside an object (`export.bedrijven`), and JSON Lines.
 * The file side is `stream.ts`; tests feed strings (`textChunks`).
 *
 * Arrays go through stream-json's tokenizer, fed by hand in pieces cut just before each `{`.
 * The tokenizer emits a token as soon as its first character arrives, so the piece in which an
 * element's `startObject` appears is the piece that starts with that element's `{`: the line
 * and byte offset of every element are exact (the position of its opening brace). An element's
 * hash is the sha256 of its JSON text as re-serialised (`JSON.stringify`), so whitespace and
 * key spacing do not count as a change. A syntax error ends the file: the error is reported
 * where the tokenizer stopped.
 *
 * Every array is also counted by a scanner of its own (count-items.ts) into the file's tally: a
 * text that ends inside the array (an export cut off half way) or an array with no items is a
 * read failure (SOURCE_READ_FAILED at file:line, `tally.truncated`), not a short success.
 *
 * JSON Lines are split on line feeds and parsed line by line with `JSON.parse`, so a broken
 * line is a row error and the file goes on; a line's hash is the sha256 of its text. Physical
 * and blank lines are counted apart (PhysicalLineCounter); a last line without a line feed that
 * does not parse is an export cut off inside a value, and a file with no object no export.
 */
import { jsonParser } from 'stream-json/core/parser.js';
import Assembler from 'stream-json/assembler.js';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import type { SourceRow, SourceRowError } from '../../types.js';
import { StagecoachError } from '../../../contract/errors.js';
import { textDefect, textDefectHint, type ResolvedEncoding } from '../encoding.js';
import { sha256Hex } from '../row-hash.js';
import { afterBom, byteLength, type DecodedChunk } from '../decoded-text.js';
import { isBlankLine, newTally, PhysicalLineCounter, type SourceTally } from '../tally.js';
import { JsonItemCounter, type JsonCut } from './count-items.js';

export interface JsonCoreOptions {
  source: string;
  /** The file as shown in provenance and messages. */
  file: string;
  /** Dotted path of the array inside the top-level object; none: the document is the array. */
  arrayPath?: string | undefined;
  /** Hash each row's text into its provenance (default true); `plan`, which keeps no ledger, skips it. */
  hashRows?: boolean;
  /** Filled in as the text is read; final when the batches end. */
  tally?: SourceTally;
}

type Chunks = Iterable<DecodedChunk> | AsyncIterable<DecodedChunk>;

const RAW_LIMIT = 200;
/** Deepest nesting of an element: deeper ones are refused (re-serialising them would overflow the stack). */
export const MAX_JSON_DEPTH = 100;
/** Longest JSON Lines line held in memory; a longer one is a row error, read past without holding it. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

// Escaped or raw NUL, byte-order mark, replacement character or surrogate in JSON text: a cheap
// test before the value itself is searched (textIn).
const DEFECT_HINT = /[\u0000\ufeff\ufffd]|\\u(?:0000|feff|fffd|d[89a-f])/i;

/** The first string (key or value) of a parsed JSON value with a text defect: its path and the defect. */
function textIn(value: unknown, path: string): { path: string; defect: string } | undefined {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [v, p] = stack.pop()!;
    if (typeof v === 'string') {
      const defect = textDefect(v);
      if (defect) return { path: p, defect };
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const defect = textDefect(k);
        if (defect) return { path: p ? `${p}.${k}` : k, defect };
        stack.push([child, p ? `${p}.${k}` : k]);
      }
    }
  }
  return undefined;
}

function defectMessage(file: string, line: number, found: { path: string; defect: string }, enc: ResolvedEncoding | undefined): string {
  const name = enc?.name ?? 'utf-8';
  return `${file}:${line}: field ${JSON.stringify(found.path)} holds ${found.defect}, expected text in ${name}; ${textDefectHint(found.defect, name)}`;
}

const hashText = sha256Hex;

interface Token {
  name: string;
  value?: unknown;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * The objects of a JSON array (at the top level, or at `arrayPath`), in batches (the rows each
 * piece of input completes).
 * @example for await (const batch of jsonArrayBatches(textChunks('[{"id":1},'), { source: 'bedrijven', file: 'b.json' })) …
 *          // [{ values: { id: 1 }, … }], then SOURCE_READ_FAILED 'b.json:1: the file ends inside the array after 1 complete element …'
 */
export async function* jsonArrayBatches(chunks: Chunks, opts: JsonCoreOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { source, file } = opts;
  const tally = opts.tally ?? newTally(source, file, 'json');
  const lines = new PhysicalLineCounter();
  const hashRows = opts.hashRows !== false;
  const target = opts.arrayPath ? opts.arrayPath.split('.') : [];
  const tokenizer = jsonParser({ streamValues: false });
  const counter = new JsonItemCounter(target);
  const failed = (at: number, offset: number, message: string, why: string): SourceRowError[] => {
    tally.truncated = why;
    return [{ source, provenance: { file, line: at, byteOffset: offset, hash: '' }, code: 'SOURCE_READ_FAILED', message }];
  };

  // Where the tokenizer is in the document: one frame per open container.
  const frames: { array: boolean; key: string | null; target: boolean }[] = [];
  let targetSeen = false;
  let asm: Assembler | null = null;
  let elementStart = { line: 0, byteOffset: 0 };
  let line = 1;
  let byteOffset = 0;
  let pieceStart = { line: 1, byteOffset: 0 };
  let bomBytes = -1;
  const out: (SourceRow | SourceRowError)[] = [];

  const inTarget = () => frames.length > 0 && frames[frames.length - 1]!.target;
  const pathMatches = () => {
    if (frames.length !== target.length) return false;
    for (let i = 0; i < target.length; i++) if (frames[i]!.array || frames[i]!.key !== target[i]) return false;
    return true;
  };

  let currentEnc: ResolvedEncoding | undefined;
  const finishElement = (value: unknown) => {
    const provenance = { file, line: elementStart.line, byteOffset: elementStart.byteOffset, hash: '' };
    const text = JSON.stringify(value);
    if (hashRows) provenance.hash = hashText(text);
    const found = DEFECT_HINT.test(text) ? textIn(value, '') : undefined;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      out.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${provenance.line}: expected an object in the array, got ${text.slice(0, 60)}`,
        raw: text.slice(0, RAW_LIMIT),
      });
    } else if (found) {
      out.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: defectMessage(file, provenance.line, found, currentEnc),
        raw: text.slice(0, RAW_LIMIT),
      });
    } else {
      out.push({ source, values: value as Record<string, unknown>, provenance });
    }
  };

  // An element nested deeper than MAX_JSON_DEPTH is not assembled: its tokens are counted
  // until it closes, and it becomes a row error; the array goes on.
  let depth = 0;
  let tooDeep = false;
  const consume = (t: Token) => {
    if (asm) {
      if (t.name === 'startObject' || t.name === 'startArray') depth++;
      else if (t.name === 'endObject' || t.name === 'endArray') depth--;
      if (tooDeep || depth > MAX_JSON_DEPTH) {
        tooDeep = true;
        if (depth === 0) {
          asm = null;
          tooDeep = false;
          out.push({
            source,
            provenance: { file, line: elementStart.line, byteOffset: elementStart.byteOffset, hash: '' },
            code: 'SOURCE_ROW_INVALID',
            message: `${file}:${elementStart.line}: the element is nested deeper than ${MAX_JSON_DEPTH} levels, expected a flat record`,
          });
        }
        return;
      }
      asm.consume(t as never);
      if (asm.done) {
        const value = asm.current;
        asm = null;
        finishElement(value);
      }
      return;
    }
    switch (t.name) {
      case 'startObject':
        if (inTarget()) break; // an element starts: handled below
        frames.push({ array: false, key: null, target: false });
        return;
      case 'startArray': {
        if (inTarget()) break;
        const isTarget = !targetSeen && pathMatches();
        frames.push({ array: true, key: null, target: isTarget });
        if (isTarget) targetSeen = true;
        return;
      }
      case 'endObject':
      case 'endArray':
        frames.pop();
        return;
      case 'keyValue':
        frames[frames.length - 1]!.key = t.value as string;
        return;
      default:
        if (!inTarget()) return;
    }
    // A value inside the target array: an element.
    elementStart = pieceStart;
    depth = t.name === 'startObject' || t.name === 'startArray' ? 1 : 0;
    asm = new Assembler();
    asm.consume(t as never);
    if (asm.done) {
      const value = asm.current;
      asm = null;
      finishElement(value);
    }
  };

  const feed = (piece: string, enc: ResolvedEncoding) => {
    pieceStart = { line, byteOffset };
    counter.push(piece);
    lines.push(piece);
    const tokens = tokenizer(piece) as unknown;
    if (isMany(tokens)) for (const t of getManyValues(tokens) as Token[]) consume(t);
    else if (tokens !== none && tokens !== undefined) consume(tokens as Token);
    line += countLines(piece);
    byteOffset += byteLength(piece, enc);
  };

  try {
    for await (const { text: chunk, enc } of chunks) {
      currentEnc = enc;
      if (bomBytes < 0) {
        bomBytes = enc.bomLength;
        byteOffset = bomBytes;
      }
      let text = chunk;
      if (text.charCodeAt(0) === 0xfeff && line === 1 && byteOffset === bomBytes) {
        byteOffset += byteLength('\ufeff', enc);
        text = text.slice(1);
      }
      // Cut before each "{" so an element's start is the start of a piece (see module comment).
      let from = 0;
      for (let i = text.indexOf('{', 1); i !== -1; i = text.indexOf('{', i + 1)) {
        feed(text.slice(from, i), enc);
        from = i;
        if (out.length > 0) yield counted(tally, out.splice(0));
      }
      feed(text.slice(from), enc);
      if (out.length > 0) yield counted(tally, out.splice(0));
    }
    lines.end(tally);
    const cut = counter.end();
    tally.items = counter.items;
    if (cut) {
      yield failed(line, byteOffset, cutMessage(file, cut, opts.arrayPath), cutWhy(cut));
      return;
    }
    if (!counter.sawContent) {
      const what =
        tally.physicalLines === 0
          ? 'the file is empty'
          : `the file holds ${tally.physicalLines} blank line${tally.physicalLines === 1 ? '' : 's'} and no JSON`;
      yield failed(
        1,
        0,
        `${file}:1: ${what}, expected ${opts.arrayPath ? `an object holding an array at ${opts.arrayPath}` : 'a JSON array'}; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
        `${what}: no rows`,
      );
      return;
    }
    const tail = tokenizer(none as never) as unknown;
    if (isMany(tail)) for (const t of getManyValues(tail) as Token[]) consume(t);
    if (out.length > 0) yield counted(tally, out.splice(0));
    if (!targetSeen) {
      const what =
        byteOffset <= Math.max(bomBytes, 0)
          ? 'the file is empty'
          : opts.arrayPath
            ? `no array at ${opts.arrayPath}`
            : 'no array at the top level';
      yield failed(
        1,
        0,
        opts.arrayPath
          ? `${file}:1: ${what}, expected an object holding an array at ${opts.arrayPath}`
          : `${file}:1: ${what}, expected a JSON array at the top level`,
        `${what}: no rows`,
      );
    } else if (tally.rowsRead === 0) {
      yield failed(
        1,
        0,
        `${file}:1: the array${opts.arrayPath ? ` at ${opts.arrayPath}` : ''} is empty, expected at least one record; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
        'the array is empty: no rows',
      );
    }
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    if (out.length > 0) yield counted(tally, out.splice(0));
    lines.end(tally);
    tally.items = counter.items;
    yield failed(
      line,
      byteOffset,
      `${file}:${line}: the rest of the file cannot be read: ${(err as Error).message}`,
      `the rest of the file cannot be read from line ${line}: ${(err as Error).message}`,
    );
  }
}

/** Counts what a batch holds into the tally (rows and row errors; a file's read failure is not a row). */
function counted(tally: SourceTally, batch: (SourceRow | SourceRowError)[], linesEach = 0): (SourceRow | SourceRowError)[] {
  for (const r of batch) {
    if ('code' in r) {
      if (r.code === 'SOURCE_READ_FAILED') continue;
      tally.rowErrors++;
    }
    tally.rowsRead++;
    tally.linesInRows += linesEach;
  }
  return batch;
}

const plural = (n: number, word: string) => `${n} complete ${word}${n === 1 ? '' : 's'}`;

function cutWhy(cut: JsonCut): string {
  if (cut.itemLine !== undefined)
    return `the file ends inside element ${cut.items + 1} of the array (it starts on line ${cut.itemLine}), after ${plural(cut.items, 'element')}: the export looks cut off`;
  if (cut.inArray) return `the file ends inside the array after ${plural(cut.items, 'element')}: the export looks cut off`;
  return 'the file ends before the document closes: the export looks cut off';
}

function cutMessage(file: string, cut: JsonCut, arrayPath: string | undefined): string {
  const array = arrayPath ? `the array at ${arrayPath}` : 'the array';
  if (cut.itemLine !== undefined)
    return `${file}:${cut.line}: the file ends inside element ${cut.items + 1} of ${array}, which starts on line ${cut.itemLine}, expected the element and the array to close; ${plural(cut.items, 'element')} read, the export looks cut off`;
  if (cut.inArray)
    return `${file}:${cut.line}: the file ends inside ${array} after ${plural(cut.items, 'element')}, expected "]"; the export looks cut off`;
  return `${file}:${cut.line}: the file ends before the document closes, expected ${array} and the objects around it to close; the export looks cut off`;
}

/**
 * JSON Lines, in batches (the lines each chunk completes): one object a line; blank lines are
 * skipped; a broken line is a row error.
 * @example for await (const batch of jsonLinesBatches(textChunks('{"id":1}\n{"id":'), { source: 'contacten', file: 'c.jsonl' })) …
 */
export async function* jsonLinesBatches(chunks: Chunks, opts: JsonCoreOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { source, file } = opts;
  const tally = opts.tally ?? newTally(source, file, 'jsonl');
  const lines = new PhysicalLineCounter({ loneCr: false });
  const hashRows = opts.hashRows !== false;
  let line = 1;
  let byteOffset = -1;
  let enc: ResolvedEncoding | undefined;

  const rowOf = (text: string, at: number, offset: number): SourceRow | SourceRowError | undefined => {
    const body = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (isBlankLine(body)) return undefined;
    const provenance = { file, line: at, byteOffset: offset, hash: hashRows ? hashText(body) : '' };
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (err) {
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${at}: not a JSON object: ${(err as Error).message}`,
        raw: body.slice(0, RAW_LIMIT),
      };
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${at}: expected a JSON object on the line, got ${body.slice(0, 60)}`,
        raw: body.slice(0, RAW_LIMIT),
      };
    }
    const found = DEFECT_HINT.test(body) ? textIn(value, '') : undefined;
    if (found)
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: defectMessage(file, at, found, enc),
        raw: body.slice(0, RAW_LIMIT),
      };
    return { source, values: value as Record<string, unknown>, provenance };
  };

  // A line is held as parts until its line feed arrives (only the new chunk is searched), and
  // one longer than MAX_LINE_CHARS is dropped as it comes and reported where it started.
  let parts: string[] = [];
  let partsLength = 0;
  let oversized: { bytes: number; head: string } | undefined;
  const tooLong = (at: number, offset: number, head: string): SourceRowError => ({
    source,
    provenance: { file, line: at, byteOffset: offset, hash: '' },
    code: 'SOURCE_ROW_INVALID',
    message: `${file}:${at}: the line is longer than ${MAX_LINE_CHARS} characters, expected one JSON object a line`,
    raw: head.slice(0, RAW_LIMIT),
  });

  for await (const chunk of chunks) {
    enc = chunk.enc;
    let text = chunk.text;
    if (byteOffset < 0) ({ text, byteOffset } = afterBom(text, enc));
    lines.push(text);
    let from = 0;
    const batch: (SourceRow | SourceRowError)[] = [];
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const piece = text.slice(from, nl);
      if (oversized) {
        batch.push(tooLong(line, byteOffset, oversized.head));
        byteOffset += oversized.bytes + byteLength(piece, enc) + byteLength('\n', enc);
        oversized = undefined;
      } else {
        const lineText = parts.length > 0 ? parts.join('') + piece : piece;
        parts = [];
        partsLength = 0;
        const row = lineText.length > MAX_LINE_CHARS ? tooLong(line, byteOffset, lineText) : rowOf(lineText, line, byteOffset);
        if (row) batch.push(row);
        byteOffset += byteLength(lineText, enc) + byteLength('\n', enc);
      }
      line++;
      from = nl + 1;
    }
    const rest = text.slice(from);
    if (oversized) oversized.bytes += byteLength(rest, enc);
    else if (rest) {
      parts.push(rest);
      partsLength += rest.length;
      if (partsLength > MAX_LINE_CHARS) {
        oversized = { bytes: parts.reduce((n, p) => n + byteLength(p, enc!), 0), head: parts[0]!.slice(0, RAW_LIMIT) };
        parts = [];
        partsLength = 0;
      }
    }
    if (batch.length > 0) yield counted(tally, batch, 1);
  }
  lines.end(tally);
  if (oversized) yield counted(tally, [tooLong(line, byteOffset, oversized.head)], 1);
  else if (enc && parts.length > 0) {
    const text = parts.join('');
    const row = rowOf(text, line, byteOffset);
    if (row && 'code' in row && !parses(text)) {
      // The last line has no line feed and does not parse: the export stops inside a value.
      const why = `the file ends inside the JSON object on its last line (${line}): the export looks cut off`;
      tally.truncated = why;
      tally.rowsRead++;
      tally.rowErrors++;
      tally.linesInRows++;
      yield [
        {
          ...row,
          code: 'SOURCE_READ_FAILED',
          message: `${file}:${line}: the file ends inside the JSON object on its last line, expected a complete object and a line feed; the export looks cut off`,
        },
      ];
      return;
    }
    if (row) yield counted(tally, [row], 1);
  }
  if (tally.rowsRead === 0) {
    const what =
      tally.physicalLines === 0
        ? 'the file is empty'
        : `the file holds ${tally.physicalLines} blank line${tally.physicalLines === 1 ? '' : 's'} and no object`;
    tally.truncated = `${what}: no rows`;
    yield [
      {
        source,
        provenance: { file, line: 1, byteOffset: 0, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${file}:1: ${what}, expected one JSON object a line; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
      },
    ];
  }
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
