/**
 * The XLSX source on big workbooks: a sheet of 100,000 and of 1,000,000 persons (quick: 10,000
 * and 100,000), read through the XLSX source as `run` reads it (exceljs's streaming reader, row
 * hashes, the independent `<row>` count), in a child process of its own: rows/s and peak RSS,
 * which must stay flat between the sizes. Each workbook is written once (exceljs's streaming
 * writer, shared strings as Excel writes them) and kept in .stagecoach/bench/ for the next run.
 */
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import { mb, runChild, type BenchOptions, type BenchRow } from './harness.js';

export const title = 'xlsx: read a sheet through the XLSX source';

const CACHE = resolve('.stagecoach', 'bench');
const READER = join(import.meta.dirname, 'xlsx-read.js');
const SHEET = 'Klanten';
const SURNAMES = ['Jansen', 'de Vries', 'van den Berg', 'Bakker', 'Visser', 'Smit', 'Meijer', 'de Boer', 'Mulder', 'de Groot'];
const PLACES = ['Amsterdam', 'Rotterdam', 'Den Haag', 'Utrecht', 'Eindhoven', 'Groningen', 'Tilburg', 'Almere'];

/** A workbook of `persons` rows (9 columns: numbers, shared strings, dates), written once and cached. */
async function workbook(persons: number): Promise<string> {
  const path = join(CACHE, `klanten-${persons}.xlsx`);
  if (existsSync(path)) return path;
  mkdirSync(CACHE, { recursive: true });
  const partial = `${path}.partial`;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: partial, useSharedStrings: true, useStyles: true });
  const ws = wb.addWorksheet(SHEET);
  ws.addRow([
    'klantnr',
    'voorletters',
    'achternaam',
    'geboortedatum',
    'straat',
    'huisnummer',
    'postcode',
    'woonplaats',
    'inkomen',
  ]).commit();
  for (let i = 0; i < persons; i++) {
    const row = ws.addRow([
      100_000 + i,
      `${String.fromCharCode(65 + (i % 26))}.`,
      SURNAMES[i % SURNAMES.length],
      new Date(Date.UTC(1940 + (i % 60), i % 12, 1 + (i % 28))),
      `Dorpsstraat`,
      1 + (i % 250),
      `${1000 + (i % 9000)} ${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + ((i >> 5) % 26))}`,
      PLACES[i % PLACES.length],
      Math.round((i % 9000) * 13.37 * 100) / 100,
    ]);
    row.getCell(4).numFmt = 'dd-mm-yyyy';
    row.commit();
  }
  ws.commit();
  await wb.commit();
  renameSync(partial, path); // only a whole workbook is cached
  return path;
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = options.quick ? [10_000, 100_000] : [100_000, 1_000_000];
  const rows: BenchRow[] = [];
  for (const persons of sizes) {
    const started = performance.now();
    const path = await workbook(persons);
    const wrote = performance.now() - started;
    const res = await runChild(process.execPath, [READER, path, SHEET], { stdout: 'pipe' });
    if (res.code !== 0) throw new Error(`the XLSX reader exited with ${res.code}: ${res.out.slice(0, 300)}`);
    const got = JSON.parse(res.out) as { rows: number; errors: number; ms: number; disagreement: string | null; sheetRows: number };
    if (got.rows !== persons || got.errors !== 0 || got.disagreement !== null)
      throw new Error(`read ${got.rows} rows and ${got.errors} row errors of ${persons}: ${got.disagreement ?? 'counts agree'}`);
    const n = persons.toLocaleString('en');
    rows.push({
      benchmark: title,
      metric: `read, ${n} rows`,
      value: Math.round(persons / (res.ms / 1000)),
      unit: 'rows/s',
      note: `${(res.ms / 1000).toFixed(1)} s wall, ${res.cpu.toFixed(1)} s CPU, ${mb(statSync(path).size)} MB workbook${wrote > 1000 ? `, written in ${(wrote / 1000).toFixed(0)} s` : ', cached'}`,
    });
    rows.push({ benchmark: title, metric: `read peak RSS, ${n} rows`, value: mb(res.peakRss), unit: 'MB' });
  }
  return rows;
}
