/**
 * The independent count of an XLSX sheet (docs/pipelines.md, "Every row counted twice"): the
 * sheet's `<row>` elements and which of them hold no value, counted from the workbook's own
 * bytes — its zip directory read here and the sheet's XML inflated with node:zlib and scanned
 * for rows and cells — apart from exceljs, whose reader makes the rows. Streams: memory holds
 * one row's XML and the set of shared strings that are empty.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';

interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  localHeader: number;
}

/** The entries of a zip file, from its central directory (zip64 sizes and offsets included). */
async function zipEntries(path: string): Promise<Map<string, ZipEntry>> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tail = Buffer.alloc(Math.min(size, 65_557));
    await fh.read(tail, 0, tail.length, size - tail.length);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error('no zip directory at its end: not a workbook (an XLSX file is a zip)');
    let count = tail.readUInt16LE(eocd + 10);
    let dirSize = tail.readUInt32LE(eocd + 12);
    let dirOffset = tail.readUInt32LE(eocd + 16);
    if (dirOffset === 0xffffffff || count === 0xffff) {
      const locator = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x06, 0x07]), eocd);
      const record = Buffer.alloc(56);
      await fh.read(record, 0, 56, Number(tail.readBigUInt64LE(locator + 8)));
      count = Number(record.readBigUInt64LE(32));
      dirSize = Number(record.readBigUInt64LE(40));
      dirOffset = Number(record.readBigUInt64LE(48));
    }
    const dir = Buffer.alloc(dirSize);
    await fh.read(dir, 0, dirSize, dirOffset);
    const entries = new Map<string, ZipEntry>();
    for (let at = 0, i = 0; i < count && dir.readUInt32LE(at) === 0x02014b50; i++) {
      const nameLength = dir.readUInt16LE(at + 28);
      const extraLength = dir.readUInt16LE(at + 30);
      const name = dir.toString('utf8', at + 46, at + 46 + nameLength);
      let compressedSize = dir.readUInt32LE(at + 20);
      const uncompressed = dir.readUInt32LE(at + 24);
      let localHeader = dir.readUInt32LE(at + 42);
      // Zip64: the sizes and offset that do not fit 32 bits follow in the extra field 0x0001, in this order.
      for (let x = at + 46 + nameLength; x < at + 46 + nameLength + extraLength; x += 4 + dir.readUInt16LE(x + 2)) {
        if (dir.readUInt16LE(x) !== 1) continue;
        let y = x + 4;
        if (uncompressed === 0xffffffff) y += 8;
        if (compressedSize === 0xffffffff) (compressedSize = Number(dir.readBigUInt64LE(y))), (y += 8);
        if (localHeader === 0xffffffff) localHeader = Number(dir.readBigUInt64LE(y));
      }
      entries.set(name, { name, method: dir.readUInt16LE(at + 10), compressedSize, localHeader });
      at += 46 + nameLength + extraLength + dir.readUInt16LE(at + 32);
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/** The text of one zip entry, streamed. */
async function* entryText(path: string, entry: ZipEntry): AsyncGenerator<string> {
  const fh = await open(path, 'r');
  const local = Buffer.alloc(30);
  try {
    await fh.read(local, 0, 30, entry.localHeader);
  } finally {
    await fh.close();
  }
  const start = entry.localHeader + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (entry.compressedSize === 0) return;
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1 });
  const bytes = entry.method === 8 ? raw.pipe(createInflateRaw()) : raw;
  bytes.setEncoding('utf8');
  yield* bytes as AsyncIterable<string>;
}

/** The complete elements `<tag …>…</tag>` (or `<tag …/>`) of a streamed XML text, one at a time. */
async function* elements(chunks: AsyncIterable<string>, tag: string): AsyncGenerator<string> {
  const open = new RegExp(`<${tag}[\\s>/]`, 'g');
  const close = `</${tag}>`;
  let text = '';
  for await (const chunk of chunks) {
    text += chunk;
    let from = 0;
    for (;;) {
      open.lastIndex = from;
      const m = open.exec(text);
      if (!m) {
        from = Math.max(from, text.length - tag.length - 2); // keep a tag cut at the chunk's end
        break;
      }
      const tagEnd = text.indexOf('>', m.index);
      if (tagEnd < 0) {
        from = m.index;
        break;
      }
      const closed = text[tagEnd - 1] === '/' ? tagEnd + 1 - close.length : text.indexOf(close, tagEnd);
      if (closed < 0) {
        from = m.index;
        break;
      }
      yield text.slice(m.index, closed + close.length);
      from = closed + close.length;
    }
    text = text.slice(from);
  }
}

