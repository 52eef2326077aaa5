/**
 * Crash and resume of the CLI: `stagecoach migrate` is SIGKILLed at many points of one
 * migration — by records staged (read from its ledger), by the job the ledger says is running
 * (validation, import, counts) and after the jobs (while it reads the log and writes the
 * report) — and run again each time, until a run finishes. After every kill the ledger passes
 * `PRAGMA integrity_check`; at the end the service holds exactly the input's records, staged
 * and imported once each, and the only records it received twice are records that were in
 * flight at a kill.
 *
 * Short form in `npm test`; `npm run soak` (STAGECOACH_SOAK=1) runs the long form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import { demoClient, type Samples } from '../support/pipeline-run.js';
import {
  expectMigratedExactlyOnce,
  cleanSamples,
  expectedReferenceIds,
  judge,
  killWhen,
  latestJob,
  ledgerMigrations,
  ledgerIdsInState,
  ledgerIntegrity,
  readLedgerState,
  reportFigures,
  seedIds,
  serviceTruth,
  soak,
  spawnCli,
  suiteTimeout,
  type LedgerState,
} from '../support/chaos.js';

const PERSONS = soak(1_200, 20_000);
const BATCH = soak(50, 100);
const WINDOW = soak(3, 4);
/** Staging slowed down so that a run is still uploading when the test looks at its ledger. */
const SLOW_STAGING = soak('PUT /counterparty-management/*:latency=150-300', 'PUT /counterparty-management/*:latency=100-300');
/** Jobs slowed down to this many records a second, so a kill lands while a job runs. */
const JOB_RATE = soak(600, 2_000);
/** The long form also kills right after start and right after the jobs. */
const SOAK_STARTUP = soak(false, true);

type Phase = 'startup' | 'staging' | 'validation' | 'import' | 'counts' | 'report';
interface KillPoint {
  phase: Phase;
  what: string;
  /** True once the run got there (ledger state, ms since this process started). */
  reached(state: LedgerState | undefined, ms: number): boolean;
}

const settled = (s: LedgerState | undefined) =>
  s ? (s.records.staged ?? 0) + (s.records.failed ?? 0) + (s.records.invalid ?? 0) + (s.records.imported ?? 0) : 0;
const running = (s: LedgerState | undefined, kind: string) => latestJob(s, kind)?.state === 'running';

