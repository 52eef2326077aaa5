import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, openLedgerWriter, type Ledger, type Scope } from '../../src/ledger/index.js';
import { Batcher, prepareRecord, type Batch, type BatchItem } from '../../src/pipeline/batcher/index.js';
import { BatchAnswer, matchResults, Uploader, type StagingSink } from '../../src/pipeline/uploader/index.js';
import { uploadLedger } from '../../src/pipeline/runner/run-ledger.js';
import { StagecoachError } from '../../src/contract/errors.js';
import type { StagingResult } from '../../src/contract/migration.js';
import { tempDir } from '../support/service.js';

/** Test records carry only the fields a test looks at. */
type PartialRecord = { type?: unknown };

const MIGRATION = '11111111-1111-4111-8111-111111111111';

function refOf(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}
function item(n: number, record: Record<string, unknown> = {}): BatchItem {
  return prepareRecord({
    legacyKey: `K${String(n).padStart(5, '0')}`,
    referenceId: refOf(n),
    record: { referenceId: refOf(n), type: 'person', initials: 'A.', surname: `S${n}`, ...record } as PartialRecord,
    provenance: { source: 'persons', file: 'persons.csv', line: n + 1, byteOffset: n * 40, rowHash: `r${n}` },
  });
}
/** Every record of the body accepted. */
function acceptAll(body: string): StagingResult[] {
  return body
    .split('\x1e')
    .slice(1)
    .map((t) => ({ referenceId: (JSON.parse(t) as { referenceId: string }).referenceId, isSuccessful: true, errors: [] }));
}

