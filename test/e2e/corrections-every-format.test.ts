/**
 * Corrections for every format, by construction: for each format of the registry, a small
 * generated export with planted defects (a person without a surname, a second row with a key
 * already taken) is migrated, the corrections file is read like a spreadsheet would (by column
 * name), fixed, and handed back with `migrate --corrections`, which must end balanced with every
 * person imported. A format added to the registry without a sample here fails to compile (the
 * `SAMPLES` record is keyed by the registry's formats). Real service, real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { runCli } from '../support/cli.js';
import { onePeopleSourcePipeline } from '../support/pipeline-text.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import { SOURCE_FORMATS } from '../../src/pipeline/source/index.js';
import type { SourceFormat } from '../../src/pipeline/definition/schema.js';
import type { ReconciliationReport } from '../../src/reconcile/index.js';

interface Person {
  nr: string;
  naam: string;
  plaats: string;
}

/** How a format's export of `people` is written, the pipeline lines that read it, and the line of its first record. */
interface Sample {
  file: string;
  write(path: string, people: Person[]): Promise<void>;
  options: string[];
  firstLine: number;
}

const text = (f: (people: Person[]) => string) => async (path: string, people: Person[]) => writeFileSync(path, f(people));

const pad = (s: string, n: number) => s.padEnd(n).slice(0, n);
const SAMPLES: Record<SourceFormat, Sample> = {
  csv: {
    file: 'people.csv',
    write: text((people) => ['nr,naam,plaats', ...people.map((p) => `${p.nr},${p.naam},${p.plaats}`)].join('\n') + '\n'),
    options: ['csv: { delimiter: "," }'],
    firstLine: 2,
  },
  json: {
    file: 'people.json',
    write: text((people) => `{"export": {"people": [\n${people.map((p) => JSON.stringify(p)).join(',\n')}\n]}}\n`),
    options: ['json: { path: export.people }'],
    firstLine: 2,
  },
  jsonl: {
    file: 'people.jsonl',
    write: text((people) => people.map((p) => `${JSON.stringify(p)}\n`).join('')),
    options: [],
    firstLine: 1,
  },
  // A title line first: it must never become the corrections file's header.
  'fixed-width': {
    file: 'people.txt',
    write: text(
      (people) => ['PEOPLE EXPORT 2026-11-27', ...people.map((p) => pad(p.nr, 6) + pad(p.naam, 20) + pad(p.plaats, 14))].join('\n') + '\n',
    ),
    options: [
      'fixedWidth:',
      '      header: 1',
      '      columns:',
      '        - { name: nr, start: 1, length: 6 }',
      '        - { name: naam, start: 7, length: 20 }',
      '        - { name: plaats, start: 27, length: 14 }',
    ],
    firstLine: 2,
  },
  // A merged title row above the header row, a number as the key, and empty trailing rows.
  xlsx: {
    file: 'people.xlsx',
    async write(path, people) {
      const wb = new ExcelJS.Workbook();
      wb.addWorksheet('Notes').addRow(['not this sheet']);
      const ws = wb.addWorksheet('Klanten');
      ws.addRow(['Klanten export 2026-11-27']);
      ws.mergeCells('A1:C1');
      ws.addRow(['nr', 'naam', 'plaats']);
      for (const p of people) ws.addRow([Number(p.nr), p.naam, p.plaats]);
      ws.getCell(`A${people.length + 5}`).numFmt = '0'; // a formatted, empty row after the records
      await wb.xlsx.writeFile(path);
    },
    options: ['xlsx: { sheet: Klanten, headerRow: 2 }'],
    firstLine: 3,
  },
};

const MAPPING = [
  'type: person',
  'key: { column: nr, scope: every-format }',
  'record:',
  '  isActive: { value: true }',
  '  surname: { column: naam, transforms: [collapse-spaces], required: true }',
  '  preferredCommunicationLanguage: { value: nl-NL }',
  '  countryCode: { value: NL }',
  '  initials: { value: J. }',
  '  firstName: { column: plaats, transforms: [collapse-spaces] }',
  '',
].join('\n');

/** Twelve people with distinct keys and names; defects are planted in a copy. */
function people(seed: number): Person[] {
  const names = ['Jansen', 'de Vries', 'Bakker', 'Visser', 'Smit', 'Meijer', 'Mulder', 'Bos', 'Vos', 'Peters', 'Hendriks', 'Dekker'];
  const places = ['Utrecht', 'Zwolle', 'Delft', 'Breda', 'Assen', 'Emmen'];
  return names.map((n, i) => ({ nr: String(2000 + seed * 100 + i), naam: n, plaats: places[(i * 7 + seed) % places.length]! }));
}

