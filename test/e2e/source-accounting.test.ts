/**
 * The front half's accounting end to end through the CLI: the fixed-width sample planned with
 * its per-file count, and a JSON export cut off half way refused by `run` (exit 1, named) unless
 * `--allow-truncated`, with the count kept in the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import type { PlanSummary } from '../../src/pipeline/checks/plan-summary.js';
import type { RunReport } from '../../src/pipeline/runner/index.js';

describe('stagecoach plan on the fixed-width core-banking sample', () => {
  it('reads the 300 records after the two title lines, names the one cut short, and counts the file apart', async () => {
    const res = await runCli(['plan', 'pipelines/core-banking.yaml', '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const s = JSON.parse(res.stdout) as PlanSummary;
    expect([s.rowsRead, s.mapped, s.rejected]).toEqual([300, 299, 1]);
    expect(s.samples.map((x) => `${x.file}:${x.line} ${x.code} ${x.message}`)).toEqual([
      'samples/core-banking/klanten.txt:153 SOURCE_ROW_INVALID samples/core-banking/klanten.txt:153: the record is 200 characters long, expected 238 (the fixed-width layout)',
    ]);
    expect(s.files).toEqual([
      {
        source: 'kernbank-klanten',
        file: 'samples/core-banking/klanten.txt',
        format: 'fixed-width',
        physicalLines: 302,
        blankLines: 0,
        headerLines: 2,
        rowsRead: 300,
        rowErrors: 1,
        linesInRows: 300,
        swallowed: [],
      },
    ]);
    expect(s.disagreements).toEqual([]);
    const text = await runCli(['plan', 'pipelines/core-banking.yaml']);
    expect(text.stdout).toContain('  samples/core-banking/klanten.txt  302 / 0 / 2 / 300 / 1\n');
  });
});

describe('a JSON export cut off half way', () => {
  let service: TestService;
  let dir: string;
  let pipeline: string;

  beforeAll(async () => {
    service = await startTestService();
    dir = tempDir('stagecoach-truncated-');
    const all = (JSON.parse(readFileSync(join(ROOT, 'samples', 'crm', 'bedrijven.json'), 'utf8')) as { export: { bedrijven: unknown[] } })
      .export.bedrijven;
    // 20 whole organisations, one a line, and the 21st cut off after 30 characters (on line 22).
    const text = `{"export": {"bedrijven": [\n${all
      .slice(0, 20)
      .map((b) => JSON.stringify(b))
      .join(',\n')},\n${JSON.stringify(all[20]).slice(0, 30)}`;
    writeFileSync(join(dir, 'bedrijven.json'), text);
    pipeline = join(dir, 'pipeline.yaml');
    writeFileSync(
      pipeline,
      [
        'name: truncated',
        'language: 2',
        'sources:',
        '  - name: bedrijven',
        '    format: json',
        '    path: bedrijven.json',
        '    json: { path: export.bedrijven }',
        `    mapping: ${join(ROOT, 'mappings', 'counterparties', 'crm-organisations.yaml')}`,
        'checks: { missingRelationTarget: allow }',
        'target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await service?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('plan names the cut and the count of complete items', async () => {
    const res = await runCli(['plan', pipeline, '--json']);
    expect(res.code).toBe(0);
    const s = JSON.parse(res.stdout) as PlanSummary;
    expect(s.files[0]).toMatchObject({ items: 20, rowsRead: 20, rowErrors: 0 });
    expect(s.disagreements).toHaveLength(1);
    expect(s.disagreements[0]).toMatch(
      /bedrijven\.json: the file ends inside element 21 of the array \(it starts on line 22\), after 20 complete elements: the export looks cut off$/,
    );
    expect(s.rejectedByReason.SOURCE_READ_FAILED).toBe(1);
  });

  it('run exits 1 and names the file; --allow-truncated accepts it; the ledger keeps the count', async () => {
    const ledger = join(dir, 'ledger.db');
    const refused = await runCli(['run', pipeline, '--json', '--base-url', service.url, '--ledger', ledger]);
    expect(refused.code).toBe(1);
    const report = JSON.parse(refused.stdout) as RunReport;
    expect(report.complete).toBe(true);
    expect(report.readFailures).toHaveLength(1);
    expect(report.readFailures[0]).toMatch(/bedrijven\.json: the file ends inside element 21 of the array/);
    const text = await runCli(['run', pipeline, '--base-url', service.url, '--ledger', ledger]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/Read failure: .*bedrijven\.json: the file ends inside element 21 of the array .*--allow-truncated\)\./);
    // The sample organisations hold planted defects: more than 5% of them refused is expected.
    const accepted = await runCli([
      'run',
      pipeline,
      '--json',
      '--base-url',
      service.url,
      '--ledger',
      ledger,
      '--allow-truncated',
      '--expect-refused',
      '50%',
    ]);
    expect(accepted.code).toBe(0);
    expect((JSON.parse(accepted.stdout) as RunReport).readFailures).toEqual([]);
    const db = new Database(ledger, { readonly: true });
    try {
      const rows = db.prepare('SELECT run_id AS runId, file, accepted, tally FROM source_tallies ORDER BY run_id').all() as {
        runId: number;
        file: string;
        accepted: number;
        tally: string;
      }[];
      expect(rows.map((r) => [r.runId, r.accepted, JSON.parse(r.tally).items])).toEqual([
        [1, 0, 20],
        [2, 0, 20],
        [3, 1, 20],
      ]);
    } finally {
      db.close();
    }
  });
  it('migrate exits 1, names the file and its report does not balance; --allow-truncated imports and marks it accepted', async () => {
    const ledger = join(dir, 'migrate.db');
    const out = join(dir, 'report');
    const refused = await runCli(['migrate', pipeline, '--drop-invalid', '--ledger', ledger, '--out', out, '--base-url', service.url]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(
      /read failure .*bedrijven\.json: the file ends inside element 21 of the array .*\(accept it with --allow-truncated\)/,
    );
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
      balanced: boolean;
      problems: string[];
      sourceFiles: { file: string; items?: number; disagreement?: string; accepted?: boolean }[];
    };
    expect(report.balanced).toBe(false);
    expect(report.problems.filter((p) => p.startsWith('source file'))).toHaveLength(1);
    expect(report.problems.find((p) => p.startsWith('source file'))).toMatch(
      /^source file not accounted for: .*bedrijven\.json: the file ends inside element 21 of the array \(it starts on line 22\), after 20 complete elements/,
    );
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('**NOT BALANCED**');
    const accepted = await runCli([
      'migrate',
      pipeline,
      '--drop-invalid',
      '--ledger',
      join(dir, 'accepted.db'),
      '--out',
      join(dir, 'accepted'),
      '--base-url',
      service.url,
      '--allow-truncated',
      '--expect-refused',
      '50%',
    ]);
    const acceptedReport = JSON.parse(readFileSync(join(dir, 'accepted', 'report.json'), 'utf8')) as typeof report;
    expect(acceptedReport.sourceFiles).toHaveLength(1);
    expect(acceptedReport.sourceFiles[0]).toMatchObject({ items: 20, accepted: true });
    expect(acceptedReport.problems.filter((p) => p.startsWith('source file'))).toEqual([]);
    expect(acceptedReport.balanced).toBe(true);
    expect(accepted.code).toBe(0);
  });
});
