/**
 * `run` with reader workers (concurrency.workers), through the real CLI against the embedded
 * service: everything stageable is staged, the platform holds exactly what the ledger says, and
 * the records the workers framed are the very records one thread frames (a second run on one
 * thread finds every one unchanged and sends nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger } from '../../src/ledger/index.js';
import type { StagecoachClient } from '../../src/client/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoClient, generateSamples, runPipelineCli, stagedSet, type Samples } from '../support/pipeline-run.js';

describe('stagecoach run with reader workers', () => {
  let service: TestService;
  let client: StagecoachClient;
  let samples: Samples;

  beforeAll(async () => {
    service = await startTestService();
    client = demoClient(service.url);
    // 20,000 persons: 2.5 MB of CSV, over the 2 MiB from which a file is read in parallel.
    samples = await generateSamples({ persons: 20_000, batchRecords: 1000, inFlight: 4, workers: 2 });
  });
  afterAll(async () => {
    await client?.close();
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  it('stages what one thread would, with the same content hashes', async () => {
    const defects = JSON.parse(readFileSync(join(samples.dir, 'defects.json'), 'utf8')) as unknown[];
    const first = await runPipelineCli(samples, service.url);
    expect(first.code).toBe(0);
    const r = first.report!;
    expect(r).toMatchObject({
      status: 'completed',
      complete: true,
      rowsRead: 20_000,
      rejected: defects.length,
      mapped: 20_000 - defects.length,
      failed: 0,
      unconfirmed: 0,
      unsent: 0,
    });
    expect(r.staged).toBe(r.mapped);

    const ledger = openLedger(join(samples.dir, '.stagecoach', 'ledger.db'), { readonly: true });
    const stagedInLedger = [...ledger.records({ states: ['staged'] })].map((x) => x.referenceId!).sort();
    ledger.close();
    expect(await stagedSet(client, r.migrationId!)).toEqual(stagedInLedger);

    // The same pipeline on one thread: every record is recognised as already staged, unchanged.
    writeFileSync(samples.pipeline, readFileSync(samples.pipeline, 'utf8').replace('workers: 2', 'workers: 0'));
    const second = await runPipelineCli(samples, service.url);
    expect(second.code).toBe(0);
    expect(second.report).toMatchObject({
      status: 'completed',
      complete: true,
      rowsRead: 20_000,
      skippedUnchanged: r.mapped,
      sent: 0,
      rejected: defects.length,
    });
  });
});
