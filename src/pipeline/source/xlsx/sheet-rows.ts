/**
 * A sheet's rows read from its XML as a stream (one `<row>` in memory at a time), each cell
 * read whole into what the mapping sees (cells.ts): shared and inline text with every rich-text
 * run, a formula's cached value, booleans, numbers, dates in the workbook's date system. A cell
 * that holds no value where it seems to (an error, a formula never computed, a shared string
 * the workbook lacks, a date Excel cannot show) is `{ error }` saying so, and the reader refuses
 * its row by its place. Past a limit (options.ts) the read stops, naming sheet, row and limit.
 */
import { StagecoachError } from '../../../contract/errors.js';
import { type CellValue, columnLetters } from './cells.js';
import { limitPassed, type OpenWorkbook, type SharedStringTable, type WorkbookSheet } from './workbook-parts.js';
import { serialToIso } from './serial-date.js';
import { attributes, stringItemText, unescapeOoxml, unescapeXml, xmlElements } from './xml-elements.js';
import { entryText } from './zip.js';

/** A sheet's row: its number and its cells' values by column (index 1 is column A; a column without a cell is a hole). */
export interface SheetRow {
  number: number;
  values: CellValue[];
}

/** The last column Excel has (XFD). */
const LAST_COLUMN = 16_384;
const NAME = '(?:[A-Za-z_][\\w.-]*:)?';
const CELL = new RegExp(`<${NAME}c(?=[\\s>/])([^>]*?)(?:/>|>([\\s\\S]*?)</${NAME}c>)`, 'g');
const VALUE = new RegExp(`<${NAME}v(?:\\s[^>]*?)?(?:/>|>([^<]*)</${NAME}v>)`);
const FORMULA = new RegExp(`<${NAME}f(?:\\s[^>]*?)?(?:/>|>([^<]*)</${NAME}f>)`);
const ROW_START = new RegExp(`^<${NAME}row([^>]*)>`);

/** A cell reference's column (`BC12` → 55), or undefined when it names none. */
function columnOf(ref: string): number | undefined {
  let n = 0;
  let i = 0;
  for (; i < ref.length; i++) {
    const c = ref.charCodeAt(i) & ~32; // upper case
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return i === 0 ? undefined : n;
}

/**
 * A cell's attributes: `r`, `s` and `t` found directly in the usual form (`r="B5" s="3" t="s"`),
 * every cell of a sheet being one; anything else (single quotes, prefixes, escapes) the general way.
 */
function cellAttributes(tag: string): Record<string, string> {
  if (tag.includes("'") || tag.includes('&') || tag.includes(':')) return attributes(tag);
  const out: Record<string, string> = {};
  for (const name of ['r', 's', 't']) {
    const at = tag.indexOf(` ${name}="`);
    if (at >= 0) out[name] = tag.slice(at + 4, tag.indexOf('"', at + 4));
  }
  return out;
}

/** What decoding a cell needs of its workbook. */
interface CellContext {
  wb: OpenWorkbook;
  strings: SharedStringTable;
}

/** A `<v>`'s text (ST_Xstring): XML escapes, then OOXML's `_xHHHH_`. */
const text = (v: string) => unescapeOoxml(unescapeXml(v));

/** One cell's value from its attributes and its XML's inside. */
function decodeCell(a: Record<string, string>, inner: string, ctx: CellContext): CellValue {
  const type = a.t ?? 'n';
  if (type === 'inlineStr') return stringItemText(inner);
  const v = inner ? VALUE.exec(inner)?.[1] : undefined;
  if (v === undefined) {
    const f = inner ? FORMULA.exec(inner) : null;
    if (!f) return undefined;
    const formula = f[1] ? `the formula =${unescapeXml(f[1])}` : 'a shared formula';
    return {
      error: `holds ${formula} without a cached value (the program that saved the workbook did not compute it: open the workbook in Excel, save it and retry)`,
    };
  }
  switch (type) {
    case 's': {
      const s = /^\s*\d+\s*$/.test(v) ? ctx.strings.get(Number(v)) : undefined;
      if (s === undefined)
        return {
          error: `refers to shared string ${JSON.stringify(v)}, but the workbook holds ${ctx.strings.length} (0 to ${ctx.strings.length - 1})`,
        };
      return s;
    }
    case 'str':
      return text(v);
    case 'b':
      if (v === '1' || v === 'true') return true;
      if (v === '0' || v === 'false') return false;
      return { error: `holds the boolean ${JSON.stringify(v)}, expected 1 or 0` };
    case 'e':
      return { error: `holds the error ${text(v)}` };
    case 'd': {
      const iso = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2}))?/.exec(v.trim());
      if (!iso) return { error: `holds the date ${JSON.stringify(v)}, expected ISO 8601` };
      return iso[2] && iso[2] !== '00:00:00' ? `${iso[1]}T${iso[2]}` : iso[1];
    }
    default: {
      if (v.trim() === '') return undefined;
      const n = Number(v);
      if (!Number.isFinite(n)) return { error: `holds the number ${JSON.stringify(v)}, which is not one` };
      const kind = a.s === undefined ? 'number' : (ctx.wb.styles[Number(a.s)] ?? 'number');
      if (kind === 'number') return n;
      const date = serialToIso(n, ctx.wb.date1904, kind === 'time');
      return 'iso' in date ? date.iso : { error: `holds ${date.refused}` };
    }
  }
}

