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
import { attributes, stringItemText, unescapeXml, xmlElements } from './xml-elements.js';
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

/** A whole (small) zip entry as text, under the part limit; '' when the zip has no such entry. */
export async function partText(
  path: string,
  file: string,
  entries: Map<string, ZipEntry>,
  name: string,
  limits: XlsxLimits,
): Promise<string> {
  const e = entries.get(name);
  if (!e) return '';
  let s = '';
  const tooLarge = () => limitPassed(file, `${file}: the workbook part ${name}`, 'it inflates to', 'partBytes', limits);
  for await (const chunk of entryText(path, e, { file, maxBytes: limits.partBytes, tooLarge })) s += chunk;
  return s;
}

/**
 * The sheets of a workbook in its tab order (`xl/workbook.xml`), which is what a sheet's
 * position means; its parts may be stored in any order and numbered otherwise.
 */
export function sheetsOf(workbookXml: string, relsXml: string): WorkbookSheet[] {
  const rels = [...relsXml.matchAll(/<(?:\w+:)?Relationship\s[^>]*>/g)].map((m) => attributes(m[0]));
  return [...workbookXml.matchAll(/<(?:\w+:)?sheet\s[^>]*>/g)].map((m) => {
    const a = attributes(m[0]);
    const to = rels.find((r) => r.Id === a.id)?.Target;
    return { name: a.name ?? '', part: to === undefined ? undefined : to.startsWith('/') ? to.slice(1) : `xl/${to}` };
  });
}

/** Whether the workbook counts its dates from 1904 (`<workbookPr date1904="1"/>`, a Mac habit). */
export function isDate1904(workbookXml: string): boolean {
  const pr = /<(?:\w+:)?workbookPr\s[^>]*>/.exec(workbookXml)?.[0];
  const v = pr ? attributes(pr).date1904 : undefined;
  return v === '1' || v === 'true';
}

/** What each cell style (`s="3"`, an index into `cellXfs`) makes of a number: a date, a time of day, or a number. */
export function styleKinds(stylesXml: string): FormatKind[] {
  const codes = new Map<number, string>();
  for (const m of stylesXml.matchAll(/<(?:\w+:)?numFmt\s[^>]*>/g)) {
    const a = attributes(m[0]);
    if (a.numFmtId !== undefined && a.formatCode !== undefined) codes.set(Number(a.numFmtId), a.formatCode);
  }
  const xfs = /<(?:\w+:)?cellXfs[\s>][\s\S]*?<\/(?:\w+:)?cellXfs>/.exec(stylesXml)?.[0] ?? '';
  return [...xfs.matchAll(/<(?:\w+:)?xf[\s>/][^>]*>?/g)].map((m) => {
    const id = Number(attributes(m[0]).numFmtId ?? 0);
    return formatKind(id, codes.get(id));
  });
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
  const workbookXml = await partText(path, file, entries, 'xl/workbook.xml', limits);
  if (!workbookXml)
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `${file}: the zip holds no xl/workbook.xml: not an Excel workbook, expected an XLSX workbook`,
      {
        file,
      },
    );
  const rels = await partText(path, file, entries, 'xl/_rels/workbook.xml.rels', limits);
  return {
    path,
    file,
    limits,
    entries,
    sheets: sheetsOf(workbookXml, rels),
    date1904: isDate1904(workbookXml),
    styles: styleKinds(await partText(path, file, entries, 'xl/styles.xml', limits)),
  };
}

/** The shared strings of a workbook, in order ([] when it has none), each under its limit. */
export async function sharedStrings(wb: OpenWorkbook, signal?: AbortSignal): Promise<string[]> {
  const { path, file, limits } = wb;
  const e = wb.entries.get('xl/sharedStrings.xml');
  if (!e) return [];
  const strings: string[] = [];
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
  for await (const si of xmlElements(chunks, 'si', limits.sharedStringChars, fail)) strings.push(stringItemText(si));
  return strings;
}

export { unescapeXml };
