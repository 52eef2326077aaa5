/**
 * One JSON or JSON Lines record read back at its provenance (the byte its object starts at),
 * found by matching its brackets: only that record is read.
 */
import type { SourceEncoding } from '../encoding.js';
import { encodingOf, MAX_ROW_CHARS, textFrom, type RawRow } from '../row-at.js';

/** Deepest nesting parsed: a deeper row is shown cut, as text. */
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
 * The JSON value (an object) starting at `start`. A row that is not JSON (refused as unreadable),
 * longer than MAX_ROW_CHARS or nested deeper than MAX_ROW_DEPTH comes back as its text (cut): a
 * broken row must not break the report.
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

/** The JSON object at `byteOffset`; a value that is no object comes back as `{ value }`. */
export async function jsonRowAt(file: string, byteOffset: number, format: { encoding: SourceEncoding }): Promise<RawRow> {
  const { encoding } = await encodingOf(file, format.encoding);
  const value = await jsonValueAt(file, encoding, byteOffset);
  const values = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return { columns: Object.keys(values), values };
}
