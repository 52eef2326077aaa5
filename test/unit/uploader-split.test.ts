/**
 * A size limit is a reason to split, not to stop (issue 42): an upload refused 413 is sent again
 * in halves down to one record; a record refused alone is refused with its row named, in the
 * ledger; staging results that name the records' UUIDs in upper case are their results.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, openLedgerWriter, type Ledger, type Scope } from '../../src/ledger/index.js';
import { Batcher, prepareRecord, type Batch, type BatchItem } from '../../src/pipeline/batcher/index.js';
import { Uploader, type StagingSink } from '../../src/pipeline/uploader/index.js';
import { halves } from '../../src/pipeline/uploader/split-batch.js';
import { uploadLedger } from '../../src/pipeline/runner/run-ledger.js';
import { ClientError, parseProblem, responseError } from '../../src/client/errors.js';
import type { StagingResult } from '../../src/contract/migration.js';
import type { StreamFormat } from '../../src/codec/index.js';
import { tempDir } from '../support/service.js';

const MIGRATION = '11111111-1111-4111-8111-111111111111';
const refOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
function item(n: number, format: StreamFormat, extra: Record<string, unknown> = {}): BatchItem {
  return prepareRecord(
    {
      legacyKey: `K${n}`,
      referenceId: refOf(n),
      record: { referenceId: refOf(n), type: 'person', initials: 'A.', surname: `S${n}`, ...extra } as { type?: unknown },
      provenance: { source: 'persons', file: 'persons.csv', line: n + 1, byteOffset: n * 40, rowHash: `r${n}` },
    },
    format,
  );
}
function batchOf(format: StreamFormat, items: BatchItem[]): Batch {
  const batcher = new Batcher({ maxRecords: 1000, maxBytes: 1 << 24, format });
  for (const i of items) batcher.add(i);
  return batcher.flush()!;
}
const NGINX_413 =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
/** The client's error for a proxy's 413 page, as the transport makes it. */
const tooLarge = () =>
  responseError({
    method: 'PUT',
    path: '/counterparty-management/migrations/m/staging/counterparties',
    status: 413,
    group: 'counterparty-management',
    problem: parseProblem(NGINX_413, 413),
  });

/** A platform behind a proxy that refuses bodies over `limit` bytes; results name the ids in upper case. */
function limitedSink(limit: number, format: StreamFormat, sizes: number[]): StagingSink {
  const stage = async (body: Uint8Array | string) => {
    const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    sizes.push(bytes);
    if (bytes > limit) throw tooLarge();
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
    const frames = format === 'json-seq' ? text.split('\x1e').slice(1) : text.split('\n').filter(Boolean);
    return frames.map(
      (t): StagingResult => ({
        referenceId: (JSON.parse(t) as { referenceId: string }).referenceId.toUpperCase(),
        isSuccessful: true,
        errors: [],
      }),
    );
  };
  return { stage, stageBytes: stage };
}