/** One `<row>` element's cells. */
function parseRow(xml: string, number: number, ctx: CellContext, where: (column?: number) => string): CellValue[] {
  const values: CellValue[] = [undefined];
  const { limits, file } = ctx.wb;
  let column = 0;
  for (const m of xml.matchAll(CELL)) {
    const a = cellAttributes(m[1] ?? '');
    column = (a.r === undefined ? undefined : columnOf(a.r)) ?? column + 1;
    if (column > LAST_COLUMN)
      throw new StagecoachError(
        'SOURCE_READ_FAILED',
        `${where(column)}: a cell past column XFD, the last an Excel sheet has: the workbook is damaged`,
        { file, line: number },
      );
    if (m[0].length > limits.cellChars) throw limitPassed(file, `${where(column)}`, "the cell's XML holds", 'cellChars', limits);
    const v = decodeCell(a, m[2] ?? '', ctx);
    if (v !== undefined) values[column] = v;
  }
  return values;
}

/** Why a row's XML passed the row limit: one cell too long (named), or the row (or what precedes it). */
function rowTooLong(pending: string, after: number, ctx: CellContext, label: string): Error {
  const { file, limits } = ctx.wb;
  const rowAttrs = ROW_START.exec(pending)?.[1];
  const number = rowAttrs === undefined ? after + 1 : Number(attributes(rowAttrs).r ?? after + 1);
  const cellAt = Math.max(pending.lastIndexOf('<c '), pending.lastIndexOf(':c '));
  if (cellAt >= 0 && pending.length - cellAt > limits.cellChars && pending.indexOf('</', cellAt) < 0) {
    const ref = attributes(pending.slice(cellAt, pending.indexOf('>', cellAt))).r ?? '';
    return limitPassed(file, `${label}!${ref || number}`, "one cell's XML holds", 'cellChars', limits);
  }
  if (rowAttrs === undefined)
    return limitPassed(file, `${label}!${after + 1}`, `after row ${after}, the XML before the next row holds`, 'rowChars', limits);
  return limitPassed(file, `${label}!${number}`, "the row's XML holds", 'rowChars', limits);
}

/**
 * The rows of one sheet, in the order the sheet holds them; `label` is how messages name the
 * sheet (`klanten.xlsx:Klanten`).
 */
export async function* readSheetRows(
  wb: OpenWorkbook,
  sheet: WorkbookSheet,
  strings: SharedStringTable,
  label: string,
  signal?: AbortSignal,
): AsyncGenerator<SheetRow> {
  const entry = sheet.part === undefined ? undefined : wb.entries.get(sheet.part);
  if (!entry)
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `${label}: the workbook names the sheet but holds no part for it (${sheet.part ?? 'no relationship'}): the workbook is damaged`,
      { file: wb.file },
    );
  const ctx: CellContext = { wb, strings };
  let last = 0;
  const tooLarge = () => limitPassed(wb.file, `${label}!${last + 1}`, `the sheet (${entry.name}) inflates to`, 'sheetBytes', wb.limits);
  const chunks = entryText(wb.path, entry, { file: wb.file, maxBytes: wb.limits.sheetBytes, tooLarge, signal });
  const fail = (why: 'too-long' | 'unclosed', pending: string) =>
    why === 'too-long'
      ? rowTooLong(pending, last, ctx, label)
      : new StagecoachError('SOURCE_READ_FAILED', `${label}!${last + 1}: the sheet's XML ends inside a row: the workbook is damaged`, {
          file: wb.file,
        });
  for await (const xml of xmlElements(chunks, 'row', wb.limits.rowChars, fail)) {
    const r = attributes(ROW_START.exec(xml)?.[1] ?? '').r;
    const number = r === undefined ? last + 1 : Number(r);
    if (!Number.isInteger(number) || number < 1)
      throw new StagecoachError(
        'SOURCE_READ_FAILED',
        `${label}!${last + 1}: a row numbered ${JSON.stringify(r)}: the workbook is damaged`,
        {
          file: wb.file,
        },
      );
    last = number;
    yield { number, values: parseRow(xml, number, ctx, (column) => `${label}!${column ? columnLetters(column) : ''}${number}`) };
  }
}
