/**
 * Generated workbooks for the XLSX source's differential test (test/unit/xlsx-differential.test.ts,
 * a few dozen; `npm run bench -- xlsx-differential`, thousands): seeded, written part by part as
 * Excel and other writers write them, with every kind of cell the reader must read whole —
 * shared and inline text, plain and in rich-text runs (with phonetic runs, escapes, `_xHHHH_`),
 * formulas with a cached value of each type and without one, numbers, booleans, error cells,
 * dates and times in the 1900 and 1904 systems (the edges too: serials below 61, 60, 0, below
 * 0), shared-string indexes out of range, cells with and without references, empty cells.
 * What each cell means is read by two readers (ours and SheetJS) and compared; the generator
 * only has to make the cells.
 */
import JSZip from 'jszip';
import { mulberry32 } from '../src/pipeline/samples/generate-crm.js';

/** Seeds the generator is tuned on; the check range is never looked at while building. */
export const DEVELOPMENT_SEEDS = { from: 1, to: 200 };
export const CHECK_SEEDS = { from: 70_001, to: 75_000 };

/** A seeded generator (mulberry32, the samples' own): the same seed, the same numbers. */
export const random = mulberry32;

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Cell styles: index into cellXfs → number format (built-in id, or custom code at 164+). */
const FORMATS: { id: number; code?: string }[] = [
  { id: 0 },
  { id: 14 },
  { id: 164, code: 'dd/mm/yyyy' },
  { id: 165, code: 'yyyy-mm-dd hh:mm:ss' },
  { id: 166, code: 'hh:mm:ss' },
  { id: 2 },
  { id: 167, code: '#,##0.00 "kr"' },
  { id: 22 },
];
export const STYLE = { general: 0, date14: 1, dmy: 2, dateTime: 3, time: 4, fixed2: 5, kroner: 6, date22: 7 };

const WORDS = [
  'Wright',
  'Byrne',
  'de Vries',
  "O'Neil",
  'Łukasz',
  'Müller',
  'Ørsted',
  '山田',
  'Zoë',
  'A&B <Co>',
  '"quoted"',
  '  padded  ',
  'tab\there',
  'x_y',
  '🙂 smile',
  'line\nbreak',
  'Čapek',
];
const ERRORS = ['#N/A', '#VALUE!', '#REF!', '#DIV/0!', '#NAME?', '#NUM!', '#NULL!'];

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const column = (n: number) => {
  let s = '';
  for (let i = n; i > 0; i = Math.floor((i - 1) / 26)) s = String.fromCharCode(65 + ((i - 1) % 26)) + s;
  return s;
};

/** One text as `<t>` runs: plain, or split into rich-text runs with formatting, sometimes with a phonetic run. */
function textXml(pick: () => number, text: string): string {
  const t = (s: string) => `<t${/^\s|\s$|\n|\t/.test(s) ? ' xml:space="preserve"' : ''}>${escapeXml(s).replace(/\r/g, '_x000D_')}</t>`;
  if (pick() < 0.5 || text.length < 2) return t(text);
  const cuts = [...new Set([0, 1 + Math.floor(pick() * (text.length - 1)), 1 + Math.floor(pick() * (text.length - 1)), text.length])].sort(
    (a, b) => a - b,
  );
  let xml = '';
  for (let i = 0; i + 1 < cuts.length; i++) {
    const run = text.slice(cuts[i], cuts[i + 1]);
    const pr =
      pick() < 0.6
        ? `<rPr>${pick() < 0.5 ? '<b/>' : '<i/>'}<sz val="11"/><color rgb="FF${Math.floor(pick() * 0xffffff)
            .toString(16)
            .padStart(6, '0')}"/><rFont val="Calibri"/><family val="2"/></rPr>`
        : '';
    xml += `<r>${pr}${t(run)}</r>`;
  }
  if (pick() < 0.15) xml += '<rPh sb="0" eb="1"><t>ヤマダ</t></rPh><phoneticPr fontId="1"/>';
  return xml;
}

/** A random text: a word or two, sometimes with a carriage return written as `_x000D_`. */
function someText(pick: () => number): string {
  const w = WORDS[Math.floor(pick() * WORDS.length)]!;
  if (pick() < 0.3) return `${w} ${WORDS[Math.floor(pick() * WORDS.length)]!}`;
  if (pick() < 0.05) return `${w}\r\n2`;
  return w;
}

/** A date-ish serial: usually an ordinary day, sometimes an edge of the 1900 system. */
function someSerial(pick: () => number, withTime: boolean): number {
  const r = pick();
  let day: number;
  if (r < 0.06) day = 60;
  else if (r < 0.12) day = 1 + Math.floor(pick() * 59);
  else if (r < 0.15) day = 61;
  else if (r < 0.18) day = -Math.ceil(pick() * 10);
  else if (r < 0.2) day = 0;
  else day = 10_000 + Math.floor(pick() * 45_000);
  const seconds = withTime ? Math.floor(pick() * 86_400) : 0;
  return day + seconds / 86_400;
}

