/**
 * `verify` with a pending bound so small that nearly every record waits in the scratch file for
 * its other sides (in the proof pass the ledger's and the live one; in the comparison the
 * ledger's, the rebuilt one, the live one; and the live ones nothing comes for) must find
 * exactly what it finds with everything in memory: generated persons imported by a service that
 * alters some and loses some, a few legacy rows changed after the import, and another ledger's
 * counterparties in the same tenant. The truth comes from the service's list of what it altered,
 * the rows this test changed, and the other migration's report. Real service, real CLI; the
 * bounded runs are in-process calls of `verify` on the same ledger and service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, runCli } from '../support/cli.js';
import { demoClient } from '../support/pipeline-run.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import { openLedger } from '../../src/ledger/index.js';
import { generateCrmSamples } from '../../src/pipeline/samples/generate-crm.js';
import { verify, type VerificationReport } from '../../src/reconcile/verify/index.js';
import type { ReconciliationReport } from '../../src/reconcile/index.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The report without its timing, which is all two verifications of the same data may differ in. */
const findings = (v: VerificationReport) => ({ ...v, seconds: 0 });

describe('verify with the pending records spilled', () => {
  it('finds exactly what the in-memory pass finds, and what was planted, when the bound makes records spill', async () => {
    const svc = await startTestService({
      alterations: 'surname:truncate=6:p=0.08;telephoneNumbers:drop-item:p=0.05;*:lose:p=0.02',
      faultSeed: 23,
    });
    services.push(svc);
    const dir = tempDir('stagecoach-verify-spill-');
    dirs.push(dir);
    await generateCrmSamples({ out: join(dir, 'crm'), persons: 1200, organisations: 0, seed: 19, defectsPer10k: 40 });
    const pipelineFile = join(dir, 'crm', 'pipeline.yaml');
    const ledgerFile = join(dir, 'ledger.db');
    const common = ['--ledger', ledgerFile, '--base-url', svc.url];
    const migrated = await runCli(['migrate', pipelineFile, '--drop-invalid', '--no-verify', '--out', 'out', ...common], { cwd: dir });
    expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);

    // Someone else migrates into the same tenant, with a ledger of their own: strays to this one.
    for (const sub of ['pipelines', 'mappings', 'samples/core-banking']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
    const other = await runCli(
      [
        'migrate',
        'pipelines/core-banking.yaml',
        '--drop-invalid',
        '--no-verify',
        '--out',
        'other',
        '--ledger',
        join(dir, 'other.db'),
        '--base-url',
        svc.url,
      ],
      { cwd: dir },
    );
    expect(other.code, other.stdout + other.stderr).toBe(0);
    const othersImported = (JSON.parse(readFileSync(join(dir, 'other/report.json'), 'utf8')) as ReconciliationReport).totals.imported;
    expect(othersImported).toBeGreaterThan(0);

    // The ledger's view: each imported record's referenceId, legacy key and file:line.
    const db = new Database(ledgerFile, { readonly: true });
    const imported = db
      .prepare<[], { reference_id: string; legacy_key: string; file: string; line: number }>(
        "SELECT reference_id, legacy_key, file, line FROM records WHERE state = 'imported' ORDER BY line",
      )
      .all();
    db.close();
    const where = new Map(imported.map((r) => [r.reference_id, `${r.file}:${r.line}`]));
    // What the service altered, of this migration's records; the other's it lost are no strays.
    const { altered: all } = (await (await fetch(`${svc.url}/_admin/faults/alterations`)).json()) as {
      altered: Array<{ referenceId: string; field: string }>;
    };
    const admin = { altered: all.filter((a) => where.has(a.referenceId)) };
    const lost = new Set(admin.altered.filter((a) => a.field === '*').map((a) => a.referenceId));
    const strays = othersImported - all.filter((a) => a.field === '*' && !where.has(a.referenceId)).length;

    // Three rows of records the platform holds otherwise than sent change in the export after the
    // import: not verifiable (a record it holds as sent is proven by hash whatever its row says now).
    const csvFile = join(dir, 'crm', 'klanten.csv');
    const lines = readFileSync(csvFile, 'utf8').split('\n');
    const changed = imported
      .filter((r) => !lost.has(r.reference_id) && admin.altered.some((a) => a.referenceId === r.reference_id))
      .slice(10, 13);
    for (const r of changed) {
      const cells = lines[r.line - 1]!.split(';');
      expect(cells[0]).toBe(r.legacy_key);
      cells[4] = `${cells[4]}x`; // achternaam: the surname sent is no longer what the row maps to
      lines[r.line - 1] = cells.join(';');
    }
    writeFileSync(csvFile, lines.join('\n'));

    const reference = await runCli(['verify', '--json', '--out', 'verified', ...common], { cwd: dir });
    expect(reference.code).toBe(1);
    const inMemory = JSON.parse(reference.stdout) as VerificationReport;

    // What was planted, and nothing else.
    const truth = (field: string) =>
      admin.altered
        .filter((a) => a.field === field && !lost.has(a.referenceId) && !changed.some((c) => c.reference_id === a.referenceId))
        .map((a) => where.get(a.referenceId)!)
        .sort();
    const listed = (field: string) =>
      (inMemory.fields.find((f) => f.field === field)?.records ?? []).map((x) => `${x.file}:${x.line}`).sort();
    expect(inMemory.fields.map((f) => f.field).sort()).toEqual(['surname', 'telephoneNumbers']);
    expect(truth('surname').length).toBeGreaterThan(5);
    expect(truth('telephoneNumbers').length).toBeGreaterThan(5);
    expect(listed('surname')).toEqual(truth('surname'));
    expect(listed('telephoneNumbers')).toEqual(truth('telephoneNumbers'));
    expect(inMemory.notHeld.records.map((r) => `${r.file}:${r.line}`).sort()).toEqual([...lost].map((id) => where.get(id)!).sort());
    expect(inMemory.notHeld.total).toBe(lost.size);
    expect(inMemory.notVerifiable.records.map((r) => r.referenceId).sort()).toEqual(changed.map((c) => c.reference_id).sort());
    expect(inMemory.strays).toMatchObject({ total: strays, unknown: strays, earlierMigration: 0 });
    const differing = new Set(admin.altered.filter((a) => a.field !== '*' && !lost.has(a.referenceId)).map((a) => a.referenceId));
    for (const c of changed) differing.delete(c.reference_id);
    expect(inMemory.differing).toBe(differing.size);
    expect(inMemory.identical).toBe(imported.length - lost.size - changed.length - differing.size);
    expect(inMemory).toMatchObject({ proven: inMemory.identical, compared: differing.size + changed.length });

    // The same verification in-process: first with the default bound (nothing spilled), then with
    // bounds that make records wait in the scratch file. The ledger names files as the CLI's
    // working folder saw them: this process works there too meanwhile.
    const cwd = process.cwd();
    process.chdir(dir);
    const ledger = openLedger(ledgerFile);
    const client = demoClient(svc.url);
    try {
      const run = async (pendingBound?: number) => {
        let spilled = -1;
        const v = await verify({
          ledger,
          migrationId: inMemory.migrationId,
          client,
          ...(pendingBound !== undefined ? { pendingBound } : {}),
          onSpilled: (s) => (spilled = s),
        });
        return { v, spilled };
      };
      const unbounded = await run();
      expect(unbounded.spilled).toBe(0);
      expect(findings(unbounded.v)).toEqual(findings(inMemory));
      for (const bound of [1, 2, 7]) {
        const tight = await run(bound);
        // Hundreds through the scratch file: fewer than the records, as in the proof pass the
        // ledger is read ahead of the stream and a live record mostly finds its import waiting
        // (how many wait depends on how far the service's import order strays, run to run).
        expect(tight.spilled, `bound ${bound}`).toBeGreaterThan(300);
        expect(findings(tight.v), `bound ${bound}`).toEqual(findings(inMemory));
      }
    } finally {
      await client.close();
      ledger.close();
      process.chdir(cwd);
    }
  });
});
