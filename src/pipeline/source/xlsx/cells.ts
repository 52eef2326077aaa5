/**
 * XLSX cells as values, pure: what exceljs's streaming reader hands over, turned into what the
 * mapping sees. Numbers stay numbers, booleans booleans; text (shared or inline, rich text
 * joined) stays text; a formula is its cached result; a hyperlink its text. A date is a date
 * whatever the cell's number format: the reader gives a JS Date (with styles cached) and it
 * becomes ISO text, `yyyy-mm-dd` at midnight, `yyyy-mm-ddThh:mm:ss` otherwise, so a mapping reads
 * it with `{ date: [yyyy-mm-dd] }`. An error cell (`#N/A`, `#REF!`) is no value: the row is refused.
 */

/** A cell's value for the mapping, or an error cell's text (`{ error }`). */
export type CellValue = string | number | boolean | undefined | { error: string };

const two = (n: number) => String(n).padStart(2, '0');

/** A workbook date as ISO text (workbook dates carry no zone: exceljs gives them as UTC). */
export function isoDate(d: Date): string {
  const day = `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
  const h = d.getUTCHours();
  const m = d.getUTCMinutes();
  const s = d.getUTCSeconds();
  return h === 0 && m === 0 && s === 0 ? day : `${day}T${two(h)}:${two(m)}:${two(s)}`;
}

/** One cell as the mapping sees it. */
export function cellValue(v: unknown): CellValue {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? { error: 'an invalid date' } : isoDate(v);
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.richText)) return (o.richText as { text?: string }[]).map((r) => r.text ?? '').join('');
    if ('error' in o) return { error: String(o.error) };
    if ('result' in o || 'formula' in o || 'sharedFormula' in o) return cellValue(o.result);
    if ('text' in o) return cellValue(o.text);
  }
  return String(v);
}

/** A column's letters (1 → A, 27 → AA): an unnamed column is named by them. */
export function columnLetters(n: number): string {
  let s = '';
  for (let i = n; i > 0; i = Math.floor((i - 1) / 26)) s = String.fromCharCode(65 + ((i - 1) % 26)) + s;
  return s;
}

/**
 * The column names of a header row: each cell's text trimmed; an empty cell (the second half of
 * a merged header cell, or a column left unnamed) is named by its letters. Trailing empty
 * header cells name no column.
 */
export function headerNames(cells: readonly unknown[]): string[] {
  const names: string[] = [];
  for (let i = 1; i < cells.length; i++) {
    const v = cellValue(cells[i]);
    names.push(v === undefined || typeof v === 'object' ? '' : String(v).trim());
  }
  while (names.length > 0 && names[names.length - 1] === '') names.pop();
  return names.map((n, i) => n || columnLetters(i + 1));
}