/**
 * Cells whose meaning the reference reader cannot give: SheetJS drops a formula's cell when it
 * has no cached value, and drops the whole sheet when a cell refers to a shared string the
 * workbook lacks. The generator knows them; both must be refused by our reader.
 */
export type KnownRefusal = 'formula without a cached value' | 'shared string out of range';

/** A cell's XML and, for the cells above, why it must be refused. */
interface Cell {
  xml: string;
  refuse?: KnownRefusal;
}

/** One cell's XML (`<c …>…</c>`), or '' for no cell. */
function cellXml(pick: () => number, ref: string | undefined, sharedRich: () => number): Cell {
  const cell = xmlOf(pick, ref, sharedRich);
  if (cell.startsWith('!'))
    return { xml: cell.slice(2), refuse: cell[1] === 'f' ? 'formula without a cached value' : 'shared string out of range' };
  return { xml: cell };
}

function xmlOf(pick: () => number, ref: string | undefined, sharedRich: () => number): string {
  const r = ref === undefined ? '' : ` r="${ref}"`;
  const kind = pick();
  if (kind < 0.1) return '';
  if (kind < 0.13) return `<c${r} s="${STYLE.dmy}"/>`; // styled, empty
  if (kind < 0.28) {
    const n = pick() < 0.5 ? Math.floor(pick() * 100_000) - 500 : Math.round((pick() * 1e6 - 5e5) * 1e4) / 1e4;
    const s = pick() < 0.3 ? (pick() < 0.5 ? STYLE.fixed2 : STYLE.kroner) : STYLE.general;
    return `<c${r}${s ? ` s="${s}"` : ''}><v>${pick() < 0.05 ? n.toExponential() : n}</v></c>`;
  }
  if (kind < 0.45) return `<c${r} t="s"><v>${sharedRich()}</v></c>`;
  if (kind < 0.58) return `<c${r} t="inlineStr"><is>${textXml(pick, someText(pick))}</is></c>`;
  if (kind < 0.7) {
    const which = pick();
    const style =
      which < 0.25 ? STYLE.date14 : which < 0.5 ? STYLE.dmy : which < 0.7 ? STYLE.date22 : which < 0.85 ? STYLE.dateTime : STYLE.time;
    const serial =
      style === STYLE.time ? Math.floor(pick() * 86_400) / 86_400 : someSerial(pick, style === STYLE.dateTime || style === STYLE.date22);
    return `<c${r} s="${style}"><v>${serial}</v></c>`;
  }
  if (kind < 0.75) return `<c${r} t="b"><v>${pick() < 0.5 ? 1 : 0}</v></c>`;
  if (kind < 0.79) return `<c${r} t="e"><v>${escapeXml(ERRORS[Math.floor(pick() * ERRORS.length)]!)}</v></c>`;
  if (kind < 0.9) {
    const f = escapeXml(['SUM(A1:A3)', 'DATE(1980,1,6)', 'A1&"x"', 'IF(A1>0,TRUE,FALSE)', 'NA()'][Math.floor(pick() * 5)]!);
    const c = pick();
    if (c < 0.3) return `!f<c${r}><f>${f}</f></c>`; // never computed: no cached value
    if (c < 0.5) return `<c${r}><f>${f}</f><v>${Math.floor(pick() * 1000)}</v></c>`;
    if (c < 0.65) return `<c${r} t="str"><f>${f}</f><v>${escapeXml(someText(pick))}</v></c>`;
    if (c < 0.75) return `<c${r} t="b"><f>${f}</f><v>1</v></c>`;
    if (c < 0.85) return `<c${r} t="e"><f>${f}</f><v>#N/A</v></c>`;
    return `<c${r} s="${STYLE.date14}"><f>${f}</f><v>${10_000 + Math.floor(pick() * 40_000)}</v></c>`;
  }
  if (kind < 0.93) return `!s<c${r} t="s"><v>${1_000_000 + Math.floor(pick() * 5)}</v></c>`; // no such shared string
  return `<c${r} t="s"><v>${sharedRich()}</v></c>`;
}

/** A workbook of one sheet of random cells (and a notes sheet before it), as bytes. */
export interface GeneratedWorkbook {
  bytes: Buffer;
  /** The same workbook without the cells that refer to missing shared strings: what SheetJS is given. */
  referenceBytes: Buffer;
  date1904: boolean;
  sheet: string;
  /** Cells (by reference) that must be refused, and why. */
  refusals: Map<string, KnownRefusal>;
}

