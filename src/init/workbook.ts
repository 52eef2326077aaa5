/**
 * Sniffing an Excel workbook for `init`: which sheets hold an export, and on which row each
 * names its columns. A sheet's header row is the first of its first rows whose cells look like
 * names (the CSV sniffer's own test, `looksLikeHeader`), skipping title rows above it (one
 * filled cell, as a merged title is, or fewer cells than the records have). A sheet without
 * such a row followed by records (a cover sheet, a notes sheet) is left out, and says why.
 */
import { StagecoachError } from '../contract/errors.js';
import { headerNames } from '../pipeline/source/xlsx/cells.js';
import { type SheetHead, sheetHeads } from '../pipeline/source/xlsx/stream.js';
import { looksLikeHeader, type XlsxDialect } from './sniff.js';

/** Rows of each sheet looked at for its header. */
export const HEAD_ROWS = 20;

/** A cell as the header test reads it: text, numbers as written, an error cell by its code. */
const cellText = (c: unknown): string =>
  c === undefined ? '' : typeof c === 'object' && c !== null ? String((c as { error: string }).error) : String(c);

/** The header row of a sheet's head (its index in `head.rows`), or why there is none. */
function headerOf(head: SheetHead): { index: number; titles: number } | { why: string } {
  const rows = head.rows.map((r) => r.cells.map(cellText));
  const filled = rows.map((r) => r.filter((c) => c.trim() !== '').length);
  for (let i = 0; i < rows.length - 1; i++) {
    const widest = Math.max(...filled.slice(i + 1));
    if (filled[i]! < 2 || filled[i]! < widest / 2) continue; // a title row (a merged cell holds one value)
    const names = rows[i]!.filter((c) => c.trim() !== '').map((c) => c.trim());
    if (looksLikeHeader(names, rows.slice(i + 1, i + 20))) return { index: i, titles: i };
  }
  return {
    why:
      head.filledRows < 2
        ? `${head.filledRows === 0 ? 'it is empty' : 'it holds one row'}, expected a header row and records`
        : `no row of its first ${Math.min(HEAD_ROWS, head.rows.length)} has cells that look like column names followed by records`,
  };
}

/**
 * The export sheets of a workbook, each with its header row and columns.
 * @example (await sniffWorkbook('/…/export.xlsx', 'export.xlsx'))[0] // { kind: 'xlsx', sheet: 'Klanten', headerRow: 3, columns: ['klantnr', …], … }
 */
export async function sniffWorkbook(path: string, file: string): Promise<XlsxDialect[]> {
  const heads = await sheetHeads(path, HEAD_ROWS);
  const found: XlsxDialect[] = [];
  const skipped: string[] = [];
  for (const head of heads) {
    const header = headerOf(head);
    if ('why' in header) {
      skipped.push(`sheet ${JSON.stringify(head.name)} left out: ${header.why}`);
      continue;
    }
    const row = head.rows[header.index]!;
    const records = head.filledRows - header.index - 1;
    found.push({
      kind: 'xlsx',
      encoding: 'auto',
      sheet: head.name,
      headerRow: row.number,
      columns: headerNames([undefined, ...row.cells]),
      evidence: [
        `workbook: sheet ${JSON.stringify(head.name)} (${head.position} of ${heads.length}), ${records} record${records === 1 ? '' : 's'}`,
        `header: row ${row.number}, the first whose cells look like column names (no numbers or dates, no name twice)${
          header.titles > 0 ? `; ${header.titles} title row${header.titles === 1 ? '' : 's'} above it skipped` : ''
        }`,
      ],
    });
  }
  if (found.length === 0)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `init: ${file}: no sheet of the workbook holds an export, expected a row of column names followed by records: ${skipped.join('; ') || 'the workbook has no sheets'}`,
      { file },
    );
  // Every export sheet says which sheets were left out, so the choice can be checked.
  for (const d of found) d.evidence.push(...skipped);
  return found;
}
