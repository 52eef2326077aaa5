/**
 * The parts of a workbook that a sheet's cells need before its rows are read: the workbook part
 * (its sheets in tab order, its date system), its relationships (which part each sheet is),
 * the styles (which cells show a date) and the shared strings (every text Excel stores once).
 * Each is inflated from the zip (zip.ts) under the part limit; the shared strings are held, in
 * memory, for the whole read, since any row may refer to any of them.
 */
import { StagecoachError } from '../../../contract/errors.js';
import type { XlsxLimits } from './options.js';
import { type FormatKind, formatKind } from './serial-date.js';
import { attributes, stringItemText, xmlElements } from './xml-elements.js';
import { entryText, type ZipEntry, zipEntries } from './zip.js';

/** A sheet of a workbook as its workbook part lists it: its name and the zip entry of its XML. */
export interface WorkbookSheet {
  name: string;
  /** The sheet's part, e.g. `xl/worksheets/sheet1.xml`; undefined when the relationships name none. */
  part: string | undefined;
}

/** A limit passed, named as a pipeline sets it. */
export const limitPassed = (file: string, where: string, what: string, limit: keyof XlsxLimits, limits: XlsxLimits) =>
  new StagecoachError(
    'SOURCE_READ_FAILED',
    `${where}: ${what} more than ${limits[limit].toLocaleString('en')}, the limit xlsx.limits.${limit}: the read stops (a damaged or hostile workbook; raise the limit in the pipeline if the workbook is sound)`,
    { file, field: `xlsx.limits.${limit}` },
  );

/** Where a part is, for what is read of it. */
interface PartSource {
  path: string;
  file: string;
  entries: Map<string, ZipEntry>;
  limits: XlsxLimits;
}

/**
 * The `<tag>` elements of a workbook part, streamed under the part limit (none when the zip has
 * no such part): no part is held whole, so a part inflating to a gigabyte costs time up to the
 * limit, never memory.
 */
async function* partElements(at: PartSource, name: string, tag: string, signal?: AbortSignal): AsyncGenerator<string> {
  const { path, file, limits } = at;
  const e = at.entries.get(name);
  if (!e) return;
  const where = `${file}: the workbook part ${name}`;
  const tooLarge = () => limitPassed(file, where, 'it inflates to', 'partBytes', limits);
  const fail = (why: 'too-long' | 'unclosed') =>
    why === 'unclosed'
      ? new StagecoachError('SOURCE_READ_FAILED', `${where} ends inside a <${tag}> element: the workbook is damaged`, { file })
      : limitPassed(file, where, `one <${tag}> element, with what precedes it, holds`, 'rowChars', limits);
  yield* xmlElements(entryText(path, e, { file, maxBytes: limits.partBytes, tooLarge, signal }), tag, limits.rowChars, fail);
}

/** Every start tag of `tag` in a part, as its attributes. */
async function partTags(at: PartSource, name: string, tag: string): Promise<Record<string, string>[]> {
  const tags: Record<string, string>[] = [];
  for await (const xml of partElements(at, name, tag)) tags.push(attributes(/^<[^>]*>/.exec(xml)?.[0] ?? ''));
  return tags;
}

/**
 * The sheets of a workbook in its tab order (`xl/workbook.xml`), which is what a sheet's
 * position means; its parts may be stored in any order and numbered otherwise.
 */
export async function workbookSheets(at: PartSource): Promise<WorkbookSheet[]> {
  const rels = await partTags(at, 'xl/_rels/workbook.xml.rels', 'Relationship');
  return (await partTags(at, 'xl/workbook.xml', 'sheet')).map((a) => {
    const to = rels.find((r) => r.Id === a.id)?.Target;
    return { name: a.name ?? '', part: to === undefined ? undefined : to.startsWith('/') ? to.slice(1) : `xl/${to}` };
  });
}

/** Whether the workbook counts its dates from 1904 (`<workbookPr date1904="1"/>`, a Mac habit). */
async function isDate1904(at: PartSource): Promise<boolean> {
  const v = (await partTags(at, 'xl/workbook.xml', 'workbookPr'))[0]?.date1904;
  return v === '1' || v === 'true';
}