describe('staging upload window', () => {
  let dir: string;
  let ledger: Ledger;
  let scope: Scope;
  let runId: number;
  let mig: number;
  beforeEach(() => {
    dir = tempDir('stagecoach-uploader-');
    ledger = openLedger(join(dir, 'ledger.db'));
    const s = ledger.startRun({ pipeline: 'p', component: 'Counterparties', pipelineFile: 'p.yaml', pipelineHash: 'h' });
    scope = s.scope;
    runId = s.run.id;
    mig = ledger.migrationNo(MIGRATION);
  });
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never pulls the source more than window × batch records ahead of the results', async () => {
    const window = 3;
    const batchSize = 10;
    const total = 200;
    let pulled = 0;
    let settled = 0; // records whose results are in the ledger
    let maxOutstanding = 0;
    let active = 0;
    let maxActive = 0;
    const sink: StagingSink = {
      async stage(body) {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 5)); // a slow service
        active--;
        return acceptAll(body);
      },
    };
    const uploader = new Uploader({
      sink,
      ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
      inFlight: window,
      onBatch: (e) => {
        if (e.type === 'done') settled += e.staged + e.failed;
      },
    });
    function* source() {
      for (let n = 1; n <= total; n++) {
        pulled++;
        maxOutstanding = Math.max(maxOutstanding, pulled - settled);
        yield item(n);
      }
    }
    const batcher = new Batcher({ maxRecords: batchSize, maxBytes: 1 << 20, format: 'json-seq' });
    for (const it of source()) {
      const closed = batcher.add(it);
      if (closed) await uploader.submit(closed);
    }
    const last = batcher.flush();
    if (last) await uploader.submit(last);
    const report = await uploader.drain();

    expect(maxOutstanding).toBeLessThanOrEqual(window * batchSize);
    expect(maxOutstanding).toBeGreaterThan((window - 1) * batchSize); // the window was really used
    expect(maxActive).toBe(window);
    expect(report).toEqual({
      batches: 20,
      batchesFailed: 0,
      recordsSent: 200,
      bytesSent: report.bytesSent,
      staged: 200,
      failed: 0,
      failedByCode: {},
      unconfirmed: 0,
      splits: 0,
    });
    expect(ledger.counts('p')).toMatchObject({ staged: 200, in_flight: 0 });
  });

  it('matches results by referenceId in any order; a refused record keeps field, code and value, a missing one fails with NO_STAGING_RESULT', async () => {
    const batcher = new Batcher({ maxRecords: 10, maxBytes: 1 << 20, format: 'json-seq' });
    batcher.add(item(1));
    batcher.add(item(2, { initials: '' }));
    batcher.add(item(3));
    const batch = batcher.flush()!;
    const sink: StagingSink = {
      stage: async () => [
        { referenceId: refOf(2), isSuccessful: false, errors: [{ field: 'initials', message: 'MISSING_REQUIRED_FIELD' }] },
        { referenceId: refOf(1), isSuccessful: true, errors: [] },
        // (a PAYLOAD_TOO_LARGE here sends the unanswered record again: test/unit/uploader-split.test.ts)
        { referenceId: '', isSuccessful: false, errors: [{ field: '', message: 'SHUTTING_DOWN' }] },
      ],
    };
    const uploader = new Uploader({
      sink,
      ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
      inFlight: 2,
    });
    await uploader.submit(batch);
    const report = await uploader.drain();
    expect(report.failedByCode).toEqual({ MISSING_REQUIRED_FIELD: 1, NO_STAGING_RESULT: 1 });
    const rows = [...ledger.records()];
    expect(rows.map((r) => [r.legacyKey, r.state])).toEqual([
      ['K00001', 'staged'],
      ['K00002', 'failed'],
      ['K00003', 'failed'],
    ]);
    expect(rows[1]!.errors).toEqual([
      {
        stage: 'staging',
        field: 'initials',
        code: 'MISSING_REQUIRED_FIELD',
        message: 'staging refused initials: MISSING_REQUIRED_FIELD',
        value: '',
      },
    ]);
    expect(rows[2]!.errors).toEqual([
      {
        stage: 'staging',
        field: '',
        code: 'NO_STAGING_RESULT',
        message: `no staging result came back for referenceId ${refOf(3)} (the service ended the upload with SHUTTING_DOWN); the next run sends it again`,
      },
    ]);
  });

  it('stops on an upload that fails after the client retries, leaving its records in_flight', async () => {
    let calls = 0;
    const sink: StagingSink = {
      async stage(body) {
        calls++;
        if (calls === 2) throw new StagecoachError('SERVICE_UNAVAILABLE', 'PUT /staging answered 503 (gave up after 7 attempts)');
        return acceptAll(body);
      },
    };
    const uploader = new Uploader({
      sink,
      ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
      inFlight: 1,
    });
    const batches: Batch[] = [];
    const batcher = new Batcher({ maxRecords: 2, maxBytes: 1 << 20, format: 'json-seq' });
    for (let n = 1; n <= 6; n++) {
      const c = batcher.add(item(n));
      if (c) batches.push(c);
    }
    await uploader.submit(batches[0]!);
    await expect(uploader.submit(batches[1]!)).rejects.toThrow('PUT /staging answered 503 (gave up after 7 attempts)');
    await expect(uploader.submit(batches[2]!)).rejects.toThrow('PUT /staging answered 503');
    const report = await uploader.drain();
    expect(calls).toBe(2);
    expect(report).toMatchObject({ batches: 2, batchesFailed: 1, staged: 2, unconfirmed: 2 });
    expect(ledger.counts('p')).toMatchObject({ staged: 2, in_flight: 2 });
    expect(ledger.batches(runId).map((b) => [b.state, b.error])).toEqual([
      ['done', null],
      ['failed', 'SERVICE_UNAVAILABLE: PUT /staging answered 503 (gave up after 7 attempts)'],
    ]);
  });

  it('on abort leaves the records of uploads in flight as in_flight and reports no failure', async () => {
    const ac = new AbortController();
    let called!: () => void;
    const sending = new Promise<void>((r) => (called = r));
    const sink: StagingSink = {
      stage: (_body, _format, signal) =>
        new Promise((_resolve, reject) => {
          called();
          signal!.addEventListener('abort', () => reject(new StagecoachError('ABORTED', 'PUT /staging was aborted')), { once: true });
        }),
    };
    const uploader = new Uploader({
      sink,
      ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
      inFlight: 2,
      signal: ac.signal,
    });
    const batcher = new Batcher({ maxRecords: 3, maxBytes: 1 << 20, format: 'json-seq' });
    for (let n = 1; n <= 2; n++) batcher.add(item(n));
    await uploader.submit(batcher.flush()!);
    await sending;
    ac.abort();
    const report = await uploader.drain();
    expect(uploader.failure).toBeUndefined();
    expect(report).toMatchObject({ batches: 1, batchesFailed: 1, unconfirmed: 2, staged: 0 });
    expect(ledger.counts('p')).toMatchObject({ in_flight: 2 });
    expect(ledger.batches(runId)[0]).toMatchObject({ state: 'failed', error: 'ABORTED: PUT /staging was aborted' });
  });

  it('checks an answer as it is read as matching the whole answer does, keeping no result while all are in place', () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    let fast = 0;
    for (let trial = 0; trial < 400; trial++) {
      const b = new Batcher({ maxRecords: 50, maxBytes: 1 << 20, format: 'json-seq' });
      const n = 1 + Math.floor(random() * 6);
      // Now and then the same referenceId twice in a batch.
      for (let i = 0; i < n; i++) b.add(item(random() < 0.1 ? 0 : i));
      const batch = b.flush()!;
      let results = [...batch.records].map((r) => ({
        referenceId: r.referenceId,
        isSuccessful: true,
        errors: [] as { field: string; message: string }[],
      }));
      const twist = random();
      if (twist < 0.15) results.reverse();
      else if (twist < 0.3) results = results.slice(1);
      else if (twist < 0.45)
        results[Math.floor(random() * n)] = {
          referenceId: results[0]!.referenceId,
          isSuccessful: false,
          errors: [{ field: '', message: 'REFUSED' }],
        };
      else if (twist < 0.55) results.push({ referenceId: '', isSuccessful: false, errors: [{ field: '', message: 'PAYLOAD_TOO_LARGE' }] });
      const refused = matchResults(batch, results).filter((o) => o.state !== 'staged');
      const answer = new BatchAnswer(batch);
      // Now and then an answer read halfway, then read again whole (a retried upload).
      if (random() < 0.2) results.slice(0, Math.ceil(results.length / 2)).forEach(answer.take);
      results.forEach(answer.take);
      expect(answer.refused()).toEqual(refused);
      expect(answer.results).toBe(results.length);
      if (answer.held === 0 && answer.results === batch.records.length) {
        fast++;
        expect(refused).toEqual([]);
      }
    }
    // The plain answer, in order and all staged, keeps nothing.
    expect(fast).toBeGreaterThan(150);
  });

  it('reads a JSON Lines body back for the values of refused records', () => {
    const b = new Batcher({ maxRecords: 5, maxBytes: 1 << 20, format: 'jsonl' });
    const one = prepareRecord(
      {
        legacyKey: 'A',
        referenceId: refOf(1),
        record: { referenceId: refOf(1), type: 'person', addresses: [{ postalCode: '12' }] } as PartialRecord,
        provenance: { source: 's', file: 'f', line: 1, byteOffset: 0, rowHash: 'r' },
      },
      'jsonl',
    );
    b.add(one);
    const outcomes = matchResults(
      b.flush()!,
      [{ referenceId: refOf(1), isSuccessful: false, errors: [{ field: 'addresses.0.postalCode', message: 'INVALID_FIELD_VALUE' }] }],
      'jsonl',
    );
    expect(outcomes).toEqual([
      {
        legacyKey: 'A',
        state: 'failed',
        errors: [
          {
            stage: 'staging',
            field: 'addresses.0.postalCode',
            code: 'INVALID_FIELD_VALUE',
            message: 'staging refused addresses.0.postalCode: INVALID_FIELD_VALUE',
            value: '12',
          },
        ],
      },
    ]);
  });
});
