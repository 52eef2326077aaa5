/**
 * JSON cores, pure (decoded text in, rows and row errors out, no I/O): `JsonArrayCore` for a
 * top-level array of objects or an array at a dotted path inside an object (`export.bedrijven`),
 * `JsonLinesCore` for JSON Lines. Both have the source-core shape of feed-core.ts (CSV's core's):
 * `push` a decoded chunk and take the rows it completed, `end()` for the final checks. The file
 * side is `stream.ts`; tests feed strings (`textChunks`).
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
import type { SourceRowError } from '../../types.js';
import { textDefect, textDefectHint, type ResolvedEncoding } from '../encoding.js';
import { rowHash } from '../row-hash.js';
import { afterBom, byteLength, type DecodedChunk } from '../decoded-text.js';
import type { SourceCore, SourceItem } from '../feed-core.js';
import { isBlankLine, newTally, PhysicalLineCounter, type SourceTally } from '../tally.js';
import { JsonItemCounter, type JsonCut } from './count-items.js';
import { duplicatedKey } from './duplicate-keys.js';
import { readLimits } from '../../read-limits.js';

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

const RAW_LIMIT = 200;
// Deepest nesting of an element (deeper ones are refused: re-serialising them would overflow the
// stack) and longest JSON Lines line held in memory (a longer one is a row error, read past
// without holding it): STAGECOACH_JSON_MAX_DEPTH and STAGECOACH_JSON_MAX_LINE_CHARS (read-limits.ts).

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

interface Token {
  name: string;
  value?: unknown;
}

/** A key met twice in one object: refused, since JSON.parse or the assembler would keep the last silently. */
function duplicateMessage(file: string, line: number, path: string): string {
  return `${file}:${line}: key ${JSON.stringify(path)} appears more than once in one object, expected each key once (which value is meant?)`;
}

