/**
 * Hostile and damaged workbooks in small (issue 41): each limit of `xlsx.limits` stops the read
 * with file, sheet, row (or shared string) and the limit named, here with the limits set low so
 * the files stay small; the bench (`npm run bench -- hostile-workbooks`) reads the 1 GiB zip bombs
 * at the default limits and prints their peak RSS. Damaged zips (bytes flipped, a CRC that does
 * not match, a part stored twice) are read failures naming the part, never rows read wrong.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSZip from 'jszip';
import { workbookBytes, type WorkbookXml } from '../../bench/xlsx-generated.js';
import { xlsxOptionsSchema, type XlsxLimits } from '../../src/pipeline/source/xlsx/options.js';
import { readXlsxBatches } from '../../src/pipeline/source/xlsx/stream.js';
import { tempDir } from '../support/service.js';

const dir = tempDir('stagecoach-xlsx-limits-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = '<row r="1"><c r="A1" t="inlineStr"><is><t>nr</t></is></c><c r="B1" t="inlineStr"><is><t>naam</t></is></c></row>';
const row = (n: number, naam = `Naam ${n}`) =>
  `<row r="${n}"><c r="A${n}"><v>${n}</v></c><c r="B${n}" t="inlineStr"><is><t>${naam}</t></is></c></row>`;

let n = 0;
async function write(w: WorkbookXml): Promise<string> {
  const path = join(dir, `w${++n}.xlsx`);
  writeFileSync(path, await workbookBytes(w));
  return path;
}

async function read(path: string, limits: Partial<XlsxLimits> = {}) {
  const xlsx = xlsxOptionsSchema.parse({ sheet: 'Data', limits });
  let rows = 0;
  for await (const batch of readXlsxBatches({ source: 's', path, file: 'w.xlsx', xlsx, hashRows: false })) rows += batch.length;
  return rows;
}

describe('limits', () => {
  it('are declared once with defaults, and a pipeline may set each', () => {
    const d = xlsxOptionsSchema.parse({});
    expect(d.limits).toEqual({
      sheetBytes: 4096 * 2 ** 20,
      partBytes: 128 * 2 ** 20,
      rowChars: 16 * 2 ** 20,
      cellChars: 2 ** 20,
      sharedStringChars: 2 ** 20,
    });
    expect(xlsxOptionsSchema.parse({ limits: { cellChars: 100 } }).limits.cellChars).toBe(100);
    expect(() => xlsxOptionsSchema.parse({ limits: { cells: 100 } })).toThrow();
  });

  it('stops at a run of whitespace between rows longer than a row may be, naming the row after it', async () => {
    const path = await write({ sheetXml: `<sheetData>${HEADER}${row(2)}${row(3)}${' '.repeat(300_000)}${row(4)}</sheetData>` });
    expect(await read(path)).toBe(3); // within the default
    await expect(read(path, { rowChars: 100_000 })).rejects.toThrow(
      'w.xlsx:Data!4: after row 3, the XML before the next row holds more than 100,000, the limit xlsx.limits.rowChars: the read stops',
    );
  });

  it('stops at one cell longer than a cell may be, naming the cell, whether its row ends or not', async () => {
    const long = 'x'.repeat(300_000);
    const path = await write({ sheetXml: `<sheetData>${HEADER}${row(2)}${row(3, long)}</sheetData>` });
    await expect(read(path, { cellChars: 100_000 })).rejects.toThrow(
      "w.xlsx:Data!B3: the cell's XML holds more than 100,000, the limit xlsx.limits.cellChars",
    );
    await expect(read(path, { cellChars: 100_000, rowChars: 200_000 })).rejects.toThrow(
      "w.xlsx:Data!B3: one cell's XML holds more than 100,000, the limit xlsx.limits.cellChars",
    );
    await expect(read(path, { rowChars: 200_000 })).rejects.toThrow(
      "w.xlsx:Data!3: the row's XML holds more than 200,000, the limit xlsx.limits.rowChars",
    );
  });

  it('stops at one shared string longer than a shared string may be, and at a part that inflates past its limit', async () => {
    const sharedStrings = ['<si><t>nr</t></si>', `<si><r><t>${'y'.repeat(300_000)}</t></r></si>`];
    const path = await write({ sheetXml: `<sheetData>${HEADER}${row(2)}</sheetData>`, sharedStrings });
    await expect(read(path, { sharedStringChars: 100_000 })).rejects.toThrow(
      'w.xlsx: shared string 1: its XML holds more than 100,000, the limit xlsx.limits.sharedStringChars',
    );
    await expect(read(path, { partBytes: 100_000 })).rejects.toThrow(
      'w.xlsx: the shared strings (xl/sharedStrings.xml): they inflate to more than 100,000, the limit xlsx.limits.partBytes',
    );
    const big = await write({ sheetXml: `<sheetData>${HEADER}${Array.from({ length: 3000 }, (_, i) => row(i + 2)).join('')}</sheetData>` });
    await expect(read(big, { sheetBytes: 50_000 })).rejects.toThrow(
      /^w\.xlsx:Data!\d+: the sheet \(xl\/worksheets\/sheet1\.xml\) inflates to more than 50,000, the limit xlsx\.limits\.sheetBytes/,
    );
  });
});

describe('damaged zips', () => {
  /** The workbook's bytes and where the sheet's stored data begins and how long it is. */
  async function stored(compression: 'DEFLATE' | 'STORE') {
    const path = await write({
      sheetXml: `<sheetData>${HEADER}${Array.from({ length: 500 }, (_, i) => row(i + 2)).join('')}</sheetData>`,
      compression,
    });
    const bytes = readFileSync(path);
    const name = Buffer.from('xl/worksheets/sheet1.xml');
    let at = bytes.indexOf(Buffer.from('PK\x03\x04', 'latin1'));
    while (!bytes.subarray(at + 30, at + 30 + name.length).equals(name)) at = bytes.indexOf(Buffer.from('PK\x03\x04', 'latin1'), at + 4);
    return { path, bytes, start: at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28), size: bytes.readUInt32LE(at + 18) };
  }

  it('refuses a sheet whose compressed bytes were flipped, naming the part, never hanging', async () => {
    const { path, bytes, start, size } = await stored('DEFLATE');
    for (let i = 0; i < 40; i++) bytes[start + Math.floor(size / 2) + i]! ^= 0xff;
    writeFileSync(path, bytes);
    await expect(read(path)).rejects.toThrow(
      /^w\.xlsx: the workbook part xl\/worksheets\/sheet1\.xml is damaged \(.+\): the workbook cannot be read/,
    );
  });

  it('refuses a stored sheet whose bytes changed, by its CRC-32, rather than hand on a changed value', async () => {
    const { path, bytes, start, size } = await stored('STORE');
    const text = bytes.toString('latin1', start, start + size);
    const at = start + text.indexOf('Naam 250');
    bytes[at] = 'M'.charCodeAt(0); // "Maam 250": well-formed, wrong
    writeFileSync(path, bytes);
    await expect(read(path)).rejects.toThrow(
      'w.xlsx: the workbook part xl/worksheets/sheet1.xml is damaged (its CRC-32 does not match its zip directory)',
    );
  });

  it('refuses a cell past column XFD (a sheet of a billion columns would be an array as long)', async () => {
    const path = await write({ sheetXml: `<sheetData>${HEADER}<row r="2"><c r="ZZZZZZ2"><v>1</v></c></row></sheetData>` });
    await expect(read(path)).rejects.toThrow(
      'w.xlsx:Data!ZZZZZZ2: a cell past column XFD, the last an Excel sheet has: the workbook is damaged',
    );
  });

  it('refuses a zip that holds a part twice', async () => {
    const path = await write({ sheetXml: `<sheetData>${HEADER}${row(2)}</sheetData>` });
    const zip = await JSZip.loadAsync(readFileSync(path));
    const bytes = await zip.generateAsync({ type: 'nodebuffer' });
    // Renaming the notes sheet's part to the data sheet's: two entries of one name.
    const twice = Buffer.from(bytes.toString('latin1').replaceAll('xl/worksheets/sheet2.xml', 'xl/worksheets/sheet1.xml'), 'latin1');
    writeFileSync(path, twice);
    await expect(read(path)).rejects.toThrow('w.xlsx: its zip holds "xl/worksheets/sheet1.xml" twice: not a workbook');
  });
});
