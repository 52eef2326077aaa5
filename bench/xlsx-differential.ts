/**
 * The XLSX source's differential check: a generated workbook (xlsx-generated.ts) read cell by
 * cell by our streaming reader (the one `run` uses) and by SheetJS (`@e965/xlsx`, a dev
 * dependency, never on the read path), every cell compared. SheetJS's reading is turned into
 * what the mapping must see by rules of its own (its date codes, its formatted text), not ours:
 * a date as ISO text from `SSF.parse_date_code` in the workbook's date system, a day that
 * does not exist (29 February 1900, day 0, a negative serial) refused, an error cell refused.
 * Cells SheetJS cannot judge (it drops a formula without a cached value, and the whole sheet
 * for a missing shared string) are judged by the generator's own record of them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from '@e965/xlsx';
import { type CellValue, columnLetters } from '../src/pipeline/source/xlsx/cells.js';
import { defaultXlsxLimits } from '../src/pipeline/source/xlsx/options.js';
import { readSheetRows } from '../src/pipeline/source/xlsx/sheet-rows.js';
import { openWorkbook, sharedStrings } from '../src/pipeline/source/xlsx/workbook-parts.js';
import { generateWorkbook } from './xlsx-generated.js';

/** A cell's meaning, comparable: `s:"text"`, `n:12.5`, `b:true`, `refused`, or `-` (no value). */
type Meaning = string;

const two = (n: number) => String(n).padStart(2, '0');

/**
 * Text as compared: SheetJS reads a carriage return written before a line feed (`_x000D_` then a
 * newline, as Excel writes a cell's CRLF) as the line feed alone; ours keeps both, as written.
 */
const text = (s: unknown) => `s:${JSON.stringify(String(s).replace(/\r\n/g, '\n'))}`;

function ours(v: CellValue): Meaning {
  if (v === undefined || v === '') return '-';
  if (typeof v === 'object') return 'refused';
  return typeof v === 'string' ? text(v) : typeof v === 'number' ? `n:${v}` : `b:${v}`;
}

/** What SheetJS's reading of a cell means for the mapping. */
function theirs(c: XLSX.CellObject | undefined, date1904: boolean): Meaning {
  if (c === undefined || c.t === 'z') return '-';
  if (c.t === 'e') return 'refused';
  if (c.t === 'b') return `b:${c.v}`;
  if (c.t === 's') return c.v === '' ? '-' : text(c.v);
  if (c.t !== 'n') return `unexpected SheetJS type ${c.t}`;
  const z = typeof c.z === 'string' ? c.z : undefined;
  if (!z || !XLSX.SSF.is_date(z)) return `n:${c.v}`;
  // A time-of-day format: the text SheetJS shows is the value.
  if (!/[dy]/i.test(z) && (c.v as number) >= 0 && (c.v as number) < 1) return text(c.w);
  const d = XLSX.SSF.parse_date_code(c.v as number, { date1904 }) as {
    y: number;
    m: number;
    d: number;
    H: number;
    M: number;
    S: number;
  } | null;
  if (!d || d.d === 0 || (!date1904 && d.y === 1900 && d.m === 2 && d.d === 29)) return 'refused';
  const day = `${String(d.y).padStart(4, '0')}-${two(d.m)}-${two(d.d)}`;
  return text(d.H || d.M || d.S ? `${day}T${two(d.H)}:${two(d.M)}:${two(d.S)}` : day);
}

/** What comparing one workbook found. */
export interface Comparison {
  cells: number;
  refused: number;
  mismatches: string[];
}

/** One generated workbook, read by both readers and compared cell by cell. */
export async function compareSeed(seed: number, dir?: string): Promise<Comparison> {
  const g = await generateWorkbook(seed);
  const own = dir ?? mkdtempSync(join(tmpdir(), 'stagecoach-xlsx-diff-'));
  const path = join(own, `generated-${seed}.xlsx`);
  writeFileSync(path, g.bytes);
  try {
    const got = new Map<string, CellValue>();
    const wb = await openWorkbook(path, path, defaultXlsxLimits);
    const strings = await sharedStrings(wb);
    const sheet = wb.sheets.find((s) => s.name === g.sheet)!;
    for await (const row of readSheetRows(wb, sheet, strings, `${path}:${g.sheet}`))
      row.values.forEach((v, i) => {
        if (i > 0 && v !== undefined) got.set(`${columnLetters(i)}${row.number}`, v);
      });
    const ref = XLSX.read(g.referenceBytes, { type: 'buffer', cellFormula: true, cellNF: true, cellDates: false, cellText: true });
    const ws = ref.Sheets[g.sheet] ?? {};
    const refs = new Set([...got.keys(), ...Object.keys(ws).filter((k) => !k.startsWith('!')), ...g.refusals.keys()]);
    const out: Comparison = { cells: refs.size, refused: 0, mismatches: [] };
    for (const r of refs) {
      const a = ours(got.get(r));
      const b = g.refusals.has(r) ? 'refused' : theirs(ws[r] as XLSX.CellObject | undefined, g.date1904);
      if (a === 'refused') out.refused++;
      if (a !== b) out.mismatches.push(`seed ${seed} ${r}: ours ${a}, SheetJS ${b}${g.refusals.has(r) ? ` (${g.refusals.get(r)})` : ''}`);
      // A refused error cell names the error SheetJS reads.
      const mine = got.get(r);
      const c = ws[r] as XLSX.CellObject | undefined;
      if (c?.t === 'e' && typeof mine === 'object' && !mine.error.includes(String(c.w)))
        out.mismatches.push(`seed ${seed} ${r}: ours says "${mine.error}", SheetJS reads ${c.w}`);
    }
    return out;
  } finally {
    if (!dir) rmSync(own, { recursive: true, force: true });
    else rmSync(path, { force: true });
  }
}
