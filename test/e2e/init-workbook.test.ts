/**
 * `stagecoach init` on Excel workbooks: generated here with exceljs (the truth is what the
 * generator wrote: which sheets are exports, their header rows, every record), in Dutch and in
 * English. init picks the export sheets (a cover sheet is left out), finds each header row below
 * title rows, maps the columns as it maps a CSV's, and what it writes plans and migrates every
 * record into the real service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import ExcelJS from 'exceljs';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function work(): string {
  const d = tempDir('stagecoach-init-xlsx-');
  dirs.push(d);
  return d;
}

/** A seeded generator: the same workbook every run, values not tuned to the guesser. */
function random(seed: number) {
  let x = seed;
  const next = () => (x = (x * 48271) % 2147483647) / 2147483647;
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

interface InitJson {
  sources: Array<{
    name: string;
    type: string;
    key?: string;
    fields: string[];
    dialect: { kind: string; sheet?: string; headerRow?: number };
  }>;
  todos: string[];
  plan: { rowsRead: number; mapped: number; rejected: number };
}

async function init(args: string[], cwd: string): Promise<InitJson> {
  const res = await runCli(['init', ...args, '--json'], { cwd });
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as InitJson;
}

const SURNAMES = ['Jansen', 'de Vries', 'Bakker', 'Visser', 'Smit', 'Meijer', 'Mulder', 'Bos', 'Vos', 'Peters'];
const STREETS = ['Dorpsstraat', 'Kerkweg', 'Markt', 'Stationsplein', 'Molenlaan'];
const PLACES = ['Utrecht', 'Den Haag', 'Eindhoven', 'Groningen', 'Zwolle'];
const postcode = (r: ReturnType<typeof random>) =>
  `${1000 + Math.floor(r.next() * 8999)} ${String.fromCharCode(65 + Math.floor(r.next() * 26))}${String.fromCharCode(65 + Math.floor(r.next() * 26))}`;

const imported = (ledger: string) =>
  new Database(ledger, { readonly: true })
    .prepare<[], { key: string; type: string }>("SELECT legacy_key AS key, entity_type AS type FROM records WHERE state = 'imported'")
    .all();

async function migrate(dir: string): Promise<{ key: string; type: string }[]> {
  const svc = await startTestService();
  services.push(svc);
  const res = await runCli(
    ['migrate', 'gen/pipeline.yaml', '--stage-undecided', '--ledger', 'gen.db', '--out', 'rep', '--base-url', svc.url],
    {
      cwd: dir,
    },
  );
  const corrections = () =>
    readdirSync(join(dir, 'rep'))
      .filter((f) => f.endsWith('.corrections.csv'))
      .map((f) => readFileSync(join(dir, 'rep', f), 'utf8'))
      .join('\n');
  expect(res.code, `${res.stdout}${res.stderr}${res.code === 0 ? '' : corrections()}`).toBe(0);
  return imported(join(dir, 'gen.db'));
}

describe('stagecoach init on a workbook', () => {
  it('Dutch: leaves out the cover sheet, finds the persons below a merged title and the companies, and migrates every record', async () => {
    const dir = work();
    const r = random(20261127);
    const persons = 37 + Math.floor(r.next() * 20);
    const companies = 5 + Math.floor(r.next() * 5);
    const truth = { persons: [] as string[], companies: [] as string[] };
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Voorblad').addRow(['Export uit het klantsysteem, alleen voor de migratie']);
    const klanten = wb.addWorksheet('Klanten');
    klanten.addRow(['Klantenbestand per 27-11-2026']);
    klanten.mergeCells('A1:I1');
    klanten.addRow([]);
    klanten.addRow([
      'Klantnummer',
      'Voorletters',
      'Achternaam',
      'Geboortedatum',
      'Straat',
      'Huisnummer',
      'Postcode',
      'Woonplaats',
      'E-mail',
    ]);
    for (let i = 0; i < persons; i++) {
      const key = 40000 + i * 7;
      truth.persons.push(String(key));
      const surname = r.pick(SURNAMES);
      klanten.addRow([
        key,
        `${String.fromCharCode(65 + Math.floor(r.next() * 26))}.`,
        surname,
        new Date(Date.UTC(1940 + Math.floor(r.next() * 60), Math.floor(r.next() * 12), 1 + Math.floor(r.next() * 28))),
        r.pick(STREETS),
        1 + Math.floor(r.next() * 200),
        postcode(r),
        r.pick(PLACES),
        `klant${key}@voorbeeld.nl`,
      ]);
      klanten.getCell(`D${klanten.rowCount}`).numFmt = 'dd-mm-yyyy';
    }
    const bedrijven = wb.addWorksheet('Bedrijven');
    bedrijven.addRow(['Relatienummer', 'Bedrijfsnaam', 'KvK-nummer', 'Straat', 'Huisnummer', 'Postcode', 'Plaats', 'Land']);
    for (let i = 0; i < companies; i++) {
      const kvk = String(10000000 + i * 1234567);
      truth.companies.push(kvk);
      bedrijven.addRow([`R${i + 1}`, `${r.pick(SURNAMES)} B.V.`, kvk, r.pick(STREETS), 1 + i, postcode(r), r.pick(PLACES), 'Nederland']);
    }
    await wb.xlsx.writeFile(join(dir, 'export.xlsx'));

    const got = await init(['export.xlsx', '--out', 'gen'], dir);
    expect(got.sources.map((s) => [s.name, s.type, s.key, s.dialect])).toEqual([
      ['export_Klanten', 'person', 'Klantnummer', expect.objectContaining({ kind: 'xlsx', sheet: 'Klanten', headerRow: 3 })],
      ['export_Bedrijven', 'organisation', 'KvK-nummer', expect.objectContaining({ kind: 'xlsx', sheet: 'Bedrijven', headerRow: 1 })],
    ]);
    expect(got.sources[0]!.fields).toEqual(expect.arrayContaining(['initials', 'surname', 'dateOfBirth', 'addresses', 'emailAddress']));
    const pipeline = readFileSync(join(dir, 'gen/pipeline.yaml'), 'utf8');
    expect(pipeline).toContain('    xlsx: { sheet: Klanten, headerRow: 3 }\n');
    expect(pipeline).toContain('    # sheet "Voorblad" left out: it holds one row, expected a header row and records\n');
    expect(pipeline).toContain('1 title row above it skipped');
    expect(got.plan).toMatchObject({ rowsRead: persons + companies, rejected: 0 });

    const keys = await migrate(dir);
    expect(
      keys
        .filter((k) => k.type === 'person')
        .map((k) => k.key)
        .sort(),
    ).toEqual([...truth.persons].sort());
    expect(
      keys
        .filter((k) => k.type === 'organisation')
        .map((k) => k.key)
        .sort(),
    ).toEqual([...truth.companies].sort());
  });

  it('English: one sheet below two title rows is one source named after its file, and every customer migrates', async () => {
    const dir = work();
    const r = random(4242);
    const n = 25 + Math.floor(r.next() * 30);
    const truth: string[] = [];
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Customers');
    ws.addRow(['Customer export']);
    ws.mergeCells('A1:G1');
    ws.addRow(['Run on 2026-11-27 by the CRM']);
    ws.addRow(['Customer ID', 'First name', 'Last name', 'Date of birth', 'Street', 'ZIP', 'City']);
    const first = ['John', 'Mary', 'Peter', 'Susan', 'David', 'Emma'];
    for (let i = 0; i < n; i++) {
      const id = `C-${1000 + i}`;
      truth.push(id);
      ws.addRow([
        id,
        r.pick(first),
        r.pick(['Smith', 'Jones', 'Taylor', 'Brown', 'Wilson']),
        new Date(Date.UTC(1950 + Math.floor(r.next() * 50), Math.floor(r.next() * 12), 1 + Math.floor(r.next() * 28))),
        `${r.pick(['High Street', 'Station Road', 'Church Lane'])} ${1 + i}`,
        postcode(r),
        r.pick(PLACES),
      ]);
    }
    ws.addRow([]); // a trailing empty row a spreadsheet keeps
    await wb.xlsx.writeFile(join(dir, 'customers.xlsx'));

    const got = await init(['customers.xlsx', '--out', 'gen'], dir);
    expect(got.sources.map((s) => [s.name, s.type, s.key, s.dialect])).toEqual([
      ['customers', 'person', 'Customer ID', expect.objectContaining({ kind: 'xlsx', sheet: 'Customers', headerRow: 3 })],
    ]);
    expect(got.sources[0]!.fields).toEqual(expect.arrayContaining(['initials', 'firstName', 'surname', 'dateOfBirth', 'addresses']));
    expect(readFileSync(join(dir, 'gen/pipeline.yaml'), 'utf8')).toContain('2 title rows above it skipped');
    expect(got.plan).toMatchObject({ rowsRead: n, mapped: n, rejected: 0 });
    expect((await migrate(dir)).map((k) => k.key).sort()).toEqual([...truth].sort());
  });

  it('refuses a workbook without an export sheet, saying why of each sheet', async () => {
    const dir = work();
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Notes').addRow(['Nothing here yet']);
    wb.addWorksheet('Empty');
    await wb.xlsx.writeFile(join(dir, 'notes.xlsx'));
    const res = await runCli(['init', 'notes.xlsx', '--out', 'gen'], { cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      'stagecoach: init: notes.xlsx: no sheet of the workbook holds an export, expected a row of column names followed by records: sheet "Notes" left out: it holds one row, expected a header row and records; sheet "Empty" left out: it is empty, expected a header row and records\n',
    );
  });
});
