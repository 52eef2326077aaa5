/**
 * How `stagecoach run` scales with the export: 1,000,000 and 3,000,000 generated persons (quick:
 * 100,000 and 300,000; SCALE_BENCH_10M=1 adds 10,000,000, which takes many minutes and about
 * 1.3 GB of CSV and 1.2 GB of ledger), each on a fresh service and a fresh ledger, so the slope is
 * visible in one table: wall time, records/s, the client's and the service's peak RSS, and the
 * ledger's bytes per record (the file, and the records' table with its indexes, from SQLite's
 * dbstat). Targets (issue 33): client peak RSS at the largest size ≤ 1.15 × at the smallest,
 * service ≤ 300 MB, records/s at most 10% below the smallest size's, ledger ≤ 120 bytes a record.
 */
import { appendFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { mb, runChild, samplePeakRss, type BenchOptions, type BenchRow } from './harness.js';
import { spawnService } from './counterparty-stream.bench.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import type { RunReport } from '../src/pipeline/runner/index.js';

export const title = 'scale (run at 1M, 3M, 10M persons)';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');

/** The records' table of a ledger (record_rows from schema version 4, records before) and what its indexes take, from dbstat. */
function ledgerBytes(file: string): { records: number; fileBytes: number; tableBytes: number; indexBytes: number } {
  const db = new Database(file, { readonly: true });
  try {
    const table = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('record_rows', 'records')")
      .pluck()
      .get() as string;
    const records = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    const sizes = db
      .prepare<[string], { type: string; name: string; bytes: number }>(
        `SELECT m.type, m.name, sum(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_master m ON m.name = d.name
         WHERE m.tbl_name = ? GROUP BY m.name`,
      )
      .all(table);
    // SQLite names the index of a PRIMARY KEY sqlite_autoindex_…: it is in sqlite_master too, as an index.
    const tableBytes = sizes.filter((s) => s.type === 'table').reduce((n, s) => n + s.bytes, 0);
    const indexBytes = sizes.filter((s) => s.type === 'index').reduce((n, s) => n + s.bytes, 0);
    const wal = `${file}-wal`;
    return { records, fileBytes: statSync(file).size + (existsSync(wal) ? statSync(wal).size : 0), tableBytes, indexBytes };
  } finally {
    db.close();
  }
}

interface SizeResult {
  persons: number;
  ms: number;
  staged: number;
  clientRss: number;
  serviceRss: number;
  perRecord: number;
  tablePerRecord: number;
  indexPerRecord: number;
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const sizes = options.quick ? [100_000, 300_000] : [1_000_000, 3_000_000];
  if (process.env.SCALE_BENCH_10M === '1') sizes.push(10_000_000);
  const results: SizeResult[] = [];
  const rows: BenchRow[] = [];
  for (const persons of sizes) {
    const dir = join(options.workDir, `crm-${persons}`);
    await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 5 });
    appendFileSync(join(dir, 'pipeline.yaml'), 'batching: { records: 2000, bytes: 4194304 }\nconcurrency: { inFlight: 4 }\n');
    const ledger = join(options.workDir, `ledger-${persons}.db`);
    const service = await spawnService(join(options.workDir, `service-${persons}`));
    const serviceRss = samplePeakRss(service.pid, 100);
    try {
      const res = await runChild(
        process.execPath,
        [CLI, 'run', 'pipeline.yaml', '--json', '--base-url', service.url, '--ledger', ledger, '--log-level', 'warn'],
        { cwd: dir, stdout: 'pipe' },
      );
      const serviceRssPeak = serviceRss.stop();
      let report: RunReport;
      try {
        report = JSON.parse(res.out) as RunReport;
      } catch {
        throw new Error(`run exited with ${res.code} without a report: ${res.out.slice(0, 500)}`);
      }
      if (report.status !== 'completed' || !report.complete) throw new Error(`the run of ${persons} persons ended ${report.status}`);
      const bytes = ledgerBytes(ledger);
      results.push({
        persons,
        ms: res.ms,
        staged: report.staged,
        clientRss: res.peakRss,
        serviceRss: serviceRssPeak,
        perRecord: bytes.fileBytes / bytes.records,
        tablePerRecord: bytes.tableBytes / bytes.records,
        indexPerRecord: bytes.indexBytes / bytes.records,
      });
    } finally {
      serviceRss.stop();
      await service.stop();
    }
  }

  const first = results[0]!;
  const firstRate = first.staged / (first.ms / 1000);
  for (const r of results) {
    const n = r.persons.toLocaleString('en');
    const rate = r.staged / (r.ms / 1000);
    const larger = r !== first;
    const rateNote = larger
      ? `${rate >= firstRate ? '+' : ''}${Math.round((rate / firstRate - 1) * 1000) / 10}% against ${first.persons.toLocaleString('en')}: ${rate >= 0.9 * firstRate ? 'target within 10% met' : 'target within 10% NOT met'}`
      : `${(r.ms / 1000).toFixed(1)} s whole process`;
    rows.push({
      benchmark: title,
      metric: `run, ${n}`,
      value: Math.round(r.ms / 100) / 10,
      unit: 's',
      note: `${r.staged.toLocaleString('en')} staged`,
    });
    rows.push({ benchmark: title, metric: `records/s, ${n}`, value: Math.round(rate), unit: 'records/s', note: rateNote });
    const clientRatio = r.clientRss / first.clientRss;
    rows.push({
      benchmark: title,
      metric: `client peak RSS, ${n}`,
      value: mb(r.clientRss),
      unit: 'MB',
      note: larger
        ? `${clientRatio.toFixed(2)} × at ${first.persons.toLocaleString('en')}: ${clientRatio <= 1.15 ? 'target ≤ 1.15 × met' : 'target ≤ 1.15 × NOT met'}`
        : '',
    });
    rows.push({
      benchmark: title,
      metric: `service peak RSS, ${n}`,
      value: mb(r.serviceRss),
      unit: 'MB',
      note: r.serviceRss <= 300 * 1024 * 1024 ? 'target ≤ 300 MB met' : 'target ≤ 300 MB NOT met',
    });
    rows.push({
      benchmark: title,
      metric: `ledger bytes a record, ${n}`,
      value: Math.round(r.perRecord * 10) / 10,
      unit: 'B',
      note: `the file over its records; records' table ${r.tablePerRecord.toFixed(1)} B + its indexes ${r.indexPerRecord.toFixed(1)} B (dbstat); ${r.perRecord <= 120 ? 'target ≤ 120 B met' : 'target ≤ 120 B NOT met'}`,
    });
  }
  return rows;
}
