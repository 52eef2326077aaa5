/**
 * The generated table dump (samples/table-dump: customers, unsorted addresses and phone numbers
 * in two formats, planted orphans, duplicates, an unreadable row, a refused customer and an
 * address that refuses its customer) through the real CLI and the embedded service: every
 * planted defect refused at its file:line with its code, every child row accounted for, the
 * refused child rows in their own corrections files in their original columns, and the
 * imported records' lists as the child files hold them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import type { ReconciliationReport } from '../../src/reconcile/index.js';
import type { DumpDefect } from '../../src/pipeline/samples/generate-table-dump.js';
import type { PlanSummary } from '../../src/pipeline/read-pipeline.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SAMPLE = join(ROOT, 'samples/table-dump');
const planted = JSON.parse(readFileSync(join(SAMPLE, 'defects.json'), 'utf8')) as { defects: DumpDefect[]; rows: Record<string, number> };

describe('a table dump through the CLI and the service', () => {
  it('plan refuses every planted defect at its file:line, and every child row adds up', async () => {
    const res = await runCli(['plan', 'samples/table-dump/pipeline.yaml', '--json', '--samples', '100']);
    expect(res.code, res.stderr).toBe(0);
    const plan = JSON.parse(res.stdout) as PlanSummary;
    const refused = plan.samples.map((s) => `${s.file.split('/').pop()}:${s.line} ${s.code}`);
    expect(new Set(refused)).toEqual(new Set(planted.defects.map((d) => `${d.file}:${d.line} ${d.code}`)));
    expect(plan.disagreements).toEqual([]);
    for (const t of plan.children!) expect(t.rowsRead + t.rowErrors).toBe(planted.rows[t.files[0]!.split('/').pop()!]);
  });

  it('migrate stages the customers with their lists, balances, and writes the refused child rows to their own corrections files', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-table-dump-');
    dirs.push(dir);
    cpSync(SAMPLE, join(dir, 'dump'), { recursive: true });
    const ledger = join(dir, 'ledger.db');
    const res = await runCli(['migrate', 'dump/pipeline.yaml', '--ledger', ledger, '--out', 'out', '--base-url', svc.url, '--json'], {
      cwd: dir,
      timeoutMs: 120_000,
    });
    expect(res.stderr).toContain('import');
    const report = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8')) as ReconciliationReport;
    expect(report.problems).toEqual([]);
    expect(report.balanced).toBe(true);
    // 60 customers, two refused; the refused child rows are source rows refused before upload.
    expect(report.totals.imported).toBe(58);
    expect(report.totals.sourceRows - report.totals.mapped).toBe(planted.defects.length);

    const adressen = readFileSync(join(dir, 'out', 'adressen.corrections.csv'), 'utf8')
      .split(/\r?\n/)
      .filter(Boolean);
    expect(adressen[0]!.split(';')).toEqual(expect.arrayContaining(['ADRESNR', 'KLANTNR', 'STRAAT', 'HUISNR', 'PC', 'PLAATS']));
    expect(adressen.length - 1).toBe(planted.defects.filter((d) => d.source === 'adressen').length);
    const telefoons = readFileSync(join(dir, 'out', 'telefoons.corrections.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    expect(telefoons.length).toBe(planted.defects.filter((d) => d.source === 'telefoons').length);
    expect(Object.keys(JSON.parse(telefoons[0]!) as object)).toEqual(expect.arrayContaining(['klant', 'soort', 'nummer']));

    // Corrections of a child source (or of its parent) are not read yet: refused, saying so, nothing staged without its children.
    const corrected = await runCli(['run', 'dump/pipeline.yaml', '--ledger', ledger, '--base-url', svc.url, '--corrections', 'out'], {
      cwd: dir,
    });
    expect(corrected.code).toBe(2);
    expect(corrected.stdout + corrected.stderr).toMatch(/corrections of (adressen|klanten|telefoons) cannot be read yet/);

    // verify: the platform's lists element by element against the ledger's records
    const verify = await runCli(['verify', 'dump/pipeline.yaml', '--ledger', ledger, '--base-url', svc.url], { cwd: dir });
    expect(verify.stdout + verify.stderr).toContain('58 of 58');
  });
});
