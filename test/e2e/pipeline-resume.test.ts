import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, type RecordState } from '../../src/ledger/index.js';
import type { RunReport } from '../../src/pipeline/runner/index.js';
import { CLI } from '../support/cli.js';
import { startTestService, tempDir } from '../support/service.js';
import { demoClient, generateSamples, runPipelineCli, stagedLog, stagedSet, type Samples } from '../support/pipeline-run.js';

const PERSONS = 600;
const BATCH = 50;
const WINDOW = 3;
/** Slow enough that a run is still uploading when the test has seen its first staged batch. */
const SLOW_UPLOADS = 'PUT /counterparty-management/*:latency=1000';
/**
 * Slow enough that the upload window is always full when a run is killed: the reader needs a few
 * milliseconds a batch, so without it a fast service could answer every batch before the next
 * one was read, and a kill after the 6th answer found nothing in flight (seen once in CI). At
 * 200 ms it was seen once more, on a CI machine busy with the other test files (the reader kept
 * from its next batch that long): 600 ms leaves that three times the room.
 */
const STEADY_UPLOADS = 'PUT /counterparty-management/*:latency=600';

/** Back to normal speed for the run that finishes the job. */
async function clearFaults(baseUrl: string): Promise<void> {
  const res = await fetch(`${baseUrl}/_admin/faults`, { method: 'DELETE' });
  if (res.status !== 204) throw new Error(`clearing faults: ${res.status}`);
}

/** What the ledger holds after a run: counts per state, and the referenceIds in some states. */
function readLedger(file: string, states: readonly RecordState[] = []) {
  const ledger = openLedger(file, { readonly: true });
  try {
    const counts = ledger.counts('generated-crm');
    const ids = new Set([...ledger.records({ states })].map((r) => r.referenceId!));
    const all = [...ledger.records()].map((r) => r.referenceId!).sort();
    const migrationId = ledger.runs().at(-1)!.migrationId!;
    return { counts, ids, all, migrationId };
  } finally {
    ledger.close();
  }
}