/** `a.b[2].c` from an assembler's path (keys, and the index an array is at). */
function dottedPath(parts: readonly (string | number)[], key: string): string {
  let out = '';
  for (const p of [...parts, key]) out += typeof p === 'number' ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Where the tokenizer is in the document: one frame per open container. */
interface Frame {
  array: boolean;
  key: string | null;
  target: boolean;
}

/**
 * The objects of one JSON array (at the top level, or at `arrayPath`). Not reusable: push the
 * decoded chunks in order, then call `end` once.
 * @example const core = new JsonArrayCore({ source: 'bedrijven', file: 'b.json' }); [...core.push({ text: '[{"id":1},', enc: UTF8 }), ...core.end()]
 *          // [{ values: { id: 1 }, … }, SOURCE_READ_FAILED 'b.json:1: the file ends inside the array after 1 complete element …']
 */
export class JsonArrayCore implements SourceCore<DecodedChunk> {
  private readonly source: string;
  private readonly file: string;
  private readonly arrayPath: string | undefined;
  private readonly tally: SourceTally;
  private readonly lines = new PhysicalLineCounter();
  private readonly hashRows: boolean;
  private readonly target: string[];
  private readonly tokenizer = jsonParser({ streamValues: false });
  private readonly counter: JsonItemCounter;
  private readonly frames: Frame[] = [];
  private targetSeen = false;
  private asm: Assembler | null = null;
  private elementStart = { line: 0, byteOffset: 0 };
  private line = 1;
  private byteOffset = 0;
  private pieceStart = { line: 1, byteOffset: 0 };
  private bomBytes = -1;
  private currentEnc: ResolvedEncoding | undefined;
  private out: SourceItem[] = [];
  // An element nested deeper than STAGECOACH_JSON_MAX_DEPTH is not assembled: its tokens are counted
  // until it closes, and it becomes a row error; the array goes on.
  private depth = 0;
  private tooDeep = false;
  private readonly maxDepth = readLimits().STAGECOACH_JSON_MAX_DEPTH;
  /** The element being assembled repeats this key (its path inside the element). */
  private duplicate: string | undefined;

  constructor(opts: JsonCoreOptions) {
    this.source = opts.source;
    this.file = opts.file;
    this.arrayPath = opts.arrayPath;
    this.tally = opts.tally ?? newTally(opts.source, opts.file, 'json');
    this.hashRows = opts.hashRows !== false;
    this.target = opts.arrayPath ? opts.arrayPath.split('.') : [];
    this.counter = new JsonItemCounter(this.target);
  }

  push({ text: chunk, enc }: DecodedChunk): SourceItem[] {
    this.currentEnc = enc;
    if (this.bomBytes < 0) {
      this.bomBytes = enc.bomLength;
      this.byteOffset = this.bomBytes;
    }
    let text = chunk;
    if (text.charCodeAt(0) === 0xfeff && this.line === 1 && this.byteOffset === this.bomBytes) {
      this.byteOffset += byteLength('\ufeff', enc);
      text = text.slice(1);
    }
    // Cut before each "{" so an element's start is the start of a piece (see module comment).
    let from = 0;
    for (let i = text.indexOf('{', 1); i !== -1; i = text.indexOf('{', i + 1)) {
      this.feed(text.slice(from, i), enc);
      from = i;
    }
    this.feed(text.slice(from), enc);
    return this.drain();
  }

  end(): SourceItem[] {
    const { file, arrayPath, tally } = this;
    this.lines.end(tally);
    const cut = this.counter.end();
    tally.items = this.counter.items;
    if (cut) return this.failed(this.line, this.byteOffset, cutMessage(file, cut, arrayPath), cutWhy(cut));
    if (!this.counter.sawContent) {
      const what =
        tally.physicalLines === 0
          ? 'the file is empty'
          : `the file holds ${tally.physicalLines} blank line${tally.physicalLines === 1 ? '' : 's'} and no JSON`;
      return this.failed(
        1,
        0,
        `${file}:1: ${what}, expected ${arrayPath ? `an object holding an array at ${arrayPath}` : 'a JSON array'}; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
        `${what}: no rows`,
      );
    }
    const tail = this.tokenizer(none as never) as unknown;
    if (isMany(tail)) for (const t of getManyValues(tail) as Token[]) this.consume(t);
    const rows = this.drain();
    if (!this.targetSeen) {
      const what =
        this.byteOffset <= Math.max(this.bomBytes, 0)
          ? 'the file is empty'
          : arrayPath
            ? `no array at ${arrayPath}`
            : 'no array at the top level';
      rows.push(
        ...this.failed(
          1,
          0,
          arrayPath
            ? `${file}:1: ${what}, expected an object holding an array at ${arrayPath}`
            : `${file}:1: ${what}, expected a JSON array at the top level`,
          `${what}: no rows`,
        ),
      );
    } else if (tally.rowsRead === 0) {
      rows.push(
        ...this.failed(
          1,
          0,
          `${file}:1: the array${arrayPath ? ` at ${arrayPath}` : ''} is empty, expected at least one record; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
          'the array is empty: no rows',
        ),
      );
    }
    return rows;
  }

  /** A syntax error (the tokenizer's): the elements before it, then the rest of the file is one read failure. */
  fail(err: unknown): SourceItem[] {
    const rows = this.drain();
    this.lines.end(this.tally);
    this.tally.items = this.counter.items;
    const { file, line } = this;
    rows.push(
      ...this.failed(
        line,
        this.byteOffset,
        `${file}:${line}: the rest of the file cannot be read: ${(err as Error).message}`,
        `the rest of the file cannot be read from line ${line}: ${(err as Error).message}`,
      ),
    );
    return rows;
  }

  /** The rows and row errors completed so far, counted into the tally. */
  private drain(): SourceItem[] {
    if (this.out.length === 0) return [];
    const rows = this.out;
    this.out = [];
    return counted(this.tally, rows);
  }

  private failed(at: number, offset: number, message: string, why: string): SourceRowError[] {
    this.tally.truncated = why;
    const { source, file } = this;
    return [{ source, provenance: { file, line: at, byteOffset: offset, hash: '' }, code: 'SOURCE_READ_FAILED', message }];
  }

  private feed(piece: string, enc: ResolvedEncoding): void {
    this.pieceStart = { line: this.line, byteOffset: this.byteOffset };
    this.counter.push(piece);
    this.lines.push(piece);
    const tokens = this.tokenizer(piece) as unknown;
    if (isMany(tokens)) for (const t of getManyValues(tokens) as Token[]) this.consume(t);
    else if (tokens !== none && tokens !== undefined) this.consume(tokens as Token);
    this.line += countLines(piece);
    this.byteOffset += byteLength(piece, enc);
  }

  private inTarget(): boolean {
    const frames = this.frames;
    return frames.length > 0 && frames[frames.length - 1]!.target;
  }

  private pathMatches(): boolean {
    const { frames, target } = this;
    if (frames.length !== target.length) return false;
    for (let i = 0; i < target.length; i++) if (frames[i]!.array || frames[i]!.key !== target[i]) return false;
    return true;
  }

  private consume(t: Token): void {
    const asm = this.asm;
    if (asm) {
      if (t.name === 'startObject' || t.name === 'startArray') this.depth++;
      else if (t.name === 'endObject' || t.name === 'endArray') this.depth--;
      if (this.tooDeep || this.depth > this.maxDepth) {
        this.tooDeep = true;
        if (this.depth === 0) {
          this.asm = null;
          this.tooDeep = false;
          const { source, file, elementStart } = this;
          this.out.push({
            source,
            provenance: { file, line: elementStart.line, byteOffset: elementStart.byteOffset, hash: '' },
            code: 'SOURCE_ROW_INVALID',
            message: `${file}:${elementStart.line}: the element is nested deeper than ${this.maxDepth} levels (STAGECOACH_JSON_MAX_DEPTH), expected a flat record`,
          });
        }
        return;
      }
      if (t.name === 'keyValue' && this.duplicate === undefined && Object.hasOwn(asm.current as object, t.value as string))
        this.duplicate = dottedPath(asm.path as (string | number)[], t.value as string);
      asm.consume(t as never);
      if (asm.done) {
        this.asm = null;
        this.finishElement(asm.current);
      }
      return;
    }
    switch (t.name) {
      case 'startObject':
        if (this.inTarget()) break; // an element starts: handled below
        this.frames.push({ array: false, key: null, target: false });
        return;
      case 'startArray': {
        if (this.inTarget()) break;
        const isTarget = !this.targetSeen && this.pathMatches();
        this.frames.push({ array: true, key: null, target: isTarget });
        if (isTarget) this.targetSeen = true;
        return;
      }
      case 'endObject':
      case 'endArray':
        this.frames.pop();
        return;
      case 'keyValue':
        this.frames[this.frames.length - 1]!.key = t.value as string;
        return;
      default:
        if (!this.inTarget()) return;
    }
    // A value inside the target array: an element.
    this.elementStart = this.pieceStart;
    this.duplicate = undefined;
    this.depth = t.name === 'startObject' || t.name === 'startArray' ? 1 : 0;
    const element = new Assembler();
    this.asm = element;
    element.consume(t as never);
    if (element.done) {
      this.asm = null;
      this.finishElement(element.current);
    }
  }

  private finishElement(value: unknown): void {
    const { source, file } = this;
    const provenance = { file, line: this.elementStart.line, byteOffset: this.elementStart.byteOffset, hash: '' };
    const text = JSON.stringify(value);
    if (this.hashRows) provenance.hash = rowHash(text);
    const found = DEFECT_HINT.test(text) ? textIn(value, '') : undefined;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.out.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${file}:${provenance.line}: expected an object in the array, got ${text.slice(0, 60)}`,
        raw: text.slice(0, RAW_LIMIT),
      });
    } else if (this.duplicate !== undefined) {
      this.out.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: duplicateMessage(file, provenance.line, this.duplicate),
        raw: text.slice(0, RAW_LIMIT),
      });
    } else if (found) {
      this.out.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: defectMessage(file, provenance.line, found, this.currentEnc),
        raw: text.slice(0, RAW_LIMIT),
      });
    } else {
      this.out.push({ source, values: value as Record<string, unknown>, provenance });
    }
  }
}

/** Counts what a batch holds into the tally (rows and row errors; a file's read failure is not a row). */
function counted(tally: SourceTally, batch: SourceItem[], linesEach = 0): SourceItem[] {
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
 * JSON Lines: one object a line; blank lines are skipped; a broken line is a row error. Not
 * reusable: push the decoded chunks in order, then call `end` once.
 * @example const core = new JsonLinesCore({ source: 'contacten', file: 'c.jsonl' }); [...core.push({ text: '{"id":1}\n{"id":', enc: UTF8 }), ...core.end()]
 */
export class JsonLinesCore implements SourceCore<DecodedChunk> {
  private readonly source: string;
  private readonly file: string;
  private readonly tally: SourceTally;
  private readonly lines = new PhysicalLineCounter({ loneCr: false });
  private readonly hashRows: boolean;
  private line = 1;
  private byteOffset = -1;
  private enc: ResolvedEncoding | undefined;
  // A line is held as parts until its line feed arrives (only the new chunk is searched), and
  // one longer than STAGECOACH_JSON_MAX_LINE_CHARS is dropped as it comes and reported where it started.
  private parts: string[] = [];
  private partsLength = 0;
  private oversized: { bytes: number; head: string } | undefined;
  private readonly maxLine = readLimits().STAGECOACH_JSON_MAX_LINE_CHARS;

  constructor(opts: JsonCoreOptions) {
    this.source = opts.source;
    this.file = opts.file;
    this.tally = opts.tally ?? newTally(opts.source, opts.file, 'jsonl');
    this.hashRows = opts.hashRows !== false;
  }

  push(chunk: DecodedChunk): SourceItem[] {
    const enc = (this.enc = chunk.enc);
    let text = chunk.text;
    if (this.byteOffset < 0) ({ text, byteOffset: this.byteOffset } = afterBom(text, enc));
    this.lines.push(text);
    let from = 0;
    const batch: SourceItem[] = [];
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const piece = text.slice(from, nl);
      if (this.oversized) {
        batch.push(this.tooLong(this.line, this.byteOffset, this.oversized.head));
        this.byteOffset += this.oversized.bytes + byteLength(piece, enc) + byteLength('\n', enc);
        this.oversized = undefined;
      } else {
        const lineText = this.parts.length > 0 ? this.parts.join('') + piece : piece;
        this.parts = [];
        this.partsLength = 0;
        const row =
          lineText.length > this.maxLine
            ? this.tooLong(this.line, this.byteOffset, lineText)
            : this.rowOf(lineText, this.line, this.byteOffset);
        if (row) batch.push(row);
        this.byteOffset += byteLength(lineText, enc) + byteLength('\n', enc);
      }
      this.line++;
      from = nl + 1;
    }
    const rest = text.slice(from);
    if (this.oversized) this.oversized.bytes += byteLength(rest, enc);
    else if (rest) {
      this.parts.push(rest);
      this.partsLength += rest.length;
      if (this.partsLength > this.maxLine) {
        this.oversized = { bytes: this.parts.reduce((n, p) => n + byteLength(p, enc), 0), head: this.parts[0]!.slice(0, RAW_LIMIT) };
        this.parts = [];
        this.partsLength = 0;
      }
    }
    return counted(this.tally, batch, 1);
  }

  end(): SourceItem[] {
    const { source, file, tally, line } = this;
    this.lines.end(tally);
    const rows: SourceItem[] = [];
    if (this.oversized) rows.push(...counted(tally, [this.tooLong(line, this.byteOffset, this.oversized.head)], 1));
    else if (this.enc && this.parts.length > 0) {
      const text = this.parts.join('');
      const row = this.rowOf(text, line, this.byteOffset);
      if (row && 'code' in row && !parses(text)) {
        // The last line has no line feed and does not parse: the export stops inside a value.
        tally.truncated = `the file ends inside the JSON object on its last line (${line}): the export looks cut off`;
        tally.rowsRead++;
        tally.rowErrors++;
        tally.linesInRows++;
        return [
          {
            ...row,
            code: 'SOURCE_READ_FAILED',
            message: `${file}:${line}: the file ends inside the JSON object on its last line, expected a complete object and a line feed; the export looks cut off`,
          },
        ];
      }
      if (row) rows.push(...counted(tally, [row], 1));
    }
    if (tally.rowsRead === 0) {
      const what =
        tally.physicalLines === 0
          ? 'the file is empty'
          : `the file holds ${tally.physicalLines} blank line${tally.physicalLines === 1 ? '' : 's'} and no object`;
      tally.truncated = `${what}: no rows`;
      rows.push({
        source,
        provenance: { file, line: 1, byteOffset: 0, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${file}:1: ${what}, expected one JSON object a line; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
      });
    }
    return rows;
  }

  /**
   * Nothing in a JSON Lines file stops the reading (a broken line is that line's error), and
   * `push` hands back every row it makes: a failure here is not the file's, so it goes on up.
   */
  fail(err: unknown): SourceItem[] {
    throw err;
  }

  private tooLong(at: number, offset: number, head: string): SourceRowError {
    const { source, file } = this;
    return {
      source,
      provenance: { file, line: at, byteOffset: offset, hash: '' },
      code: 'SOURCE_ROW_INVALID',
      message: `${file}:${at}: the line is longer than ${this.maxLine} characters (STAGECOACH_JSON_MAX_LINE_CHARS), expected one JSON object a line`,
      raw: head.slice(0, RAW_LIMIT),
    };
  }

  private rowOf(text: string, at: number, offset: number): SourceItem | undefined {
    const { source, file } = this;
    const body = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (isBlankLine(body)) return undefined;
    const provenance = { file, line: at, byteOffset: offset, hash: this.hashRows ? rowHash(body) : '' };
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
    const duplicate = duplicatedKey(body, value);
    if (duplicate !== undefined)
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: duplicateMessage(file, at, duplicate),
        raw: body.slice(0, RAW_LIMIT),
      };
    const found = DEFECT_HINT.test(body) ? textIn(value, '') : undefined;
    if (found)
      return {
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: defectMessage(file, at, found, this.enc),
        raw: body.slice(0, RAW_LIMIT),
      };
    return { source, values: value as Record<string, unknown>, provenance };
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
