/**
 * Test support for the corrections path on the shipped samples: the sample pipeline copied into a
 * folder of its own, a real embedded service, the real CLI with the ledger and service flags, and
 * a corrections CSV taken apart and put back together the way an engineer edits one in a
 * spreadsheet (by column name, not by position).
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** A `;` corrections CSV as its header and rows of cells (the sample's refused rows hold no quotes). */
export interface CorrectionsCsv {
  header: string[];
  rows: string[][];
}

export function readCorrectionsCsv(path: string): CorrectionsCsv {
  const lines = readFileSync(path, 'utf8')
    .replace(/^\ufeff/, '')
    .split('\r\n')
    .filter(Boolean);
  for (const l of lines) if (l.includes('"')) throw new Error(`a quoted row in ${path}: this helper splits on ; only`);
  const [head, ...rest] = lines.map((l) => l.split(';'));
  return { header: head!, rows: rest };
}

export function writeCorrectionsCsv(path: string, csv: CorrectionsCsv): void {
  writeFileSync(path, `\ufeff${[csv.header, ...csv.rows].map((r) => r.join(';')).join('\r\n')}\r\n`);
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
