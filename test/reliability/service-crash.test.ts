/**
 * Crash of the service: the embedded service runs as a child process (`stagecoach serve` on a
 * fixed port and data folder) and is SIGKILLed while it stages, validates and imports, then
 * started again on the same port and folder. One `stagecoach migrate` runs throughout and must
 * finish by itself (its retries span the restarts), with every record staged and imported once
 * and the only records received twice being records in flight at a kill.
 *
 * Short form in `npm test`; `npm run soak` (STAGECOACH_SOAK=1) runs the long form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/service.js';
import { demoClient, type Samples } from '../support/pipeline-run.js';
import {
  expectMigratedExactlyOnce,
  cleanSamples,
  clientConfig,
  expectedReferenceIds,
  judge,
  latestJob,
  ledgerIdsInState,
  readLedgerState,
  reportFigures,
  seedIds,
  serviceTruth,
  sleep,
  soak,
  spawnCli,
  startServiceProcess,
  suiteTimeout,
  type LedgerState,
  type ServiceProcess,
} from '../support/chaos.js';

const PERSONS = soak(1_200, 20_000);
const BATCH = soak(50, 100);
const WINDOW = soak(3, 4);
const SLOW_STAGING = 'PUT /counterparty-management/*:latency=100-250';
const JOB_RATE = soak(500, 2_000);
/** How long the service stays down before it is started again. */
const DOWN_MS = soak([200], [100, 500, 1_500, 3_000]);
/** Retries that outlast a restart: up to 40 tries, at most 1 s apart, within a minute. */
const RETRY = { retries: 40, baseDelayMs: 50, maxDelayMs: 1_000, maxRetryTimeMs: 60_000 };

type Phase = 'staging' | 'validation' | 'import';
interface KillPoint {
  phase: Phase;
  what: string;
  reached(state: LedgerState | undefined): boolean;
}

const settled = (s: LedgerState | undefined) =>
  s ? (s.records.staged ?? 0) + (s.records.failed ?? 0) + (s.records.invalid ?? 0) + (s.records.imported ?? 0) : 0;

function killPoints(): KillPoint[] {
  const stagingAt = soak([0.3, 0.7], [0.1, 0.25, 0.4, 0.55, 0.7, 0.85]);
  const points: KillPoint[] = stagingAt.map((f) => {
    const n = Math.round(PERSONS * f);
    return { phase: 'staging', what: `${n} of ${PERSONS} records are staged`, reached: (s) => settled(s) >= n };
  });
  // While a job runs on the service: first right after it started, then later in it.
  const during = (phase: Phase, kind: string, delays: number[]) =>
    delays.map((delay): KillPoint => {
      let since: number | undefined;
      return {
        phase,
        what: `the ${kind} job has run ${delay} ms`,
        reached: (s) => {
          if (latestJob(s, kind)?.state !== 'running') return false;
          since ??= performance.now();
          return performance.now() - since >= delay;
        },
      };
    });
  points.push(
    ...during('validation', 'validate-staging', soak([500], [200, 2_500, 5_000])),
    ...during('import', 'import', soak([500], [200, 2_500, 5_000])),
  );
  return points;
}

describe('killing the service with SIGKILL while a migrate runs', () => {
  let samples: Samples;
  let work: string;
  let service: ServiceProcess;
  beforeAll(async () => {
    samples = await cleanSamples({ persons: PERSONS, batchRecords: BATCH, inFlight: WINDOW });
    work = tempDir('stagecoach-svc-crash-');
    service = await startServiceProcess({
      dataDir: join(work, 'service'),
      args: ['--faults', SLOW_STAGING, '--job-rate', String(JOB_RATE)],
    });
  });
  afterAll(async () => {
    await service?.stop();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'restarted on the same port and data, the service lets the same migrate run finish with every record staged and imported once',
    async () => {
      const started = performance.now();
      const client = demoClient(service.url);
      const ledger = join(work, 'ledger.db');
      const config = clientConfig(work, { retry: RETRY });
      try {
        const seeds = await seedIds(client);
        const expected = await expectedReferenceIds(samples.pipeline);
        const run = spawnCli(
          [
            'migrate',
            'pipeline.yaml',
            '--ledger',
            ledger,
            '--out',
            join(work, 'report'),
            '--base-url',
            service.url,
            '--config',
            config,
            '--json',
          ],
          { cwd: samples.dir },
        );
        const points = killPoints();
        const kills: Array<{ phase: Phase; what: string; downMs: number; inFlight: number }> = [];
        const allowed = new Map<string, number>();
        for (const [i, point] of points.entries()) {
          while (run.running() && !safely(() => point.reached(readLedgerState(ledger)))) await sleep(15);
          if (!run.running()) break;
          // In flight just before and just after the kill: every batch the service may have
          // taken in without the client hearing back is in one of the two.
          const before = ledgerIdsInState(ledger, 'in_flight');
          await service.kill();
          const inFlight = new Set([...before, ...ledgerIdsInState(ledger, 'in_flight')]);
          for (const id of inFlight) allowed.set(id, (allowed.get(id) ?? 0) + 1);
          const downMs = DOWN_MS[i % DOWN_MS.length]!;
          await sleep(downMs);
          await service.restart();
          kills.push({ phase: point.phase, what: point.what, downMs, inFlight: inFlight.size });
        }
        const final = await run.done;
        expect(final.code, `${final.stderr}\n${final.stdout.slice(0, 2000)}`).toBe(0);
        const result = JSON.parse(final.stdout) as { report: { balanced: boolean; run: { migrationId: string } } };
        expect(result.report.balanced).toBe(true);

        const truth = await serviceTruth(client, result.report.run.migrationId);
        const verdict = judge(expected, truth, seeds, allowed);
        reportFigures('service-crash', {
          records: expected.length,
          batch: BATCH,
          window: WINDOW,
          killPoints: points.length,
          killsSurvived: kills.length,
          killsByPhase: Object.fromEntries(['staging', 'validation', 'import'].map((p) => [p, kills.filter((k) => k.phase === p).length])),
          serviceStarts: service.starts,
          ...verdict,
          seconds: Math.round((performance.now() - started) / 100) / 10,
          kills,
        });
        expectMigratedExactlyOnce(expected, verdict, truth, ledger);
        expect(kills.map((k) => k.phase)).toEqual(points.map((p) => p.phase));
      } finally {
        await client.close();
      }
    },
    suiteTimeout(100_000),
  );
});

function safely(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}
