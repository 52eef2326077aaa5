/**
 * The independent count of an XLSX sheet (docs/pipelines.md, "Every row counted twice"): the
 * sheet's `<row>` elements and which of them hold no value, counted from the workbook's own
 * bytes (the sheet's XML inflated through zip.ts, under the same limits) with patterns of its
 * own, apart from the reader's cell decoding (sheet-rows.ts), which makes the rows. Streams:
 * memory holds one row's XML and a bit for each shared string, set when it is empty.
 */
import { defaultXlsxLimits, type XlsxLimits } from './options.js';
import { limitPassed, type WorkbookSheet, workbookSheets } from './workbook-parts.js';
import { xmlElements } from './xml-elements.js';
import { entryText, zipEntries } from './zip.js';

export type { WorkbookSheet };

/** The text of `<t>` runs of an element (a shared string, an inline string). */
const textOf = (xml: string) => [...xml.matchAll(/<t(?:\s[^>]*)?>([^<]*)<\/t>/g)].map((m) => m[1]).join('');

/** Whether a `<row>` holds a value: a cell with a non-empty value, an inline string with text, or an error. */
function rowHasValue(row: string, emptyStrings: Bits): boolean {
  for (const cell of row.matchAll(/<c(\s[^>]*?)?(?:\/>|>([\s\S]*?)<\/c>)/g)) {
    const type = /\st="([^"]*)"/.exec(cell[1] ?? '')?.[1];
    const inner = cell[2] ?? '';
    if (type === 'inlineStr') {
      if (textOf(inner) !== '') return true;
      continue;
    }
    const v = /<v>([^<]*)<\/v>/.exec(inner)?.[1];
    if (v === undefined || v === '') continue;
    if (type === 's' && emptyStrings.has(Number(v))) continue;
    return true;
  }
  return false;
}

/**
 * A set of shared-string indexes as bits, in pages: a part of millions of empty strings (a bomb
 * within the part limit) costs a bit each, not a Set entry.
 */
class Bits {
  private readonly pages: Uint8Array[] = [];
  add(i: number): void {
    const page = Math.floor(i / 65_536);
    while (this.pages.length <= page) this.pages.push(new Uint8Array(8192));
    this.pages[page]![(i % 65_536) >> 3]! |= 1 << (i & 7);
  }
  has(i: number): boolean {
    const page = this.pages[Math.floor(i / 65_536)];
    return page !== undefined && (page[(i % 65_536) >> 3]! & (1 << (i & 7))) !== 0;
  }
}

/** What the count found: every `<row>` of the sheet and those without a value, by row number. */
export interface SheetRowCount {
  rows: number;
  /** Rows that hold no value. */
  emptyRows: number;
}

/**
 * Counts the `<row>` elements of the sheet named (by name or position, as xlsx.sheet) and which
 * hold no value; undefined when the workbook has no such sheet (the reader says so).
 */
export async function countSheetRows(
  path: string,
  sheet: string | number,
  limits: XlsxLimits = defaultXlsxLimits,
  signal?: AbortSignal,
): Promise<SheetRowCount | undefined> {
  const file = path;
  const entries = await zipEntries(path, file);
  const sheets = await workbookSheets({ path, file, entries, limits });
  const chosen = typeof sheet === 'number' ? sheets[sheet - 1] : sheets.find((s) => s.name === sheet);
  const entry = chosen?.part === undefined ? undefined : entries.get(chosen.part);
  if (!entry) return undefined;
  const over = (limit: keyof XlsxLimits) => () =>
    limitPassed(file, `${file}: counting its rows`, 'a part or an element holds', limit, limits);
  const emptyStrings = new Bits();
  const shared = entries.get('xl/sharedStrings.xml');
  if (shared) {
    let index = 0;
    const chunks = entryText(path, shared, { file, maxBytes: limits.partBytes, tooLarge: over('partBytes'), signal });
    for await (const si of xmlElements(chunks, 'si', limits.sharedStringChars, over('sharedStringChars'))) {
      if (textOf(si.replace(/<rPh[\s\S]*?<\/rPh>/g, '')) === '') emptyStrings.add(index);
      index++;
    }
  }
  const count: SheetRowCount = { rows: 0, emptyRows: 0 };
  const chunks = entryText(path, entry, { file, maxBytes: limits.sheetBytes, tooLarge: over('sheetBytes'), signal });
  for await (const row of xmlElements(chunks, 'row', limits.rowChars, over('rowChars'))) {
    count.rows++;
    if (!rowHasValue(row, emptyStrings)) count.emptyRows++;
  }
  return count;
}