export async function generateWorkbook(seed: number): Promise<GeneratedWorkbook> {
  const pick = random(seed);
  const date1904 = pick() < 0.3;
  const strings: string[] = [];
  const sharedRich = () => {
    if (strings.length > 0 && pick() < 0.3) return Math.floor(pick() * strings.length);
    strings.push(`<si>${textXml(pick, someText(pick))}</si>`);
    return strings.length - 1;
  };
  const rows: { n: number; cells: Cell[]; spans: string }[] = [];
  const refusals = new Map<string, KnownRefusal>();
  const width = 3 + Math.floor(pick() * 8);
  const height = 5 + Math.floor(pick() * 40);
  for (let n = 1; n <= height; n++) {
    const withRefs = pick() < 0.85;
    const cells: Cell[] = [];
    for (let c = 1; c <= width; c++) {
      const ref = `${column(c)}${n}`;
      const cell = cellXml(pick, ref, sharedRich);
      if (cell.refuse) refusals.set(ref, cell.refuse);
      cells.push(cell);
      if (!withRefs && cell.xml === '') break; // a cell without a reference follows the one before: none after a gap
    }
    // A cell the reference reader is not given must not shift the cells after it: such a row keeps its references.
    if (!withRefs && !cells.some((c) => c.refuse === 'shared string out of range'))
      cells.forEach((c, i) => (c.xml = c.xml.replace(` r="${column(i + 1)}${n}"`, '')));
    rows.push({ n, cells, spans: pick() < 0.5 ? ` spans="1:${width}"` : '' });
  }
  const newline = pick() < 0.5 ? '\n' : '';
  const sheetData = (keep: (c: Cell) => boolean) =>
    rows.map((r) => `<row r="${r.n}"${r.spans}>${r.cells.map((c) => (keep(c) ? c.xml : '')).join('')}</row>`).join(newline);
  const sheet = 'Data';
  const write = (keep: (c: Cell) => boolean) =>
    workbookBytes({
      date1904,
      sheetName: sheet,
      sheetXml: `<dimension ref="A1:${column(width)}${height}"/><sheetData>${sheetData(keep)}</sheetData>`,
      sharedStrings: strings,
    });
  const bytes = await write(() => true);
  const referenceBytes = await write((c) => c.refuse !== 'shared string out of range');
  return { bytes, referenceBytes, date1904, sheet, refusals };
}

/** What a workbook written part by part holds: its sheet's XML inside `<worksheet>`, its `<si>` items, its date system. */
export interface WorkbookXml {
  sheetName?: string;
  /** The inside of the sheet's `<worksheet>` element (`<sheetData>…</sheetData>`). */
  sheetXml: string;
  /** The `<si>` elements of the shared strings. */
  sharedStrings?: string[];
  date1904?: boolean;
  compression?: 'DEFLATE' | 'STORE';
}

/**
 * A workbook of a notes sheet and one sheet, written part by part as Excel lays them out, with
 * the cell styles of {@link STYLE}: what tests and benches write their own cells into.
 */
export async function workbookBytes(w: WorkbookXml): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
  );
  zip.file(
    '_rels/.rels',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  );
  zip.file(
    'xl/workbook.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="${NS}" xmlns:r="${REL}"><workbookPr${w.date1904 ? ' date1904="1"' : ''}/><sheets><sheet name="Notes" sheetId="2" r:id="rId2"/><sheet name="${escapeXml(w.sheetName ?? 'Data')}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  );
  zip.file(
    'xl/_rels/workbook.xml.rels',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL}/worksheet" Target="worksheets/sheet2.xml"/><Relationship Id="rId3" Type="${REL}/styles" Target="styles.xml"/><Relationship Id="rId4" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
  );
  const custom = FORMATS.filter((f) => f.code !== undefined);
  zip.file(
    'xl/styles.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><styleSheet xmlns="${NS}"><numFmts count="${custom.length}">${custom
      .map((f) => `<numFmt numFmtId="${f.id}" formatCode="${escapeXml(f.code!)}"/>`)
      .join(
        '',
      )}</numFmts><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="${FORMATS.length}">${FORMATS.map(
      (f) => `<xf numFmtId="${f.id}" fontId="0" fillId="0" borderId="0" xfId="0"${f.id ? ' applyNumberFormat="1"' : ''}/>`,
    ).join('')}</cellXfs></styleSheet>`,
  );
  const strings = w.sharedStrings ?? [];
  zip.file(
    'xl/sharedStrings.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="${NS}" count="${strings.length}" uniqueCount="${strings.length}">${strings.join('')}</sst>`,
  );
  zip.file(
    'xl/worksheets/sheet1.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="${NS}" xmlns:r="${REL}">${w.sheetXml}</worksheet>`,
  );
  zip.file(
    'xl/worksheets/sheet2.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="${NS}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>notes</t></is></c></row></sheetData></worksheet>`,
  );
  return zip.generateAsync({ type: 'nodebuffer', compression: w.compression ?? 'DEFLATE', compressionOptions: { level: 9 } });
}
