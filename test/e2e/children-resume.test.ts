/**
 * A table dump's run killed (kill -9) mid-way and run again (issue 46): the second run resumes,
 * every customer ends staged once with all its child rows in its lists, only the in-flight
 * window reaches the service twice, and every child row is accounted for across the two runs
 * (the resumed run counts the children of the customers settled before as such, and reports no
 * orphan that is not one). Then a change in a child file marks its customer changed for
 * `plan --ledger`. Real service, real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger } from '../../src/ledger/index.js';
import type { RunReport } from '../../src/pipeline/runner/index.js';
import type { PlanSummary } from '../../src/pipeline/read-pipeline.js';
import { generateTableDump, type DumpDefect } from '../../src/pipeline/samples/generate-table-dump.js';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir } from '../support/service.js';
import { demoClient, stagedLog } from '../support/pipeline-run.js';

const CUSTOMERS = 600;
const BATCH = 50;
const WINDOW = 3;
const STEADY_UPLOADS = 'PUT /counterparty-management/*:latency=600';

let dir: string;
let defects: DumpDefect[];
beforeAll(async () => {
  dir = tempDir('stagecoach-children-resume-');
  ({ defects } = await generateTableDump({ out: dir, customers: CUSTOMERS, seed: 4601 }));
  appendFileSync(join(dir, 'pipeline.yaml'), `batching: { records: ${BATCH}, bytes: 4194304 }\nconcurrency: { inFlight: ${WINDOW} }\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = async (url: string, ledger: string, env?: Record<string, string>) => {
  const res = await runCli(['run', 'pipeline.yaml', '--json', '--base-url', url, '--ledger', ledger], {
    cwd: dir,
    ...(env ? { env } : {}),
  });
  let report: RunReport | undefined;
  try {
    report = JSON.parse(res.stdout) as RunReport;
  } catch {
    report = undefined;
  }
  return { ...res, report };
};

describe('a table dump killed mid-run', () => {
  it('resumes with nothing lost or sent twice beyond the window, every child row accounted for; a changed child file changes its parent for plan --ledger', async () => {
    const service = await startTestService({ faults: STEADY_UPLOADS });
    const client = demoClient(service.url);
    const ledgerFile = join(dir, 'ledger.db');
    try {
      const killed = await run(service.url, ledgerFile, { STAGECOACH_TEST_KILL_AFTER_BATCHES: '4', STAGECOACH_TEST_KILL_AT: 'done' });
      expect(killed.signal).toBe('SIGKILL');
      await fetch(`${service.url}/_admin/faults`, { method: 'DELETE' });

      const resumed = await run(service.url, ledgerFile);
      expect(resumed.report, resumed.stderr).toBeDefined();
      const r = resumed.report!;
      expect(r.resume.mode).toBe('resumed');
      expect(r.status).toBe('completed');
      // Every child row of the resumed read: attached, a duplicate, an orphan, or with a customer settled before.
      for (const t of r.children!) {
        expect(t.rowsRead).toBe(t.attached + t.duplicates + t.orphans + t.settledBefore);
        expect(t.settledBefore).toBeGreaterThan(0);
        expect(t.orphans).toBe(defects.filter((d) => d.source === t.source && d.code === 'CHILD_ORPHAN').length);
      }
      expect(r.disagreements).toEqual([]);

      const ledger = openLedger(ledgerFile, { readonly: true });
      const migrationId = ledger.runs().at(-1)!.migrationId!;
      const counts = ledger.counts('table-dump');
      ledger.close();
      const refusedCustomers = defects.filter((d) => d.source === 'klanten').length;
      expect(counts).toMatchObject({ staged: CUSTOMERS - refusedCustomers, in_flight: 0, mapped: 0, rejected: defects.length });

      // The service: each customer once with its two addresses and phone numbers, at most the window twice.
      const log = await stagedLog(client, migrationId);
      expect(new Set(log).size).toBe(CUSTOMERS - refusedCustomers);
      expect(log.length - new Set(log).size).toBeLessThanOrEqual(WINDOW * BATCH);
      const page = await client.migrations.listStaged(migrationId, { offset: 0, limit: 100 });
      for (const item of page.items as unknown as { addresses?: unknown[]; telephoneNumbers?: unknown[] }[]) {
        expect(item.addresses).toHaveLength(2);
        expect(item.telephoneNumbers).toHaveLength(2);
      }

      // A house number changed in the address file: its customer is changed for plan --ledger.
      const file = join(dir, 'adressen.csv');
      const lines = readFileSync(file, 'utf8').split('\n');
      const cells = lines[10]!.split(';');
      cells[3] = `${cells[3]}A`;
      lines[10] = cells.join(';');
      writeFileSync(file, lines.join('\n'));
      const plan = await runCli(['plan', 'pipeline.yaml', '--ledger', ledgerFile, '--json'], { cwd: dir });
      expect(plan.code, plan.stderr).toBe(0);
      const impact = (JSON.parse(plan.stdout) as PlanSummary).impact!;
      expect(impact.changed).toBe(1);
      expect(impact.unchanged).toBe(CUSTOMERS - refusedCustomers - 1);
    } finally {
      await client.close();
      await service.dispose();
    }
  });
});