describe('uploads refused for their size', () => {
  let dir: string;
  let ledger: Ledger;
  let scope: Scope;
  let runId: number;
  let mig: number;
  beforeEach(() => {
    dir = tempDir('stagecoach-split-');
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

  it('cuts a batch into two halves on frame boundaries, json-seq and JSON Lines alike', () => {
    for (const format of ['json-seq', 'jsonl'] as const) {
      const batch = batchOf(
        format,
        [1, 2, 3, 4, 5].map((n) => item(n, format)),
      );
      const [a, b] = halves(batch, format);
      expect([a.records.length, b.records.length]).toEqual([3, 2]);
      expect(Buffer.concat([a.payload, b.payload]).equals(batch.payload)).toBe(true);
      expect([...b.records].map((r) => r.legacyKey)).toEqual(['K4', 'K5']);
      expect(b.body.startsWith(format === 'json-seq' ? '\x1e{"referenceId":"' : '{"referenceId":"')).toBe(true);
    }
  });

  it.each(['json-seq', 'jsonl'] as const)(
    '%s: halves the batch until each part passes, refuses the one record too large alone with its row named, stages the rest',
    async (format) => {
      // 40 small records and one with a long name: the limit lets 8 small ones through at once, never the big one
      const items = Array.from({ length: 40 }, (_, i) => item(i + 1, format));
      items.splice(17, 0, item(99, format, { surname: 'X'.repeat(3000) }));
      const small = items[0]!.bytes;
      const limit = small * 8 + 10;
      const sizes: number[] = [];
      const uploader = new Uploader({
        sink: limitedSink(limit, format, sizes),
        ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
        inFlight: 1,
        format,
      });
      await uploader.submit(batchOf(format, items));
      const report = await uploader.drain();
      expect(report).toMatchObject({
        batches: 1,
        batchesFailed: 0,
        staged: 40,
        failed: 1,
        failedByCode: { RECORD_TOO_LARGE: 1 },
        unconfirmed: 0,
      });
      expect(report.splits).toBeGreaterThan(3);
      // every upload that got through was within the limit; the refused ones were halved
      expect(sizes.filter((s) => s <= limit).reduce((a, s) => a + s, 0)).toBe(items.reduce((a, i) => a + i.bytes, 0) - items[17]!.bytes);
      const rows = [...ledger.records()];
      expect(rows.filter((r) => r.state === 'staged')).toHaveLength(40);
      const refused = rows.find((r) => r.legacyKey === 'K99')!;
      expect(refused.state).toBe('failed');
      expect(refused.errors).toEqual([
        {
          stage: 'staging',
          field: '',
          code: 'RECORD_TOO_LARGE',
          message: expect.stringMatching(
            /^persons\.csv:100: record K99 is \d+ bytes as staged and the platform refused it alone for its size \(413 Request Entity Too Large\); every other record of its batch was sent in smaller uploads;/,
          ),
        },
      ]);
      expect(refused.errors![0]!.message).not.toMatch(/<|\n/);
    },
  );

  it('sends again what the platform left unanswered when its size limit ended the answer (a last result PAYLOAD_TOO_LARGE), halving down to one record', async () => {
    // The embedded service's own way: results for what it committed, then a record-less PAYLOAD_TOO_LARGE.
    const format = 'json-seq';
    const items = Array.from({ length: 12 }, (_, i) => item(i + 1, format));
    items.splice(5, 0, item(99, format, { surname: 'X'.repeat(3000) }));
    const limit = items[0]!.bytes * 4 + 10;
    const sent: number[] = [];
    const stage = async (body: Uint8Array | string) => {
      const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
      const frames = text.split('\x1e').slice(1);
      sent.push(frames.length);
      const out: StagingResult[] = [];
      let bytes = 0;
      for (const f of frames) {
        bytes += Buffer.byteLength(f) + 1;
        if (bytes > limit) return [...out, { referenceId: '', isSuccessful: false, errors: [{ field: '', message: 'PAYLOAD_TOO_LARGE' }] }];
        out.push({ referenceId: (JSON.parse(f) as { referenceId: string }).referenceId, isSuccessful: true, errors: [] });
      }
      return out;
    };
    const uploader = new Uploader({
      sink: { stage, stageBytes: stage },
      ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
      inFlight: 1,
    });
    await uploader.submit(batchOf(format, items));
    const report = await uploader.drain();
    expect(report).toMatchObject({ staged: 12, failed: 1, failedByCode: { RECORD_TOO_LARGE: 1 }, unconfirmed: 0 });
    expect(sent[0]).toBe(13);
    const rows = [...ledger.records()];
    expect(rows.filter((r) => r.state === 'staged')).toHaveLength(12);
    expect(rows.find((r) => r.legacyKey === 'K99')).toMatchObject({
      state: 'failed',
      errors: [{ code: 'RECORD_TOO_LARGE', message: expect.stringMatching(/^persons\.csv:100: record K99 /) }],
    });
  });

  it('stops on any other refusal as before: a 400 is no reason to split', async () => {
    const sink: StagingSink = {
      stage: async () => {
        throw new ClientError('REQUEST_REFUSED', 'bad request (400 on PUT /s)', { method: 'PUT', path: '/s', status: 400 });
      },
    };
    const uploader = new Uploader({
      sink,
      ledger: uploadLedger(openLedgerWriter(ledger, { thread: 'main' }), runId, scope, mig),
      inFlight: 1,
    });
    await expect(uploader.submit(batchOf('json-seq', [item(1, 'json-seq'), item(2, 'json-seq')]))).rejects.toThrow('400 on PUT /s');
    const report = await uploader.drain();
    expect(report).toMatchObject({ batchesFailed: 1, unconfirmed: 2, splits: 0 });
  });
});
