/**
 * Re-reads single legacy rows by their provenance (file + byte offset), in the source's own
 * columns, so a corrections file and the report's examples show the row exactly as the legacy
 * system exported it. Reads only from the row's first byte to its end: a corrections file of a
 * hundred rows out of a million reads a hundred rows, not the file.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import iconv from 'iconv-lite';
import type { SourceSpec } from '../pipeline/definition/schema.js';
import { csvHeader, csvRecordAt } from '../pipeline/source/csv/index.js';

/** The reading options of a source that matter for one row. */
export type RowFormat = Pick<SourceSpec, 'format' | 'encoding'> & { csv?: Partial<SourceSpec['csv']> };

/** A legacy row as its columns and values, both in file order. */
export interface RawRow {
  columns: string[];
  values: Record<string, unknown>;
  /** CSV: the number of fields the record has (more or fewer than the header for a refused row). */
  width?: number;
}

/** Decides the text encoding of a file: the declared one, or its byte-order mark under `auto`. */
async function encodingOf(file: string, declared: RowFormat['encoding']): Promise<{ encoding: string; bomBytes: number }> {
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

function textFrom(file: string, encoding: string, start: number): NodeJS.ReadableStream {
  return createReadStream(file, { start }).pipe(iconv.decodeStream(encoding));
}

/**
 * The CSV record starting at `start`, as an array of strings, read by the pipeline's own CSV
 * reader (source/csv/). A record the reader refuses there (an unclosed quote: the row was
 * refused for it) comes back as one field, the text of its first line (cut at MAX_ROW_CHARS).
 */
async function firstCsvRecord(file: string, start: number, format: RowFormat): Promise<string[] | undefined> {
  const record = await csvRecordAt(file, start, format);
  if (record !== 'unreadable') return record;
  const { encoding } = await encodingOf(file, format.encoding);
  return [await firstLine(file, encoding, start)];
}

async function firstLine(file: string, encoding: string, start: number): Promise<string> {
  const stream = textFrom(file, encoding, start);
  let text = '';
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const nl = chunk.indexOf('\n');
      text += nl >= 0 ? chunk.slice(0, nl) : chunk;
      if (nl >= 0 || text.length > MAX_ROW_CHARS) break;
    }
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
  return text.replace(/\r$/, '').slice(0, MAX_ROW_CHARS);
}

/** The header of a CSV source: its declared columns, or its first record (as the pipeline's reader takes it). */
export async function csvColumns(file: string, format: RowFormat): Promise<string[]> {
  return csvHeader(file, format);
}

/** Longest row text re-read, and deepest nesting parsed: a longer or deeper row is shown cut, as text. */
const MAX_ROW_CHARS = 1024 * 1024;
const MAX_ROW_DEPTH = 100;

/** A row's text as a value: parsed when it is JSON, else the text itself (a row refused as unreadable). */
function parseRowText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The JSON value (an object) starting at `start`, found by matching its brackets. A row that is
 * not JSON (refused as unreadable), longer than MAX_ROW_CHARS or nested deeper than
 * MAX_ROW_DEPTH comes back as its text (cut): a broken row must not break the report.
 */
async function jsonValueAt(file: string, encoding: string, start: number): Promise<unknown> {
  const parts: string[] = [];
  let length = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let begun = false;
  const cut = () => `${parts.join('').slice(0, 200)}…`;
  const stream = textFrom(file, encoding, start);
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let from = 0;
      for (let i = 0; i < chunk.length; i++) {
        const ch = chunk[i]!;
        if (!begun) {
          if (/\s/.test(ch)) continue;
          begun = true;
          from = i;
        }
        if (inString) {
          if (escaped) escaped = false;
          else if (ch === '\\') escaped = true;
          else if (ch === '"') inString = false;
        } else if (ch === '"') inString = true;
        else if (ch === '{' || ch === '[') {
          if (++depth > MAX_ROW_DEPTH) {
            parts.push(chunk.slice(from, i + 1));
            return cut();
          }
        } else if (ch === '}' || ch === ']') {
          depth--;
          if (depth === 0) return parseRowText(parts.join('') + chunk.slice(from, i + 1));
        } else if (depth === 0 && (ch === ',' || ch === '\n')) return parseRowText(parts.join('') + chunk.slice(from, i));
      }
      if (begun) {
        parts.push(chunk.slice(from));
        length += chunk.length - from;
        if (length > MAX_ROW_CHARS) return cut();
      }
    }
    return parts.length > 0 ? parseRowText(parts.join('')) : undefined;
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
}

/**
 * Reads the legacy row that starts at `byteOffset` of `file`.
 * @example
 *   const row = await readRowAt('samples/crm/persons.csv', 812, { format: 'csv', encoding: 'auto', csv: { delimiter: ';' } });
 *   row.values // { klantnr: '1014', voorletters: 'J.', … }
 */
export async function readRowAt(file: string, byteOffset: number, format: RowFormat, columns?: string[]): Promise<RawRow> {
  if (format.format === 'csv') {
    const cols = columns ?? (await csvColumns(file, format));
    const record = (await firstCsvRecord(file, byteOffset, format)) ?? [];
    const names = cols.length ? [...cols] : record.map((_v, i) => `column_${i + 1}`);
    for (let i = names.length; i < record.length; i++) names.push(`column_${i + 1}`);
    const values: Record<string, unknown> = {};
    names.forEach((name, i) => (values[name] = record[i] ?? ''));
    return { columns: names, values, width: record.length };
  }
  const { encoding } = await encodingOf(file, format.encoding);
  const value = await jsonValueAt(file, encoding, byteOffset);
  const values = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return { columns: Object.keys(values), values };
}

export { cellText } from '../pipeline/checks/corrections.js';
