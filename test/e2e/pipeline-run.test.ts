import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger } from '../../src/ledger/index.js';
import type { StagecoachClient } from '../../src/client/index.js';
import { runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoClient, generateSamples, runPipelineCli, stagedLog, stagedSet, type Samples } from '../support/pipeline-run.js';

interface Defect {
  file: string;
  line: number;
  key: string;
  code: string;
}

describe('stagecoach run against the embedded service', () => {
  let service: TestService;
  let client: StagecoachClient;
  let samples: Samples;
  let migrationId: string;
  const ledgerFile = () => join(samples.dir, '.stagecoach', 'ledger.db');

  beforeAll(async () => {
    service = await startTestService();
    client = demoClient(service.url);
    samples = await generateSamples({ persons: 400, organisations: 80, everyDefectOnce: true, batchRecords: 40, inFlight: 3 });
  });
  afterAll(async () => {
    await client?.close();
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  it('stages every valid record, records every defect at its file and line, and says everything stageable is staged', async () => {
    const res = await runPipelineCli(samples, service.url);
    expect(res.stderr).not.toContain('"level":50');
    expect(res.code).toBe(0);
    const r = res.report!;
    const defects = JSON.parse(readFileSync(join(samples.dir, 'defects.json'), 'utf8')) as Defect[];
    expect(r).toMatchObject({
      status: 'completed',
      complete: true,
      migrationCreated: true,
      rowsRead: 480,
      rejected: defects.length,
      mapped: 480 - defects.length,
      skippedUnchanged: 0,
      failed: 0,
      unconfirmed: 0,
      unsent: 0,
    });
    expect(r.sent).toBe(r.mapped);
    expect(r.staged).toBe(r.mapped);
    expect(r.batches).toBe(Math.ceil(r.mapped / 40));
    expect(r.ledgerFile).toBe(ledgerFile()); // the default: .stagecoach/ledger.db in the working folder
    migrationId = r.migrationId!;

    // The platform holds exactly the records the ledger says are staged.
    const ledger = openLedger(ledgerFile(), { readonly: true });
    const stagedInLedger = [...ledger.records({ states: ['staged'] })].map((x) => x.referenceId!).sort();
    const rejected = [...ledger.records({ states: ['rejected'] })];
    ledger.close();
    expect(stagedInLedger).toHaveLength(r.mapped);
    expect(await stagedSet(client, migrationId)).toEqual(stagedInLedger);

    // Every planted defect is in the ledger at its file and line, with its code; nothing else is.
    const found = rejected.map((x) => `${x.provenance.file}:${x.provenance.line} ${x.errors.map((e) => e.code).join(',')}`);
    expect(rejected).toHaveLength(defects.length);
    for (const d of defects)
      expect(
        found.some((f) => f.startsWith(`${d.file}:${d.line} `) && f.includes(d.code)),
        `${d.file}:${d.line} ${d.code}`,
      ).toBe(true);
    for (const x of rejected)
      expect(x.errors.every((e) => e.message.length > 0 && ['source', 'mapping', 'check'].includes(e.stage))).toBe(true);
  });

  it('sends nothing on a second run when nothing changed', async () => {
    const before = (await stagedLog(client, migrationId)).length;
    const res = await runPipelineCli(samples, service.url);
    expect(res.code).toBe(0);
    expect(res.report).toMatchObject({
      status: 'completed',
      complete: true,
      migrationId,
      migrationCreated: false,
      sent: 0,
      batches: 0,
      skippedUnchanged: 468,
      rejected: 12,
    });
    expect((await stagedLog(client, migrationId)).length).toBe(before);
  });

  it('re-sends exactly the one record whose row changed', async () => {
    const csv = join(samples.dir, 'klanten.csv');
    const lines = readFileSync(csv, 'utf8').split('\n');
    // Line 11 (a person) gets another surname; everything else stays as it was.
    const cells = lines[10]!.split(';');
    const key = cells[0]!;
    cells[4] = 'Verandering';
    lines[10] = cells.join(';');
    writeFileSync(csv, lines.join('\n'));

    const before = await stagedLog(client, migrationId);
    const res = await runPipelineCli(samples, service.url);
    expect(res.code).toBe(0);
    expect(res.report).toMatchObject({ status: 'completed', sent: 1, staged: 1, batches: 1, skippedUnchanged: 467 });
    const after = await stagedLog(client, migrationId);
    const ledger = openLedger(ledgerFile(), { readonly: true });
    const changed = [...ledger.records({ states: ['staged'] })].find((x) => x.legacyKey === key)!;
    ledger.close();
    expect(after.slice(before.length)).toEqual([changed.referenceId]);
    expect(changed.attempts).toBe(2);
    const staged = await client.migrations.getStaged(migrationId, changed.referenceId!);
    expect(staged?.surname).toBe('Verandering');
  });

  it('shows per pipeline the records in each state, the last run and batch, and the runs', async () => {
    const res = await runCli(['status', '--json'], { cwd: samples.dir });
    expect(res.code).toBe(0);
    const status = JSON.parse(res.stdout) as { ledger: string; pipelines: Array<Record<string, any>>; runs: Array<Record<string, any>> };
    expect(status.ledger).toBe(ledgerFile());
    expect(status.pipelines).toHaveLength(1);
    expect(status.pipelines[0]).toMatchObject({
      pipeline: 'generated-crm',
      component: 'Counterparties',
      records: 480,
      byState: { mapped: 0, rejected: 12, in_flight: 0, staged: 468, failed: 0, invalid: 0, imported: 0 },
      lastRun: { id: 3, status: 'completed', migrationId },
      lastBatch: { run: 3, state: 'done', records: 1 },
    });
    expect(status.runs.map((x) => [x.id, x.status, x.migrationId])).toEqual([
      [1, 'completed', migrationId],
      [2, 'completed', migrationId],
      [3, 'completed', migrationId],
    ]);

    const text = await runCli(['status'], { cwd: samples.dir });
    expect(text.stdout).toContain(`generated-crm (Counterparties): 480 records in ${ledgerFile()}`);
    expect(text.stdout).toContain(`last run 3: completed`);
  });

  it('refuses status without a ledger, naming where it looked', async () => {
    const res = await runCli(['status', '--ledger', join(samples.dir, 'nothing.db')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      `stagecoach: no ledger at ${join(samples.dir, 'nothing.db')}: run a pipeline first (stagecoach run <pipeline>) or name the ledger with --ledger <file>\n`,
    );
  });
});