/** What each cell style (`s="3"`, an index into `cellXfs`) makes of a number: a date, a time of day, or a number. */
async function styleKinds(at: PartSource): Promise<FormatKind[]> {
  const codes = new Map<number, string>();
  for (const a of await partTags(at, 'xl/styles.xml', 'numFmt'))
    if (a.numFmtId !== undefined && a.formatCode !== undefined) codes.set(Number(a.numFmtId), a.formatCode);
  const kinds: FormatKind[] = [];
  for await (const xfs of partElements(at, 'xl/styles.xml', 'cellXfs'))
    for (const m of xfs.matchAll(/<(?:\w+:)?xf[\s>/][^>]*>?/g)) {
      const id = Number(attributes(m[0]).numFmtId ?? 0);
      kinds.push(formatKind(id, codes.get(id)));
    }
  return kinds;
}

/** A workbook opened: its zip directory, sheets, date system and cell styles. */
export interface OpenWorkbook {
  path: string;
  file: string;
  limits: XlsxLimits;
  entries: Map<string, ZipEntry>;
  sheets: WorkbookSheet[];
  date1904: boolean;
  styles: FormatKind[];
}

export async function openWorkbook(path: string, file: string, limits: XlsxLimits): Promise<OpenWorkbook> {
  const entries = await zipEntries(path, file);
  if (!entries.has('xl/workbook.xml'))
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `${file}: the zip holds no xl/workbook.xml: not an Excel workbook, expected an XLSX workbook`,
      {
        file,
      },
    );
  const at: PartSource = { path, file, entries, limits };
  return { ...at, sheets: await workbookSheets(at), date1904: await isDate1904(at), styles: await styleKinds(at) };
}

/** Strings per page of the shared-string table. */
const PAGE = 4096;

/**
 * A workbook's shared strings, held compactly: the texts of each page of 4,096 joined into one
 * string, with their offsets in a typed array, so a part of millions of tiny strings (`<si/>`
 * repeated, a bomb within the part limit) costs about 4 bytes a string rather than a string
 * object and a pointer each, and memory stays below the part's own size.
 */
export class SharedStringTable {
  private readonly pages: string[] = [];
  private readonly offsets: Uint32Array[] = [];
  private texts: string[] = [];
  private at = new Uint32Array(PAGE + 1);
  length = 0;

  add(text: string): void {
    const slot = this.length % PAGE;
    this.at[slot + 1] = this.at[slot]! + text.length;
    this.texts.push(text);
    this.length++;
    if (slot === PAGE - 1) this.seal();
  }

  /** The last page, joined (once every string is added). */
  seal(): void {
    if (this.texts.length === 0) return;
    this.pages.push(this.texts.join(''));
    this.offsets.push(this.at);
    this.texts = [];
    this.at = new Uint32Array(PAGE + 1);
  }

  /** The string at an index, or undefined when the table has none there. */
  get(index: number): string | undefined {
    if (!(index >= 0 && index < this.length) || !Number.isInteger(index)) return undefined;
    const page = Math.floor(index / PAGE);
    const slot = index % PAGE;
    const at = this.offsets[page]!;
    return this.pages[page]!.slice(at[slot], at[slot + 1]);
  }
}

/** The shared strings of a workbook, in order (none when it has none), each under its limit. */
export async function sharedStrings(wb: OpenWorkbook, signal?: AbortSignal): Promise<SharedStringTable> {
  const { path, file, limits } = wb;
  const strings = new SharedStringTable();
  const e = wb.entries.get('xl/sharedStrings.xml');
  if (!e) return strings;
  const tooLarge = () => limitPassed(file, `${file}: the shared strings (xl/sharedStrings.xml)`, 'they inflate to', 'partBytes', limits);
  const chunks = entryText(path, e, { file, maxBytes: limits.partBytes, tooLarge, signal });
  const fail = (why: 'too-long' | 'unclosed') =>
    why === 'unclosed'
      ? new StagecoachError(
          'SOURCE_READ_FAILED',
          `${file}: the shared strings end inside shared string ${strings.length}: the workbook is damaged`,
          { file },
        )
      : limitPassed(file, `${file}: shared string ${strings.length}`, 'its XML holds', 'sharedStringChars', limits);
  for await (const si of xmlElements(chunks, 'si', limits.sharedStringChars, fail)) strings.add(stringItemText(si));
  strings.seal();
  return strings;
}
