/**
 * Test support for the corrections path on the shipped samples: the sample pipeline copied into a
 * folder of its own, a real embedded service, the real CLI with the ledger and service flags, and
 * a corrections CSV taken apart and put back together the way an engineer edits one in a
 * spreadsheet (by column name, not by position).
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach } from 'vitest';
import Database from 'better-sqlite3';
import { ROOT, runCli, type CliResult } from './cli.js';
import { call, getToken, startTestService, tempDir, type TestService } from './service.js';
import type { ReconciliationReport } from '../../src/reconcile/index.js';

export interface SampleMigration {
  svc: TestService;
  dir: string;
  ledger: string;
  /** Runs the CLI in the folder with `--ledger` and `--base-url` added. */
  cli(args: string[]): Promise<CliResult>;
  /** The report.json of a report folder (relative to the folder). */
  report(out: string): ReconciliationReport;
  /** The ledger's rows, as SQL answers them (opened read-only for the one query). */
  rows<T>(sql: string, ...args: unknown[]): T[];
  /** The platform's own counters of a migration, through its API. */
  platform(migrationId: string): Promise<{ staged: number; imported: number }>;
  dispose(): Promise<void>;
}

/** The sample pipeline (pipelines/crm.yaml and samples/crm) in a temporary folder, with a service of its own. */
export async function sampleMigration(): Promise<SampleMigration> {
  const svc = await startTestService();
  const dir = tempDir('stagecoach-corrections-');
  for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  const ledger = join(dir, 'ledger.db');
  return {
    svc,
    dir,
    ledger,
    cli: (args) => runCli([...args, '--ledger', ledger, '--base-url', svc.url], { cwd: dir }),
    report: (out) => JSON.parse(readFileSync(join(dir, out, 'report.json'), 'utf8')) as ReconciliationReport,
    rows<T>(sql: string, ...args: unknown[]): T[] {
      const db = new Database(ledger, { readonly: true });
      try {
        return db.prepare(sql).all(...args) as T[];
      } finally {
        db.close();
      }
    },
    async platform(migrationId) {
      const token = await getToken(svc.url);
      const m = (await call(svc.url, token, 'GET', `/migration-assistance/migrations/${migrationId}`)).body;
      return { staged: m.numberOfStagedEntities as number, imported: m.numberOfImportedEntities as number };
    },
    async dispose() {
      await svc.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A test file's way to start sample migrations: each one started is disposed of after its test.
 * Call once at the top of the file.
 */
export function sampleMigrations(): () => Promise<SampleMigration> {
  const open: SampleMigration[] = [];
  afterEach(async () => {
    for (const m of open.splice(0)) await m.dispose();
  });
  return async () => {
    const m = await sampleMigration();
    open.push(m);
    return m;
  };
}

/** A `;` corrections CSV as its header and rows of cells. */
export interface CorrectionsCsv {
  header: string[];
  rows: string[][];
}

/** Reads a corrections file as a spreadsheet would (quoted cells: an error message may hold `;`). */
export function readCorrectionsCsv(path: string): CorrectionsCsv {
  const [head, ...rest] = parse(readFileSync(path, 'utf8'), { delimiter: ';', bom: true, relax_column_count: true }) as string[][];
  return { header: head!, rows: rest };
}

/** Writes it back as a spreadsheet would: a cell with `;`, a quote or a line break quoted. */
export function writeCorrectionsCsv(path: string, csv: CorrectionsCsv): void {
  const cell = (c: string) => (/[;"\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c);
  writeFileSync(path, `\ufeff${[csv.header, ...csv.rows].map((r) => r.map(cell).join(';')).join('\r\n')}\r\n`);
}

/** The row whose cell in `column` is `value` (throws when there is none). */
export function rowWhere(csv: CorrectionsCsv, column: string, value: string): string[] {
  const at = csv.header.indexOf(column);
  const row = csv.rows.find((r) => r[at] === value);
  if (!row) throw new Error(`no row with ${column} = ${value}`);
  return row;
}

/** Sets a cell of a row by column name. */
export function setCell(csv: CorrectionsCsv, row: string[], column: string, value: string): void {
  row[csv.header.indexOf(column)] = value;
}