/** The text of `<t>` runs of an element (a shared string, an inline string). */
const textOf = (xml: string) => [...xml.matchAll(/<t(?:\s[^>]*)?>([^<]*)<\/t>/g)].map((m) => m[1]).join('');

/** Whether a `<row>` holds a value: a cell with a non-empty value, an inline string with text, or an error. */
function rowHasValue(row: string, emptyStrings: ReadonlySet<number>): boolean {
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

/** What the count found: every `<row>` of the sheet and those without a value, by row number. */
export interface SheetRowCount {
  rows: number;
  /** Rows that hold no value. */
  emptyRows: number;
}

/** A whole (small) zip entry as text; '' when the zip has no such entry. */
async function entryWhole(path: string, entries: Map<string, ZipEntry>, name: string): Promise<string> {
  const e = entries.get(name);
  if (!e) return '';
  let s = '';
  for await (const chunk of entryText(path, e)) s += chunk;
  return s;
}

const unescapeXml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** A sheet of a workbook as its workbook part lists it: its name and the zip entry of its XML. */
export interface WorkbookSheet {
  name: string;
  /** The sheet's part, e.g. `xl/worksheets/sheet1.xml`; undefined when the relationships name none. */
  part: string | undefined;
}

/**
 * The sheets of a workbook in its tab order (`xl/workbook.xml`), which is what a sheet's
 * position means; its parts may be stored in any order and numbered otherwise.
 */
export async function workbookSheets(path: string, entries?: Map<string, ZipEntry>): Promise<WorkbookSheet[]> {
  const zip = entries ?? (await zipEntries(path));
  const rels = [...(await entryWhole(path, zip, 'xl/_rels/workbook.xml.rels')).matchAll(/<Relationship\s[^>]*>/g)].map((m) => m[0]);
  return [...(await entryWhole(path, zip, 'xl/workbook.xml')).matchAll(/<sheet\s[^>]*>/g)].map((m) => {
    const rel = /\sr:id="([^"]*)"/.exec(m[0])?.[1];
    const target = rels.find((r) => r.includes(` Id="${rel}"`));
    const to = target && /\sTarget="([^"]*)"/.exec(target)?.[1];
    return {
      name: unescapeXml(/\sname="([^"]*)"/.exec(m[0])?.[1] ?? ''),
      part: to === undefined ? undefined : to.startsWith('/') ? to.slice(1) : `xl/${to}`,
    };
  });
}

/**
 * Counts the `<row>` elements of the sheet named (by name or position, as xlsx.sheet) and which
 * hold no value; undefined when the workbook has no such sheet (the reader says so).
 */
export async function countSheetRows(path: string, sheet: string | number): Promise<SheetRowCount | undefined> {
  const entries = await zipEntries(path);
  const sheets = await workbookSheets(path, entries);
  const chosen = typeof sheet === 'number' ? sheets[sheet - 1] : sheets.find((s) => s.name === sheet);
  const entry = chosen?.part === undefined ? undefined : entries.get(chosen.part);
  if (!entry) return undefined;
  const emptyStrings = new Set<number>();
  const shared = entries.get('xl/sharedStrings.xml');
  if (shared) {
    let index = 0;
    for await (const si of elements(entryText(path, shared), 'si')) {
      if (textOf(si.replace(/<rPh[\s\S]*?<\/rPh>/g, '')) === '') emptyStrings.add(index);
      index++;
    }
  }
  const count: SheetRowCount = { rows: 0, emptyRows: 0 };
  for await (const row of elements(entryText(path, entry), 'row')) {
    count.rows++;
    if (!rowHasValue(row, emptyStrings)) count.emptyRows++;
  }
  return count;
}
