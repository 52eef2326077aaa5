/**
 * One fixed-width record read back at its provenance: the line at its byte offset, cut into the
 * layout's columns by their names, so a corrections file shows one column per layout field (never
 * a title line or another record as its header).
 */
import { StagecoachError } from '../../../contract/errors.js';
import type { SourceEncoding } from '../encoding.js';
import { encodingOf, lineWithCut, cutNote, type RawRow } from '../row-at.js';
import { fixedWidthFields, recordLength } from './core.js';
import type { FixedWidthOptions } from './options.js';

/** What reading a fixed-width record back needs: the encoding and the layout. */
type FixedWidthRecordFormat = { encoding: SourceEncoding; fixedWidth?: FixedWidthOptions | undefined };

/**
 * The record at `byteOffset` in the layout's columns; a line of another length than the layout's
 * (refused for it) is kept whole in `extra`.
 */
export async function fixedWidthRowAt(file: string, byteOffset: number, format: FixedWidthRecordFormat): Promise<RawRow> {
  const layout = format.fixedWidth;
  if (!layout) throw new StagecoachError('CONFIG_INVALID', `${file}: a fixed-width source needs fixedWidth.columns to read a record`);
  const { text, cut } = await lineWithCut(file, (await encodingOf(file, format.encoding)).encoding, byteOffset);
  const values = fixedWidthFields(text, layout);
  const expected = recordLength(layout);
  const extra = cut
    ? cutNote(`the line is longer than ${expected} characters`)
    : text.length === expected
      ? undefined
      : `${text.length} characters, expected ${expected}: ${text}`;
  return { columns: layout.columns.map((c) => c.name), values, ...(extra !== undefined ? { extra } : {}) };
}

/** The columns of a fixed-width source: the layout's names. */
export function fixedWidthHeader(format: FixedWidthRecordFormat): string[] {
  return format.fixedWidth?.columns.map((c) => c.name) ?? [];
}
