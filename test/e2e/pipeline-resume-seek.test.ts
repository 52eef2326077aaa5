/**
 * A resume that seeks: after `run` is killed (SIGKILL) mid-run, the next run starts reading at the
 * last row the killed run settled instead of at byte 0, and the ledger ends as a clean run's does.
 * A source file changed in between makes the next run read everything again, and say so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger } from '../../src/ledger/index.js';
import { startTestService, tempDir } from '../support/service.js';
import { generateSamples, runPipelineCli, type Samples } from '../support/pipeline-run.js';

const PERSONS = 1500;
const BATCH = 50;
const WINDOW = 2;
/** Keeps a few batches in flight when the run is killed. */
const STEADY_UPLOADS = 'PUT /counterparty-management/*:latency=100';

async function clearFaults(baseUrl: string): Promise<void> {
  const res = await fetch(`${baseUrl}/_admin/faults`, { method: 'DELETE' });
  if (res.status !== 204) throw new Error(`clearing faults: ${res.status}`);
}

/** The ledger's records as comparable facts: per record its key (or file:line), state and error codes. */
function ledgerFacts(file: string) {
  const ledger = openLedger(file, { readonly: true });
  try {
    const facts = [...ledger.records()]
      .map((r) => `${r.legacyKey ?? `${r.provenance.file}:${r.provenance.line}`} ${r.state} ${r.errors.map((e) => e.code).join(',')}`)
      .sort();
    return { facts, counts: ledger.counts('generated-crm') };
  } finally {
    ledger.close();
  }
}

/** The CSV file the generated pipeline reads. */
function csvPath(samples: Samples): string {
  const csv = /path:\s*['"]?([^'"\s]+\.csv)/.exec(readFileSync(samples.pipeline, 'utf8'))?.[1];
  if (!csv) throw new Error('no CSV source in the generated pipeline');
  return csv;
}

describe('a resume that seeks', () => {
  let samples: Samples;
  let work: string;
  let dataRows: number;
  beforeAll(async () => {
    samples = await generateSamples({ persons: PERSONS, everyDefectOnce: true, batchRecords: BATCH, inFlight: WINDOW });
    // A duplicate at the end of the first data row, far past the checkpoint: the resumed run must
    // still know where its key was first (the rows it does not read again).
    const csv = join(samples.dir, csvPath(samples));
    const lines = readFileSync(csv, 'utf8').split('\n');
    appendFileSync(csv, `${readFileSync(csv, 'utf8').endsWith('\n') ? '' : '\n'}${lines[1]}\n`);
    work = tempDir('stagecoach-resume-seek-');
  });
  afterAll(() => {
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** A clean run on its own service and ledger: what the resumed ledger must end as. */
  async function cleanRun(name: string) {
    const service = await startTestService();
    try {
      const ledgerFile = join(work, `${name}.db`);
      const res = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile] });
      expect(res.code).toBe(0);
      expect(res.report!.resume).toMatchObject({ mode: 'full', reason: 'first run of this pipeline' });
      dataRows = res.report!.rowsRead;
      return ledgerFacts(ledgerFile);
    } finally {
      await service.dispose();
    }
  }

  async function killedRun(baseUrl: string, ledgerFile: string, afterBatches: number) {
    const killed = await runPipelineCli(samples, baseUrl, {
      args: ['--ledger', ledgerFile],
      env: { STAGECOACH_TEST_KILL_AFTER_BATCHES: String(afterBatches), STAGECOACH_TEST_KILL_AT: 'done' },
    });
    expect(killed.signal).toBe('SIGKILL');
    await clearFaults(baseUrl);
  }

  it('starts at the last settled row after kill -9, reads only the rest, and ends with the ledger of a clean run', async () => {
    const clean = await cleanRun('clean');
    const service = await startTestService({ faults: STEADY_UPLOADS });
    const ledgerFile = join(work, 'killed.db');
    try {
      await killedRun(service.url, ledgerFile, 12);
      const resumed = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile] });
      expect(resumed.code).toBe(0);
      const r = resumed.report!;
      expect(r).toMatchObject({ status: 'completed', complete: true, recoveredRuns: [1] });
      expect(r.resume).toMatchObject({ mode: 'resumed', fromRun: 1, file: expect.stringMatching(/\.csv$/) });
      // At least the 12 batches the killed run had recorded lie before the start, and only the
      // rows from there on are read (the one at the start again, found unchanged).
      expect(r.resume.line!).toBeGreaterThan(12 * BATCH);
      expect(r.rowsRead).toBeLessThanOrEqual(dataRows - 12 * BATCH + 1);
      expect(r.rowsRead).toBeGreaterThan(0);
      expect(r.skippedUnchanged).toBeGreaterThanOrEqual(1);
      expect(resumed.stderr + resumed.stdout).not.toContain('INTERNAL_ERROR');

      const after = ledgerFacts(ledgerFile);
      expect(clean.facts.filter((f) => f.includes('DUPLICATE_LEGACY_KEY')).length).toBeGreaterThan(0);
      expect(after.counts).toEqual(clean.counts);
      expect(after.facts).toEqual(clean.facts);
    } finally {
      await service.dispose();
    }
  });

  it('reads everything again when a source file changed after the kill, and says why', async () => {
    const service = await startTestService({ faults: STEADY_UPLOADS });
    const ledgerFile = join(work, 'changed.db');
    try {
      await killedRun(service.url, ledgerFile, 8);
      // Same bytes, a new modification time: enough to distrust the checkpoint.
      utimesSync(join(samples.dir, csvPath(samples)), new Date(), new Date(Date.now() + 5000));
      const again = await runPipelineCli(samples, service.url, { args: ['--ledger', ledgerFile] });
      expect(again.code).toBe(0);
      expect(again.report!.resume).toMatchObject({ mode: 'full' });
      expect(again.report!.resume.reason).toContain('changed since run 1');
      expect(again.report!.rowsRead).toBe(dataRows);
      expect(again.report!.complete).toBe(true);
    } finally {
      await service.dispose();
    }
  });
});
