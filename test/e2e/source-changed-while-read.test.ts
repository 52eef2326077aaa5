/**
 * A source file cut while a run reads it, against the real embedded service: the runner (the one
 * `run` and `migrate` use) is given a batch callback that truncates the export at a row boundary
 * halfway once the first batch is staged, so the reader meets a clean end of file there. The run
 * must fail loudly, naming the file and both sizes, and keep no tally of it for the report;
 * never end "completed" with half the rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger } from '../../src/ledger/index.js';
import { runPipeline } from '../../src/pipeline/runner/index.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { headline } from '../../src/reconcile/report-model.js';
import { DEMO, startTestService, type TestService } from '../support/service.js';
import { generateSamples, type Samples } from '../support/pipeline-run.js';

describe('a source file that changes while a run reads it', () => {
  let service: TestService;
  let samples: Samples;

  beforeAll(async () => {
    service = await startTestService();
    samples = await generateSamples({ persons: 20_000, batchRecords: 200, inFlight: 1, workers: 0 });
  });
  afterAll(async () => {
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  it('fails the run with the file and its sizes, and keeps no tally of the cut read', async () => {
    const klanten = join(samples.dir, 'klanten.csv');
    const size = statSync(klanten).size;
    const bytes = readFileSync(klanten);
    // the first byte of the row at the middle of the file: the reader finds a clean end there
    const cutAt = bytes.indexOf(10, Math.floor(size / 2)) + 1;
    expect(cutAt).toBeGreaterThan(size / 2);
    const ledgerFile = join(samples.dir, 'ledger.db');
    let cut = false;
    let rowsAtCut = -1;
    let rowsRead = 0;
    const report = await runPipeline({
      pipelineFile: samples.pipeline,
      ledgerFile,
      ledgerThread: 'main',
      connection: {
        baseUrl: service.url,
        clientId: DEMO.clientId,
        clientSecret: DEMO.secret,
        brokerKey: DEMO.broker,
        labelReferenceId: DEMO.label,
      },
      progressEveryMs: 0,
      onProgress: (p) => (rowsRead = p.rowsRead),
      onBatch: (e) => {
        if (e.type !== 'done' || cut) return;
        cut = true;
        rowsAtCut = rowsRead;
        truncateSync(klanten, cutAt);
      },
    });
    expect(cut).toBe(true);
    // the cut came while the run was reading, well before the middle of the file
    expect(rowsAtCut).toBeLessThan(5_000);
    expect(report.rowsRead).toBeGreaterThan(rowsAtCut);
    expect(report.rowsRead).toBeLessThan(15_000);
    // the samples lie outside the working folder: the file is shown by its absolute path
    const shown = klanten;
    expect(report.status).toBe('failed');
    expect(report.error).toEqual({
      code: 'SOURCE_READ_FAILED',
      message: `${shown} changed while the run read it: ${size.toLocaleString('en-US')} bytes when the run started, ${cutAt.toLocaleString('en-US')} bytes now. The rows read from it are staged but not accounted for: run again once the export is complete and no longer written to`,
    });
    expect(report.files).toEqual([]);
    const ledger = openLedger(ledgerFile, { readonly: true });
    try {
      expect(ledger.tallies.latest([report.runId])).toEqual([]);
      expect(ledger.runs().at(-1)?.status).toBe('failed');
      // Issue 40: the report says so, and does not balance ("accounted for so far" it is not).
      const { report: rec } = await reconcile({ ledger, migrationId: report.migrationId!, outDir: join(samples.dir, 'report') });
      expect(rec.balanced).toBe(false);
      expect(rec.problems).toContain(
        `run ${report.runId} of ${report.pipeline} failed reading its export: ${report.error!.message}. Its rows are not all accounted for: run ${report.pipeline} again once the export is complete`,
      );
      expect(headline(rec).state).toBe('not-balanced');
    } finally {
      ledger.close();
    }
  });
});