/** Kill points in the order a migration meets them. */
function killPoints(): KillPoint[] {
  const stagingAt = soak([0.12, 0.45, 0.8], [0.04, 0.1, 0.18, 0.26, 0.34, 0.42, 0.5, 0.58, 0.66, 0.74, 0.82, 0.9]);
  const jobDelays = soak([300], [0, 500, 1_000, 2_000]);
  const points: KillPoint[] = [];
  if (SOAK_STARTUP) points.push({ phase: 'startup', what: 'the process has started, 150 ms in', reached: (_s, ms) => ms >= 150 });
  for (const f of stagingAt) {
    const n = Math.round(PERSONS * f);
    points.push({ phase: 'staging', what: `${n} of ${PERSONS} records are staged`, reached: (s) => settled(s) >= n });
  }
  // A job: right after its row is written, and at later moments while it is polled.
  const during = (phase: Phase, kind: string) =>
    jobDelays.map((delay): KillPoint => {
      let since: number | undefined;
      return {
        phase,
        what: `the ${kind} job has been running for ${delay} ms in this process`,
        reached: (s, ms) => {
          if (!running(s, kind)) return false;
          since ??= ms;
          return ms - since >= delay;
        },
      };
    });
  points.push(...during('validation', 'validate-staging'), ...during('import', 'import'));
  points.push({ phase: 'counts', what: 'the counts job is in the ledger', reached: (s) => latestJob(s, 'counts') !== undefined });
  points.push({
    phase: 'report',
    what: 'every job is done (reading the log, writing the report)',
    reached: (s) => latestJob(s, 'counts')?.state === 'done',
  });
  if (SOAK_STARTUP)
    points.push({
      phase: 'report',
      what: 'the run resumed after the jobs, 300 ms in',
      reached: (s, ms) => latestJob(s, 'counts')?.state === 'done' && ms >= 300,
    });
  return points;
}
describe('killing stagecoach migrate with SIGKILL', () => {
  let samples: Samples;
  let work: string;
  let service: TestService;
  beforeAll(async () => {
    samples = await cleanSamples({ persons: PERSONS, batchRecords: BATCH, inFlight: WINDOW });
    work = tempDir('stagecoach-crash-');
    service = await startTestService({ faults: SLOW_STAGING, jobRecordsPerSecond: JOB_RATE });
  });
  afterAll(async () => {
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'at every point of staging, job polling, import and the report, a run again ends with every record staged and imported once, re-sending only records in flight at a kill',
    async () => {
      const client = demoClient(service.url);
      const ledger = join(work, 'ledger.db');
      const args = ['migrate', 'pipeline.yaml', '--ledger', ledger, '--out', join(work, 'report'), '--base-url', service.url, '--json'];
      const started = performance.now();
      try {
        const seeds = await seedIds(client);
        const expected = await expectedReferenceIds(samples.pipeline);

        const points = killPoints();
        const kills: Array<{ phase: Phase; what: string; at: string; inFlight: number; integrity: string }> = [];
        const missed: string[] = [];
        /** Extra sends each record may have had: once per kill that found it in flight. */
        const allowed = new Map<string, number>();
        let previousInFlight = new Set<string>();
        let runs = 0;
        let final: Awaited<ReturnType<typeof spawnCli>['done']> | undefined;

        for (const point of points) {
          runs++;
          const run = spawnCli(args, { cwd: samples.dir });
          const t0 = performance.now();
          const killed = await killWhen(run, () => point.reached(readLedgerState(ledger), performance.now() - t0));
          if (!killed) {
            // The run finished before getting there: every later point is past too.
            final = await run.done;
            missed.push(...points.slice(points.indexOf(point)).map((p) => `${p.phase}: ${p.what}`));
            break;
          }
          const integrity = ledgerIntegrity(ledger);
          const state = readLedgerState(ledger);
          const inFlight = ledgerIdsInState(ledger, 'in_flight');
          for (const id of inFlight) allowed.set(id, (allowed.get(id) ?? 0) + 1);
          // New in-flight records (not left over from the previous kill) never exceed the window.
          const fresh = inFlight.filter((id) => !previousInFlight.has(id)).length;
          expect(fresh, `records newly in flight at kill ${kills.length + 1}`).toBeLessThanOrEqual(WINDOW * BATCH);
          previousInFlight = new Set(inFlight);
          const jobs = state?.jobs.map((j) => `${j.kind}:${j.state}`).join(',') ?? '';
          kills.push({
            phase: point.phase,
            what: point.what,
            at: `${settled(state)} settled${jobs ? `, jobs ${jobs}` : ''}`,
            inFlight: inFlight.length,
            integrity,
          });
          expect(
            integrity === 'ok' || (integrity === 'missing' && point.phase === 'startup'),
            `integrity after kill ${kills.length} (${point.what}): ${integrity}`,
          ).toBe(true);
        }
        if (!final) {
          runs++;
          final = await spawnCli(args, { cwd: samples.dir }).done;
        }
        expect(final.stderr).not.toMatch(/stagecoach: /);
        expect(final.code, `${final.stderr}\n${final.stdout.slice(0, 3000)}`).toBe(0);
        expect(ledgerIntegrity(ledger)).toBe('ok');
        const result = JSON.parse(final.stdout) as { report: { balanced: boolean; run: { migrationId: string } } };
        expect(result.report.balanced).toBe(true);
        const migrationId = result.report.run.migrationId;

        const truth = await serviceTruth(client, migrationId);
        const verdict = judge(expected, truth, seeds, allowed);
        const seconds = Math.round((performance.now() - started) / 100) / 10;
        reportFigures('cli-crash', {
          records: expected.length,
          batch: BATCH,
          window: WINDOW,
          killPoints: points.length,
          killsSurvived: kills.length,
          killsByPhase: Object.fromEntries(
            ['startup', 'staging', 'validation', 'import', 'counts', 'report'].map((p) => [p, kills.filter((k) => k.phase === p).length]),
          ),
          missed,
          runs,
          ...verdict,
          seconds,
          kills,
        });
        expect(truth.staged).toEqual(expected);
        expectMigratedExactlyOnce(expected, verdict, truth, ledger);
        // Every run went into the one migration (none staged everything again into a new one).
        expect(ledgerMigrations(ledger)).toEqual([migrationId]);
        // Every kill point of the list was met, in every phase.
        expect(missed).toEqual([]);
        expect(kills.length).toBe(points.length);
      } finally {
        await client.close();
      }
    },
    suiteTimeout(100_000),
  );
});