describe('resuming a pipeline run', () => {
  let samples: Samples;
  let work: string;
  beforeAll(async () => {
    samples = await generateSamples({ persons: PERSONS, batchRecords: BATCH, inFlight: WINDOW });
    work = tempDir('stagecoach-resume-');
  });
  afterAll(() => {
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const killPoints: Array<{ at: 'in_flight' | 'answered' | 'done'; after: number; what: string }> = [
    { at: 'in_flight', after: 1, what: 'the first batch is in the ledger but not sent' },
    { at: 'answered', after: 4, what: 'the 4th batch is answered but its results are not in the ledger' },
    { at: 'done', after: 6, what: 'the 6th batch is recorded' },
    { at: 'in_flight', after: 10, what: 'the 10th batch is in the ledger but not sent' },
  ];

  for (const point of killPoints) {
    it(`after kill -9 when ${point.what}, a second run stages exactly the expected set and re-sends only the in-flight window`, async () => {
      const service = await startTestService({ faults: STEADY_UPLOADS });
      const client = demoClient(service.url);
      const ledgerFile = join(work, `kill-${point.at}-${point.after}.db`);
      try {
        const killed = await runPipelineCli(samples, service.url, {
          args: ['--ledger', ledgerFile],
          env: { STAGECOACH_TEST_KILL_AFTER_BATCHES: String(point.after), STAGECOACH_TEST_KILL_AT: point.at },
        });
        expect(killed.signal).toBe('SIGKILL');
        const crashed = readLedger(ledgerFile, ['in_flight']);
        expect(crashed.counts.in_flight).toBeGreaterThan(0);
        expect(crashed.counts.in_flight).toBeLessThanOrEqual(WINDOW * BATCH);
        expect(crashed.counts.mapped + crashed.counts.failed + crashed.counts.rejected).toBe(0);
        if (point.at === 'done') expect(crashed.counts.staged).toBeGreaterThanOrEqual(point.after * BATCH);

        await clearFaults(service.url);
        const resumed = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile] });
        expect(resumed.code).toBe(0);
        const r = resumed.report!;
        expect(r).toMatchObject({
          status: 'completed',
          complete: true,
          recoveredRuns: [1],
          migrationId: crashed.migrationId,
          migrationCreated: false,
        });
        // Not read again (the run resumed after the batches recorded done) or skipped: exactly what
        // the first run got confirmed; sent: everything else.
        expect(r.resume.mode).toBe(point.at === 'in_flight' && point.after === 1 ? 'full' : 'resumed');
        expect(r.skippedUnchanged + (PERSONS - r.rowsRead)).toBe(crashed.counts.staged);
        expect(r.sent).toBe(PERSONS - crashed.counts.staged);

        const done = readLedger(ledgerFile);
        expect(done.counts).toMatchObject({ staged: PERSONS, in_flight: 0, mapped: 0 });
        expect(await stagedSet(client, crashed.migrationId)).toEqual(done.all);

        // The service's own log: every record staged, and only in-flight records ever twice.
        const log = await stagedLog(client, crashed.migrationId);
        const seen = new Map<string, number>();
        for (const id of log) seen.set(id, (seen.get(id) ?? 0) + 1);
        expect([...seen.keys()].sort()).toEqual(done.all);
        const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
        expect(twice.every((id) => crashed.ids.has(id))).toBe(true);
        expect([...seen.values()].every((n) => n <= 2)).toBe(true);
        expect(log.length - PERSONS).toBeLessThanOrEqual(WINDOW * BATCH);
      } finally {
        await client.close();
        await service.dispose();
      }
    });
  }

  /** Starts `run --json` and sends SIGINT (`times` times) once the ledger shows staged records. */
  async function interruptedRun(
    baseUrl: string,
    ledgerFile: string,
    times: number,
  ): Promise<{ code: number | null; report: RunReport; stderr: string }> {
    const child = spawn(process.execPath, [CLI, 'run', 'pipeline.yaml', '--json', '--base-url', baseUrl, '--ledger', ledgerFile], {
      cwd: samples.dir,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let gone = false;
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => ((gone = true), resolve(code))));
    while (!gone) {
      await new Promise((r) => setTimeout(r, 25));
      let staged = 0;
      try {
        staged = readLedger(ledgerFile).counts.staged;
      } catch {
        /* not created yet */
      }
      if (staged > 0) break;
    }
    child.kill('SIGINT');
    if (times > 1) {
      // The second Ctrl-C once the first one has been taken in.
      while (!gone && !stderr.includes('Stopping: no more rows are read')) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGINT');
    }
    const code = await exited;
    return { code, report: JSON.parse(stdout) as RunReport, stderr };
  }

  it('on Ctrl-C stops reading, lets the uploads in flight finish, exits 130, and the next run sends nothing twice', async () => {
    const service = await startTestService({ faults: SLOW_UPLOADS });
    const client = demoClient(service.url);
    const ledgerFile = join(work, 'sigint.db');
    try {
      const first = await interruptedRun(service.url, ledgerFile, 1);
      expect(first.code).toBe(130);
      expect(first.report).toMatchObject({ status: 'interrupted', complete: false, unconfirmed: 0 });
      expect(first.stderr).toContain(
        'Stopping: no more rows are read; uploads in flight finish and are recorded (Ctrl-C again to abort them)',
      );
      const after = readLedger(ledgerFile);
      expect(after.counts.in_flight).toBe(0);
      expect(after.counts.mapped).toBe(first.report.unsent);
      expect(after.counts.staged).toBe(first.report.staged);
      expect(first.report.staged).toBeLessThan(PERSONS);
      await clearFaults(service.url);

      const second = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile] });
      expect(second.code).toBe(0);
      expect(second.report).toMatchObject({ status: 'completed', complete: true, sent: PERSONS - first.report.staged });
      expect(second.report!.resume.mode).toBe('resumed');
      expect(second.report!.skippedUnchanged + (PERSONS - second.report!.rowsRead)).toBe(first.report.staged);
      const log = await stagedLog(client, after.migrationId);
      expect(log).toHaveLength(PERSONS);
      expect(new Set(log).size).toBe(PERSONS);
      expect(await stagedSet(client, after.migrationId)).toEqual(readLedger(ledgerFile).all);
    } finally {
      await client.close();
      await service.dispose();
    }
  });

  it('on a second Ctrl-C aborts the uploads in flight, leaving their records in_flight for the next run', async () => {
    const service = await startTestService({ faults: SLOW_UPLOADS });
    const client = demoClient(service.url);
    const ledgerFile = join(work, 'sigint-twice.db');
    try {
      const first = await interruptedRun(service.url, ledgerFile, 2);
      expect(first.code).toBe(130);
      expect(first.report.status).toBe('interrupted');
      expect(first.stderr).toContain('Aborting uploads in flight: their records stay in_flight and are sent again next run');
      const after = readLedger(ledgerFile, ['in_flight']);
      expect(after.counts.in_flight).toBe(first.report.unconfirmed);
      expect(after.counts.in_flight).toBeGreaterThan(0);
      await clearFaults(service.url);
      expect(after.counts.in_flight).toBeLessThanOrEqual(WINDOW * BATCH);

      const second = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile] });
      expect(second.code).toBe(0);
      expect(second.report).toMatchObject({ status: 'completed', complete: true, sent: PERSONS - after.counts.staged });
      expect(await stagedSet(client, after.migrationId)).toEqual(readLedger(ledgerFile).all);
    } finally {
      await client.close();
      await service.dispose();
    }
  });

  it('completes under injected 503s, 429s and connection resets, with the retries counted', async () => {
    const faults = [
      'PUT /counterparty-management/*:status=503:p=0.2',
      'PUT /counterparty-management/*:status=429:p=0.1',
      'PUT /counterparty-management/*:reset=0.15:after=2000',
    ].join(';');
    const service = await startTestService({ faults, faultSeed: 11 });
    const client = demoClient(service.url);
    const config = join(work, 'fast-retries.json');
    writeFileSync(config, JSON.stringify({ retry: { retries: 30, baseDelayMs: 5, maxDelayMs: 50, maxRetryTimeMs: 60_000 } }));
    const ledgerFile = join(work, 'faults.db');
    try {
      const res = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile, '--config', config] });
      expect(res.code).toBe(0);
      expect(res.report).toMatchObject({ status: 'completed', complete: true, sent: PERSONS, staged: PERSONS, failed: 0, unconfirmed: 0 });
      expect(res.report!.retries).toBeGreaterThan(0);
      const done = readLedger(ledgerFile);
      expect(done.counts).toMatchObject({ staged: PERSONS, in_flight: 0 });
      expect(await stagedSet(client, res.report!.migrationId!)).toEqual(done.all);
    } finally {
      await client.close();
      await service.dispose();
    }
  });
});
