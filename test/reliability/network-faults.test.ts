/**
 * Network faults: the service runs with fault injection on about 10% of all requests — 500,
 * 503, 429 with Retry-After, added latency, connections reset while an upload arrives or before
 * an answer — and half of its stream responses cut inside a record. `stagecoach migrate` goes
 * through a watching proxy and must end with exactly the expected records staged and imported,
 * never having had more staging uploads open than its window nor sent a batch more often than
 * its retry budget allows.
 *
 * Short form in `npm test`; `npm run soak` (STAGECOACH_SOAK=1) runs 100,000 records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { retrySchema } from '../../src/client/options.js';
import { tempDir } from '../support/service.js';
import { demoClient, type Samples } from '../support/pipeline-run.js';
import {
  expectMigratedExactlyOnce,
  cleanSamples,
  expectedReferenceIds,
  faultStats,
  judge,
  ledgerIdsInState,
  reportFigures,
  seedIds,
  serviceTruth,
  setFaults,
  soak,
  spawnCli,
  startServiceProcess,
  startWatchingProxy,
  STAGING_ROUTE,
  suiteTimeout,
  type ServiceProcess,
} from '../support/chaos.js';

const PERSONS = soak(2_000, 100_000);
const BATCH = soak(50, 100);
const WINDOW = soak(3, 4);
/** About one request in ten meets a fault (1 - 0.98^5); streams are few, so half of them are cut. */
const TEN_PERCENT = [
  '*:status=500:p=0.02',
  '*:status=503:p=0.02',
  '*:status=429:p=0.02:retry-after=1',
  '*:latency=50-500:p=0.02',
  '*:reset=0.02:after=2000',
  'GET */stream:cut=0.5',
].join(';');
/** The client's default retry budget: the suite runs the CLI without retry settings. */
const BUDGET = retrySchema.parse({});
/** Runs of migrate allowed: a fault on a request that must not be repeated (the import start, creating the migration) ends a run with exit 4, and the next run resumes. */
const MAX_RUNS = 4;

describe('stagecoach migrate under injected network faults', () => {
  let samples: Samples;
  let work: string;
  let service: ServiceProcess;
  beforeAll(async () => {
    samples = await cleanSamples({ persons: PERSONS, batchRecords: BATCH, inFlight: WINDOW });
    work = tempDir('stagecoach-faults-');
    service = await startServiceProcess({ dataDir: join(work, 'service'), args: ['--faults', TEN_PERCENT, '--fault-seed', '7'] });
  });
  afterAll(async () => {
    await service?.stop();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'at about 10% faulted requests ends with exactly the expected records, within its in-flight window and its retry budget',
    async () => {
      const started = performance.now();
      const client = demoClient(service.url);
      const proxy = await startWatchingProxy(service.url);
      const ledger = join(work, 'ledger.db');
      try {
        // The test's own reads go around the faults.
        await setFaults(service.url, null).catch((err: Error) => {
          throw new Error(`${err.message} (${String(err.cause)}); service stderr: ${service.stderr()}`);
        });
        const seeds = await seedIds(client);
        await setFaults(service.url, TEN_PERCENT, 7);
        await fetch(`${service.url}/_admin/faults/stats`, { method: 'DELETE' });
        const expected = await expectedReferenceIds(samples.pipeline);

        const runs: Array<{ code: number | null; seconds: number; error?: string }> = [];
        const allowed = new Map<string, number>();
        let maxAttempts = 0;
        let maxStagingInFlight = 0;
        let uploads = 0;
        let final: { code: number | null; stdout: string; stderr: string } | undefined;
        while (runs.length < MAX_RUNS) {
          proxy.reset();
          const t0 = performance.now();
          final = await spawnCli(
            ['migrate', 'pipeline.yaml', '--ledger', ledger, '--out', join(work, 'report'), '--base-url', proxy.url, '--json'],
            { cwd: samples.dir },
          ).done;
          const p = proxy.stats();
          maxAttempts = Math.max(maxAttempts, ...p.stagingAttempts.values());
          maxStagingInFlight = Math.max(maxStagingInFlight, p.maxStagingInFlight);
          uploads += [...p.stagingAttempts.values()].reduce((a, b) => a + b, 0);
          const error = /stagecoach: (.*)/.exec(final.stderr)?.[1];
          runs.push({ code: final.code, seconds: Math.round((performance.now() - t0) / 100) / 10, ...(error ? { error } : {}) });
          if (final.code !== 4) break;
          // A run that gave up leaves records in flight: the next run sends them again.
          for (const id of ledgerIdsInState(ledger, 'in_flight')) allowed.set(id, (allowed.get(id) ?? 0) + 1);
        }
        const stats = await faultStats(service.url);
        await setFaults(service.url, null);
        expect(final!.code, `${final!.stderr}\n${final!.stdout.slice(0, 2000)}`).toBe(0);
        // Only the two requests that must not be repeated may end a run, each with a clear message.
        for (const r of runs.slice(0, -1)) {
          expect(r.code).toBe(4);
          expect(r.error).toMatch(
            /(PUT \/migration-assistance\/migrations\/[0-9a-f-]+\/jobs\/import|POST \/migration-assistance\/migrations)/,
          );
        }
        const result = JSON.parse(final!.stdout) as { report: { balanced: boolean; run: { migrationId: string } } };
        expect(result.report.balanced).toBe(true);

        const truth = await serviceTruth(client, result.report.run.migrationId);
        const verdict = judge(expected, truth, seeds, allowed);
        reportFigures('network-faults', {
          records: expected.length,
          batch: BATCH,
          window: WINDOW,
          faults: TEN_PERCENT,
          requests: stats.requests,
          faulted: stats.faulted,
          faultedShare: Math.round((stats.faulted / stats.requests) * 1000) / 1000,
          fired: stats.fired,
          statuses: stats.statuses,
          maxStagingInFlightAtService: stats.maxConcurrent[STAGING_ROUTE],
          maxStagingInFlightAtClient: maxStagingInFlight,
          stagingUploads: uploads,
          maxAttemptsPerBatch: maxAttempts,
          retryBudget: BUDGET.retries,
          runs,
          ...verdict,
          seconds: Math.round((performance.now() - started) / 100) / 10,
        });
        expectMigratedExactlyOnce(expected, verdict, truth, ledger);
        // Faults were met and survived, the window held on both sides, no batch beyond the budget.
        expect(stats.faulted).toBeGreaterThan(0);
        expect(stats.fired.status + stats.fired.reset).toBeGreaterThan(0);
        expect(stats.maxConcurrent[STAGING_ROUTE]).toBeLessThanOrEqual(WINDOW);
        expect(maxStagingInFlight).toBeLessThanOrEqual(WINDOW);
        expect(maxAttempts).toBeLessThanOrEqual(BUDGET.retries + 1);
      } finally {
        await proxy.close();
        await client.close();
      }
    },
    suiteTimeout(100_000),
  );
});
