/**
 * The XLSX source on workbooks written by exceljs (the truth is what the test wrote): cell types
 * as the mapping sees them, the sheet chosen by name or position, header cells left empty (a
 * merged cell), empty trailing rows and columns, refused cells named by sheet and cell, and a
 * row read back at its provenance.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { readFileSync, writeFileSync } from 'node:fs';
import { newTally, readRowAt, tallyDisagreement, type SourceTally } from '../../src/pipeline/source/index.js';
import { readXlsxBatches } from '../../src/pipeline/source/xlsx/stream.js';
import { cellValue, columnLetters, headerNames } from '../../src/pipeline/source/xlsx/cells.js';
import { countSheetRows } from '../../src/pipeline/source/xlsx/count-rows.js';
import { tempDir } from '../support/service.js';

const dir = tempDir('stagecoach-xlsx-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function workbook(name: string, fill: (wb: ExcelJS.Workbook) => void): Promise<string> {
  const wb = new ExcelJS.Workbook();
  fill(wb);
  const path = join(dir, name);
  await wb.xlsx.writeFile(path);
  return path;
}

async function rows(path: string, xlsx: { sheet: string | number; headerRow: number }) {
  const out: unknown[] = [];
  for await (const batch of readXlsxBatches({ source: 's', path, file: 'w.xlsx', xlsx, hashRows: false }))
    for (const r of batch) out.push('values' in r ? [r.provenance.line, r.values] : [r.provenance.line, r.message]);
  return out;
}

describe('xlsx cells', () => {
  it('keeps what the sheet reader decoded, an empty text being no value', () => {
    expect(cellValue('1980-05-17')).toBe('1980-05-17');
    expect(cellValue(12.5)).toBe(12.5);
    expect(cellValue(true)).toBe(true);
    expect(cellValue('')).toBeUndefined();
    expect(cellValue({ error: 'holds the error #N/A' })).toEqual({ error: 'holds the error #N/A' });
    expect(cellValue(undefined)).toBeUndefined();
  });

  it('names empty header cells by their column letters and drops empty trailing ones', () => {
    expect(headerNames([undefined, 'nr', ' naam ', undefined, 'plaats', undefined, undefined])).toEqual(['nr', 'naam', 'C', 'plaats']);
    expect([1, 26, 27, 52, 703].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'AZ', 'AAA']);
  });
});

describe('readXlsxBatches', () => {
  it("hashes each row as the ledger keeps it: the first 128 bits of the sha256 of its cells' values as JSON", async () => {
    const path = await workbook('hash.xlsx', (wb) => {
      const ws = wb.addWorksheet('Klanten');
      ws.addRow(['nr', 'naam']);
      ws.addRow([1001, 'Jansen']);
      ws.addRow([1002, 'de Vries']);
    });
    const hashes: string[] = [];
    for await (const batch of readXlsxBatches({ source: 's', path, file: 'w.xlsx', xlsx: { sheet: 1, headerRow: 1 }, hashRows: true }))
      for (const r of batch) hashes.push(r.provenance.hash);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
    expect(hashes).toEqual([sha('[1001,"Jansen"]'), sha('[1002,"de Vries"]')]);
  });

  it('reads the named sheet after its header row, dates as dates whatever their format, skipping empty rows', async () => {
    const path = await workbook('a.xlsx', (wb) => {
      wb.addWorksheet('Eerst').addRow(['x']);
      const ws = wb.addWorksheet('Klanten');
      ws.addRow(['Export']);
      ws.mergeCells('A1:D1');
      ws.addRow(['nr', 'naam', 'geboren', 'inkomen']);
      ws.addRow([1001, 'Jansen', new Date(Date.UTC(1980, 4, 17)), 1234.5]);
      ws.getCell('C3').numFmt = 'dd/mm/yyyy';
      ws.addRow([]);
      ws.addRow([1002, { richText: [{ text: 'de Vries' }] }, new Date(Date.UTC(1975, 0, 2)), null]);
      ws.getCell('C5').numFmt = 'mmm d, yyyy';
      ws.getCell('A9').numFmt = '0';
    });
    expect(await rows(path, { sheet: 'Klanten', headerRow: 2 })).toEqual([
      [3, { nr: 1001, naam: 'Jansen', geboren: '1980-05-17', inkomen: 1234.5 }],
      [5, { nr: 1002, naam: 'de Vries', geboren: '1975-01-02' }],
    ]);
    expect(await rows(path, { sheet: 1, headerRow: 1 })).toEqual([
      [
        1,
        'w.xlsx:sheet 1!1: the sheet holds no rows after its header row 1, expected at least one record; an empty export is refused unless truncated files are allowed (--allow-truncated)',
      ],
    ]);
    await expect(rows(path, { sheet: 'Personen', headerRow: 1 })).rejects.toThrow(
      'w.xlsx: the workbook has no sheet "Personen", expected one of "Eerst", "Klanten"',
    );
  });

  it('refuses a row with an error cell or a value beyond the header, naming sheet and cell, and reads a row back at its provenance', async () => {
    const path = await workbook('b.xlsx', (wb) => {
      const ws = wb.addWorksheet('Data');
      ws.addRow(['nr', 'naam']);
      ws.addRow([1, { error: '#N/A' }]);
      ws.addRow([2, 'Bos', 'extra']);
      ws.addRow([3, 'Vos']);
    });
    expect(await rows(path, { sheet: 'Data', headerRow: 1 })).toEqual([
      [2, 'w.xlsx:Data!2: cell w.xlsx:Data!B2 holds the error #N/A, expected a value'],
      [3, 'w.xlsx:Data!3: cell w.xlsx:Data!C3 holds "extra" beyond the header\'s last column (B)'],
      [4, { nr: 3, naam: 'Vos' }],
    ]);
    const back = await readRowAt(path, 4, { format: 'xlsx', encoding: 'auto', xlsx: { sheet: 'Data', headerRow: 1 } });
    expect(back).toEqual({ columns: ['nr', 'naam'], values: { nr: 3, naam: 'Vos' } });
  });

  // The zip's entry order is the writer's choice. exceljs writes sheets first and the workbook
  // part last; other writers put shared strings and styles first. Every order reads the same.
  it.each([
    [
      'shared strings and rels before the sheets, the workbook part last',
      ['_rels', 'xl/_rels', 'xl/sharedStrings', 'xl/styles', 'xl/worksheets', 'xl/workbook.xml'],
    ],
    [
      'the workbook part first, the sheets before the shared strings',
      ['_rels', 'xl/workbook.xml', 'xl/_rels', 'xl/worksheets', 'xl/styles', 'xl/sharedStrings'],
    ],
    ['the sheets last', ['xl/workbook.xml', 'xl/_rels', 'xl/sharedStrings', 'xl/styles', '_rels', 'xl/worksheets']],
  ])('reads a workbook whose zip holds %s', async (_, order) => {
    const written = await workbook('order.xlsx', (wb) => {
      wb.addWorksheet('Notes').addRow(['not this sheet']);
      const ws = wb.addWorksheet('Klanten');
      ws.addRow(['nr', 'naam', 'geboren']);
      ws.addRow([7, 'Smit', new Date(Date.UTC(1990, 1, 3))]);
      ws.getCell('C2').numFmt = 'dd-mm-yyyy';
      ws.addRow([8, 'Bakker', null]);
    });
    const zip = await JSZip.loadAsync(readFileSync(written));
    const names = Object.keys(zip.files).filter((n) => !zip.files[n]!.dir);
    const rank = (n: string) => {
      const i = order.findIndex((prefix) => n.startsWith(prefix));
      return i === -1 ? order.length : i;
    };
    const reordered = new JSZip();
    for (const n of [...names].sort((a, b) => rank(a) - rank(b))) reordered.file(n, await zip.files[n]!.async('uint8array'));
    const path = join(dir, `reordered-${order.join('-').replace(/\W/g, '')}.xlsx`);
    writeFileSync(path, await reordered.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
    const stored = Object.keys((await JSZip.loadAsync(readFileSync(path))).files);
    expect(stored.filter((n) => n.startsWith('xl/workbook.xml') || n.startsWith('xl/worksheets/sheet'))).toEqual(
      names.filter((n) => n.startsWith('xl/workbook.xml') || n.startsWith('xl/worksheets/sheet')).sort((a, b) => rank(a) - rank(b)),
    );
    expect(await rows(path, { sheet: 'Klanten', headerRow: 1 })).toEqual([
      [2, { nr: 7, naam: 'Smit', geboren: '1990-02-03' }],
      [3, { nr: 8, naam: 'Bakker' }],
    ]);
  });

  // The truth: what the generator wrote, row by row. The tally's rows are counted from the
  // workbook's zip and sheet XML apart from exceljs, and must agree with the rows it read.
  // Deflated only: exceljs's reader fails now and then on a stored (uncompressed) workbook under
  // load ("reading 'sheets'"); the count's own stored path is tested below (countSheetRows).
  it.each([['deflated', 'DEFLATE']] as const)(
    'counts the sheet apart from the reader, %s, and the two counts agree',
    async (_, compression) => {
      const rng = (() => {
        let x = 11;
        return () => (x = (x * 48271) % 2147483647) / 2147483647;
      })();
      const truth = { header: 2, empty: 0, rows: 0, errors: 0 };
      const written = await workbook(`tally-${compression}.xlsx`, (wb) => {
        wb.addWorksheet('Voorblad').addRow(['Export van klanten']);
        const ws = wb.addWorksheet('Klanten');
        ws.addRow(['Klantenbestand 2026']); // a title row: counted with the header
        ws.addRow(['nr', 'naam', 'geboren']);
        for (let n = 3; n < 400; n++) {
          const r = rng();
          if (r < 0.1) {
            ws.getCell(`B${n}`).numFmt = '@'; // formatted, no value: an empty row the sheet keeps
            truth.empty++;
          } else if (r < 0.15) {
            ws.getRow(n).values = [n, { error: '#REF!' }, ''];
            truth.rows++;
            truth.errors++;
          } else if (r < 0.2) {
            ws.getRow(n).values = [null, '', null]; // an empty string: no value either
            truth.empty++;
          } else {
            ws.getRow(n).values = [n, `Klant ${n}`, new Date(Date.UTC(1950 + (n % 50), n % 12, 1 + (n % 28)))];
            truth.rows++;
          }
        }
      });
      const zip = await JSZip.loadAsync(readFileSync(written));
      const path = join(dir, `tally-${compression}-rezipped.xlsx`);
      writeFileSync(path, await zip.generateAsync({ type: 'nodebuffer', compression }));
      const tally: SourceTally = newTally('s', 'w.xlsx', 'xlsx');
      let read = 0;
      for await (const batch of readXlsxBatches({ source: 's', path, file: 'w.xlsx', xlsx: { sheet: 'Klanten', headerRow: 2 }, tally }))
        read += batch.length;
      expect(read).toBe(truth.rows);
      expect(tally).toMatchObject({
        physicalLines: truth.header + truth.empty + truth.rows,
        blankLines: truth.empty,
        headerLines: truth.header,
        rowsRead: truth.rows,
        rowErrors: truth.errors,
        linesInRows: truth.rows,
      });
      expect(tally.physicalLines).toBeGreaterThan(350); // the generator wrote the rows it says
      expect(tallyDisagreement(tally)).toBeUndefined();
    },
  );
});

describe('a sheet by its position', () => {
  // Tabs moved in Excel change the workbook part's order, not the parts' names or their order in
  // the zip: the position is the tab's, and reader and count agree on it.
  it('counts the tabs in the workbook part, not the parts in the zip', async () => {
    const written = await workbook('tabs.xlsx', (wb) => {
      wb.addWorksheet('Notes').addRow(['not this sheet']);
      const ws = wb.addWorksheet('Klanten');
      ws.addRow(['nr', 'naam']);
      ws.addRow([1, 'Bos']);
    });
    const zip = await JSZip.loadAsync(readFileSync(written));
    const part = await zip.file('xl/workbook.xml')!.async('string');
    const [notes, klanten] = [...part.matchAll(/<sheet [^>]*\/>/g)].map((m) => m[0]);
    expect(notes).toContain('name="Notes"');
    zip.file('xl/workbook.xml', part.replace(`${notes}${klanten}`, `${klanten}${notes}`));
    const path = join(dir, 'tabs-moved.xlsx');
    writeFileSync(path, await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
    expect(await rows(path, { sheet: 1, headerRow: 1 })).toEqual([[2, { nr: 1, naam: 'Bos' }]]);
    const tally: SourceTally = newTally('s', 'w.xlsx', 'xlsx');
    for await (const _ of readXlsxBatches({ source: 's', path, file: 'w.xlsx', xlsx: { sheet: 1, headerRow: 1 }, tally }));
    expect(tallyDisagreement(tally)).toBeUndefined();
    expect(tally).toMatchObject({ physicalLines: 2, headerLines: 1, rowsRead: 1 });
  });
});

describe('countSheetRows', () => {
  // A workbook written here part by part (the truth is the XML): every kind of cell the count
  // must judge, a sheet name with an escaped character, sheets in another order than their parts.
  it('counts the rows of the sheet named or numbered and which hold no value, from the zip alone', async () => {
    const sheet = (rows: string) =>
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`;
    const zip = new JSZip();
    zip.file(
      'xl/workbook.xml',
      '<workbook xmlns:r="r"><sheets><sheet name="Notes" sheetId="1" r:id="rId2"/><sheet name="Klanten &amp; Co" sheetId="2" r:id="rId1"/></sheets></workbook>',
    );
    zip.file(
      'xl/_rels/workbook.xml.rels',
      '<Relationships><Relationship Id="rId1" Type="ws" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="ws" Target="/xl/worksheets/sheet2.xml"/></Relationships>',
    );
    zip.file(
      'xl/sharedStrings.xml',
      '<sst><si><t>nr</t></si><si><t></t></si><si><r><t>de </t></r><r><t>Vries</t></r></si><si><t/></si></sst>',
    );
    zip.file(
      'xl/worksheets/sheet1.xml',
      sheet(
        [
          '<row r="1"><c r="A1" t="s"><v>0</v></c></row>', // a value (shared string "nr")
          '<row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2" s="3"/></row>', // an empty shared string, a styled cell: empty
          '<row r="3" spans="1:2"><c r="A3"><v>12.5</v></c></row>', // a number
          '<row r="4"/>', // a row with nothing
          '<row r="5"><c r="A5" t="inlineStr"><is><t>Bos</t></is></c></row>', // an inline string
          '<row r="6"><c r="A6" t="inlineStr"><is><t></t></is></c><c r="B6" t="s"><v>3</v></c></row>', // both empty
          '<row r="7"><c r="A7" t="e"><v>#N/A</v></c></row>', // an error cell holds a value (it refuses the row)
          '<row r="8"><c r="A8" t="s"><v>2</v></c></row>', // rich text
          '<row r="9"><c r="A9"><f>A3*2</f></c></row>', // a formula without a cached result: no value
        ].join(''),
      ),
    );
    zip.file('xl/worksheets/sheet2.xml', sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>note</t></is></c></row>'));
    for (const compression of ['DEFLATE', 'STORE'] as const) {
      const path = join(dir, `parts-${compression}.xlsx`);
      writeFileSync(path, await zip.generateAsync({ type: 'nodebuffer', compression }));
      expect(await countSheetRows(path, 'Klanten & Co')).toEqual({ rows: 9, emptyRows: 4 });
      expect(await countSheetRows(path, 2)).toEqual({ rows: 9, emptyRows: 4 });
      expect(await countSheetRows(path, 1)).toEqual({ rows: 1, emptyRows: 0 });
      expect(await countSheetRows(path, 'Klanten')).toBeUndefined();
    }
  });

  it('refuses a workbook cut short or a file that is no workbook, naming it', async () => {
    const whole = await workbook('whole.xlsx', (wb) => wb.addWorksheet('Data').addRows([['nr'], [1], [2]]));
    const cut = join(dir, 'cut.xlsx');
    writeFileSync(cut, readFileSync(whole).subarray(0, 600));
    const text = join(dir, 'text.xlsx');
    writeFileSync(text, 'nr;naam\n1;Bos\n');
    for (const path of [cut, text])
      await expect(rows(path, { sheet: 'Data', headerRow: 1 })).rejects.toThrow(
        'w.xlsx: no zip directory at its end: not a workbook (an XLSX file is a zip), expected an XLSX workbook',
      );
  });
});
