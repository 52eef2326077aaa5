/**
 * One CSV record read back at its provenance, in its file's columns, by the pipeline's own CSV
 * reader (read-record.ts). A record the reader refuses there (an unclosed quote: the row was
 * refused for it) comes back as one field, the text of its first line.
 */
import { cutNote, encodingOf, lineWithCut, type RawRow } from '../row-at.js';
import { csvHeader, csvRecordAt, type CsvRecordFormat } from './read-record.js';

/**
 * The record at `byteOffset`, named by `columns` (the file's header when not given); cells past
 * the header are `column_<n>`, and `width` says how many fields the record has.
 */
export async function csvRowAt(file: string, byteOffset: number, format: CsvRecordFormat, columns?: string[]): Promise<RawRow> {
  const cols = columns ?? (await csvHeader(file, format));
  let record = await csvRecordAt(file, byteOffset, format);
  let unreadable: string | undefined;
  if (record === 'unreadable') {
    // The record cannot be read back (a quote that never closes): its first line stands for it, and says so.
    const line = await lineWithCut(file, (await encodingOf(file, format.encoding)).encoding, byteOffset);
    record = [line.text];
    unreadable = line.cut
      ? cutNote('the row cannot be read as CSV (a quote that never closes) and its first line is longer than this')
      : 'the row cannot be read as CSV (a quote that never closes): only its first line is shown here';
  }
  record ??= [];
  const names = cols.length ? [...cols] : record.map((_v, i) => `column_${i + 1}`);
  for (let i = names.length; i < record.length; i++) names.push(`column_${i + 1}`);
  const values: Record<string, unknown> = {};
  names.forEach((name, i) => (values[name] = record[i] ?? ''));
  const short = cols.length - record.length;
  const extra =
    unreadable ??
    (cols.length === 0 || short === 0
      ? undefined
      : short > 0
        ? `${record.length} of ${cols.length} cells: ${short} missing`
        : record.slice(cols.length).join(format.csv?.delimiter ?? ','));
  return { columns: names, values, width: record.length, ...(extra !== undefined ? { extra } : {}) };
}
