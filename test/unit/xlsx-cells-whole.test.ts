/**
 * Every workbook cell read whole (issue 39, point 4; issue 41's serial dates and formulas): the
 * XLSX source on workbooks written part by part (the truth is the XML): inline and shared
 * rich text with every run, a formula's cached value and a formula without one, shared-string
 * indexes out of range, booleans, error cells, the 1900 and 1904 date systems and the 1900
 * system's edges (serials below 61, Excel's phantom 29 February 1900, negative serials).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STYLE, workbookBytes, type WorkbookXml } from '../../bench/xlsx-generated.js';
import { readXlsxBatches } from '../../src/pipeline/source/xlsx/stream.js';
import { tempDir } from '../support/service.js';

const dir = tempDir('stagecoach-xlsx-whole-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** The rows after the header row `nr,value` of a workbook whose row 2 holds the cells given. */
async function read(cells: string, w: Partial<WorkbookXml> = {}) {
  const path = join(dir, `w${++n}.xlsx`);
  const header = '<row r="1"><c r="A1" t="inlineStr"><is><t>nr</t></is></c><c r="B1" t="inlineStr"><is><t>value</t></is></c></row>';
  writeFileSync(
    path,
    await workbookBytes({ ...w, sheetXml: `<sheetData>${header}<row r="2"><c r="A2"><v>1</v></c>${cells}</row></sheetData>` }),
  );
  const out: unknown[] = [];
  for await (const batch of readXlsxBatches({ source: 's', path, file: 'w.xlsx', xlsx: { sheet: 'Data', headerRow: 1 }, hashRows: false }))
    for (const r of batch) out.push('values' in r ? r.values.value : r.message);
  return out[0];
}

describe('text read whole', () => {
  it('joins every run of inline rich text ("Wright", not "ight")', async () => {
    expect(await read('<c r="B2" t="inlineStr"><is><r><t>Wr</t></r><r><rPr><b/></rPr><t>ight</t></r></is></c>')).toBe('Wright');
    expect(await read('<c r="B2" t="inlineStr"><is><r><t>By</t></r><r><t>rne</t></r></is></c>')).toBe('Byrne');
  });

  it('joins every run of shared rich text, leaving phonetic runs out, and reads escapes', async () => {
    const sharedStrings = [
      '<si><r><rPr><i/></rPr><t xml:space="preserve">de </t></r><r><t>Vries</t></r><rPh sb="0" eb="1"><t>x</t></rPh></si>',
      '<si><t>A&amp;B_x000D_&#233;</t></si>',
    ];
    expect(await read('<c r="B2" t="s"><v>0</v></c>', { sharedStrings })).toBe('de Vries');
    expect(await read('<c r="B2" t="s"><v>1</v></c>', { sharedStrings })).toBe('A&B\ré');
  });

  it('refuses a shared-string index out of range, naming file:Sheet!cell, instead of reading it as empty', async () => {
    expect(await read('<c r="B2" t="s"><v>7</v></c>', { sharedStrings: ['<si><t>only</t></si>'] })).toBe(
      'w.xlsx:Data!2: cell w.xlsx:Data!B2 refers to shared string "7", but the workbook holds 1 (0 to 0), expected a value',
    );
  });
});

describe('formulas, booleans, errors', () => {
  it('reads a formula as its cached value, of every type', async () => {
    expect(await read('<c r="B2"><f>A2*2</f><v>2</v></c>')).toBe(2);
    expect(await read('<c r="B2" t="str"><f>A2&amp;"x"</f><v>1x</v></c>')).toBe('1x');
    expect(await read('<c r="B2" t="b"><f>A2&gt;0</f><v>1</v></c>')).toBe(true);
    expect(await read(`<c r="B2" s="${STYLE.date14}"><f>DATE(1980,1,6)</f><v>29226</v></c>`)).toBe('1980-01-06');
  });

  it('refuses a formula without a cached value, naming file:Sheet!cell, instead of reading it as empty', async () => {
    expect(await read(`<c r="B2" s="${STYLE.date14}"><f>DATE(1980,1,6)</f></c>`)).toBe(
      'w.xlsx:Data!2: cell w.xlsx:Data!B2 holds the formula =DATE(1980,1,6) without a cached value (the program that saved the workbook did not compute it: open the workbook in Excel, save it and retry), expected a value',
    );
    expect(await read('<c r="B2"><f t="shared" si="0"/></c>')).toMatch(
      /^w\.xlsx:Data!2: cell w\.xlsx:Data!B2 holds a shared formula without a cached value/,
    );
  });

  it('reads booleans, and refuses error cells with their place', async () => {
    expect(await read('<c r="B2" t="b"><v>0</v></c>')).toBe(false);
    for (const e of ['#N/A', '#VALUE!', '#DIV/0!'])
      expect(await read(`<c r="B2" t="e"><v>${e}</v></c>`)).toBe(
        `w.xlsx:Data!2: cell w.xlsx:Data!B2 holds the error ${e}, expected a value`,
      );
  });
});

describe('dates', () => {
  const date = (serial: number, w: Partial<WorkbookXml> = {}, style = STYLE.date14) =>
    read(`<c r="B2" s="${style}"><v>${serial}</v></c>`, w);

  it('reads the 1900 and the 1904 date systems', async () => {
    expect(await date(29_358)).toBe('1980-05-17');
    expect(await date(29_358 - 1462, { date1904: true })).toBe('1980-05-17');
    expect(await date(0, { date1904: true })).toBe('1904-01-01');
    expect(await date(29_358.5, {}, STYLE.dateTime)).toBe('1980-05-17T12:00:00');
    expect(await date(0.75, {}, STYLE.time)).toBe('18:00:00');
  });

  it('shifts serials below 61 by the phantom day, refuses serial 60 (29 February 1900) and negative serials', async () => {
    expect(await date(1)).toBe('1900-01-01');
    expect(await date(59)).toBe('1900-02-28');
    expect(await date(61)).toBe('1900-03-01');
    expect(await date(60)).toBe(
      "w.xlsx:Data!2: cell w.xlsx:Data!B2 holds the serial 60, Excel's 29 February 1900, a day that does not exist, expected a value",
    );
    expect(await date(-5)).toBe(
      'w.xlsx:Data!2: cell w.xlsx:Data!B2 holds the number -5 in a date format, which is no date (Excel shows ####), expected a value',
    );
    expect(await date(0)).toMatch(/cell w\.xlsx:Data!B2 holds the serial 0, day 0 of the 1900 system/);
  });
});
