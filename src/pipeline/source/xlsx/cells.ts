/**
 * XLSX cells as values, pure: what the sheet reader (sheet-rows.ts) makes of a cell, as the
 * mapping sees it. Numbers stay numbers, booleans booleans, text (shared or inline, every
 * rich-text run joined) stays text; a formula is its cached value. A date is a date whatever the
 * cell's number format, as ISO text, `yyyy-mm-dd` at midnight, `yyyy-mm-ddThh:mm:ss` otherwise,
 * so a mapping reads it with `{ date: [yyyy-mm-dd] }`. A cell that holds no value where it seems
 * to (an error cell `#N/A`, a formula never computed, …) is `{ error }`: its row is refused.
 */

/**
 * A cell's value for the mapping, or (`{ error }`) what the cell holds that is no value, as the
 * words that follow `cell klanten.xlsx:Klanten!B5` in a message ("holds the error #N/A").
 */
export type CellValue = string | number | boolean | undefined | { error: string };

/** One cell as the mapping sees it: an empty text is no value. */
export function cellValue(v: CellValue): CellValue {
  return v === '' || v === null ? undefined : v;
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
export function headerNames(cells: readonly CellValue[]): string[] {
  const names: string[] = [];
  for (let i = 1; i < cells.length; i++) {
    const v = cellValue(cells[i]);
    names.push(v === undefined || typeof v === 'object' ? '' : String(v).trim());
  }
  while (names.length > 0 && names[names.length - 1] === '') names.pop();
  return names.map((n, i) => n || columnLetters(i + 1));
}