/** A corrections file as rows of named cells, whatever its shape. */
function readCorrections(path: string, shape: 'csv' | 'jsonl'): Record<string, unknown>[] {
  const text = readFileSync(path, 'utf8').replace(/^\ufeff/, '');
  if (shape === 'jsonl')
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return parse(text, { columns: true }) as Record<string, unknown>[];
}

function writeCorrections(path: string, shape: 'csv' | 'jsonl', rows: Record<string, unknown>[]): void {
  if (shape === 'jsonl') {
    writeFileSync(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return;
  }
  const header = Object.keys(rows[0]!);
  const cell = (v: unknown) => {
    const s = String(v ?? '');
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  writeFileSync(path, `\ufeff${[header, ...rows.map((r) => header.map((h) => r[h]))].map((r) => r.map(cell).join(',')).join('\r\n')}\r\n`);
}

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.dispose();
});

describe('corrections round trip, every registered format', () => {
  for (const [i, format] of (Object.keys(SOURCE_FORMATS) as SourceFormat[]).entries()) {
    it(`${format}: planted defects come out in the corrections file, fixed they come back and the migration balances`, async () => {
      const dir = tempDir(`stagecoach-every-format-`);
      try {
        const sample = SAMPLES[format];
        const shape = SOURCE_FORMATS[format].corrections;
        const truth = people(i + 1);
        const planted = truth.map((p) => ({ ...p }));
        planted[3]!.naam = ''; // MISSING_REQUIRED_FIELD
        planted[7]!.nr = planted[2]!.nr; // DUPLICATE_LEGACY_KEY: the second row with this key
        mkdirSync(join(dir, 'data'));
        await sample.write(join(dir, 'data', sample.file), planted);
        writeFileSync(join(dir, 'mapping.yaml'), MAPPING);
        writeFileSync(
          join(dir, 'pipeline.yaml'),
          onePeopleSourcePipeline({ name: `every-${format}`, format, path: `data/${sample.file}`, options: sample.options }),
        );
        const cli = (args: string[]) => runCli([...args, '--ledger', join(dir, 'ledger.db'), '--base-url', svc.url], { cwd: dir });

        const first = await cli(['migrate', 'pipeline.yaml', '--out', 'r1']);
        expect(first.stdout, first.stderr).toContain('Reconciliation balanced (tolerance 0)');
        const file = join(dir, 'r1', `people.corrections.${shape}`);
        const rows = readCorrections(file, shape);
        // One row per defect, each in the source's own columns (never a title line or a record as header).
        const line = (index: number) => `data/${sample.file}:${index + sample.firstLine}`;
        expect(rows.map((r) => [r._origin, r.nr, r.naam, r.error_code])).toEqual([
          [line(3), truth[3]!.nr, '', 'MISSING_REQUIRED_FIELD'],
          [line(7), truth[2]!.nr, truth[7]!.naam, 'DUPLICATE_LEGACY_KEY'],
        ]);
        expect(Object.keys(rows[0]!).filter((c) => !c.startsWith('_') && !c.startsWith('error_'))).toEqual(['nr', 'naam', 'plaats']);

        // The engineer fills in the surname and gives the second person its own key.
        rows[0]!.naam = truth[3]!.naam;
        rows[1]!.nr = truth[7]!.nr;
        writeCorrections(join(dir, `fixed.${shape}`), shape, rows);
        // The first migrate completed its migration, so the corrections go into a new one; verify
        // proves the pipeline as a whole: the first migration's eight imports and the two corrected.
        const fixed = await cli(['migrate', 'pipeline.yaml', '--corrections', `fixed.${shape}`, '--out', 'r2']);
        expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
        expect(fixed.stdout).toContain('Reconciliation balanced (tolerance 0)');
        expect(fixed.stdout).toContain(`Verified: ${truth.length} of ${truth.length} imported records identical on the platform (100%)`);
        const report = JSON.parse(readFileSync(join(dir, 'r2', 'report.json'), 'utf8')) as ReconciliationReport;
        expect(report.balanced, report.problems.join('\n')).toBe(true);
        expect(report.verification).toMatchObject({
          passed: true,
          imported: truth.length,
          importedEarlier: truth.length - 2,
          strays: { total: 0 },
        });
        // Every person of the truth is imported once, under its own key and name.
        const db = new Database(join(dir, 'ledger.db'), { readonly: true });
        const imported = db.prepare("SELECT legacy_key AS nr FROM records WHERE state = 'imported' ORDER BY legacy_key").all() as {
          nr: string;
        }[];
        db.close();
        expect(imported.map((r) => r.nr)).toEqual(truth.map((p) => p.nr).sort());
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
