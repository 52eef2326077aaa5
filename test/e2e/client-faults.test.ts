/**
 * The client against the embedded service with fault injection on (PUT /_admin/faults): streams
 * cut in the middle of a record and resumed without loss or duplicates, a token that expires
 * while a slow consumer reads a long stream, 429/503 storms survived within the retry budget,
 * uploads whose connection is reset, and a POST that is never repeated.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, ClientError, type ClientLogger } from '../../src/client/index.js';
import { encodeFrame } from '../../src/codec/index.js';
import { startTestService, DEMO, type TestService } from '../support/service.js';

let svc: TestService;

/** Switches the service's fault rules (loopback admin endpoint); null clears them. */
async function faults(url: string, spec: string | null, seed = 7): Promise<void> {
  const res = await fetch(`${url}/_admin/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ faults: spec, seed }),
  });
  if (res.status !== 200) throw new Error(`fault rules refused: ${res.status} ${await res.text()}`);
}

/** A logger that counts the client's retries and resumes. */
function countingLogger() {
  const lines: Array<{ msg: string | undefined; obj: Record<string, unknown> }> = [];
  const log = (obj: object, msg?: string) => void lines.push({ msg, obj: obj as Record<string, unknown> });
  const logger: ClientLogger = { debug: log, info: log, warn: log };
  return { logger, count: (msg: string) => lines.filter((l) => l.msg === msg).length, lines };
}

const clientOf = (url: string, extra: Partial<Parameters<typeof createClient>[0]> = {}) =>
  createClient({
    baseUrl: url,
    clientId: DEMO.clientId,
    clientSecret: DEMO.secret,
    brokerKey: DEMO.broker,
    labelReferenceId: DEMO.label,
    retry: { baseDelayMs: 10, maxDelayMs: 200 },
    ...extra,
  });

const ref = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** Records without initials: each one is refused and leaves a WARN log entry. */
const refusedBatch = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) =>
    encodeFrame('json-seq', { referenceId: ref(from + i), type: 'person', surname: `Cut${from + i}` }),
  ).join('');
const validBatch = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) =>
    encodeFrame('jsonl', { referenceId: ref(from + i), type: 'person', initials: 'A.', surname: `Ok${from + i}` }),
  ).join('');

async function collect<T>(it: AsyncIterable<T>, each?: (v: T) => Promise<void>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) {
    out.push(v);
    if (each) await each(v);
  }
  return out;
}

let migrationId: string;
let cleanSeqs: number[];

beforeAll(async () => {
  svc = await startTestService();
  const c = clientOf(svc.url);
  const m = await c.migrations.create(['Counterparties']);
  migrationId = m.referenceId;
  await c.migrations.stageCounterparties(migrationId, refusedBatch(1, 300), { format: 'json-seq' });
  cleanSeqs = (await collect(c.migrations.logs(migrationId))).map((e) => e.sequenceNumber!);
  await c.close();
});
afterEach(() => faults(svc.url, null));
afterAll(() => svc.dispose());

describe('streams under fault injection', () => {
  it('has enough log entries to cut (one per refused record)', () => {
    expect(cleanSeqs.length).toBeGreaterThan(300);
    expect(new Set(cleanSeqs).size).toBe(cleanSeqs.length);
  });

  for (const format of ['jsonl', 'json-seq'] as const) {
    it(`resumes a ${format} log stream cut mid-record in every response, without loss or duplicates`, async () => {
      await faults(svc.url, 'GET /migration-assistance/migrations/*/logs/stream:cut=1:after=6000');
      const { logger, count } = countingLogger();
      const c = clientOf(svc.url, { logger });
      const resumes: Array<number | undefined> = [];
      const got = await collect(c.migrations.logs(migrationId, {}, { format, onResume: (i) => resumes.push(i.continueFrom) }));
      await c.close();
      expect(got.map((e) => e.sequenceNumber)).toEqual(cleanSeqs);
      // Every response was cut, so every resume started right after the last record received.
      expect(resumes.length).toBeGreaterThan(5);
      expect(count('stream cut; resuming')).toBe(resumes.length);
      for (const from of resumes) expect(cleanSeqs).toContain(from);
    });
  }

  it('resumes a counterparty stream cut mid-record, in both formats, to the same counterparties', async () => {
    // Its own service: live counterparties come from an import, which ends that migration.
    const own = await startTestService();
    const c = clientOf(own.url);
    try {
      const m = await c.migrations.create(['Counterparties']);
      await c.migrations.stageCounterparties(m.referenceId, validBatch(5000, 120), { format: 'jsonl' });
      await c.jobs.waitFor(await c.jobs.validateStaging(m.referenceId), { deadlineMs: 30_000 });
      await c.jobs.waitFor(await c.jobs.import(m.referenceId), { deadlineMs: 30_000 });
      const clean = await collect(c.counterparties.stream());
      expect(clean.length).toBeGreaterThanOrEqual(120);

      await faults(own.url, 'GET /counterparty-management/counterparties/stream:cut=1:after=5000');
      for (const format of ['jsonl', 'json-seq'] as const) {
        let resumes = 0;
        const got = await collect(c.counterparties.stream({ format, onResume: () => void resumes++ }));
        expect(got).toEqual(clean);
        expect(resumes).toBeGreaterThan(3);
      }
    } finally {
      await c.close();
      await own.dispose();
    }
  });

  it('resumes a stream cut at random places (p=0.5) to the same entries', async () => {
    await faults(svc.url, 'GET /migration-assistance/migrations/*/logs/stream:cut=0.5', 3);
    const c = clientOf(svc.url);
    const got = await collect(c.migrations.logs(migrationId, { LogLevels: ['WARN'] }, { format: 'json-seq' }));
    await c.close();
    const warn = await (async () => {
      await faults(svc.url, null);
      const plain = clientOf(svc.url);
      const all = await collect(plain.migrations.logs(migrationId, { LogLevels: ['WARN'] }));
      await plain.close();
      return all;
    })();
    expect(got).toEqual(warn);
  });

  it('fetches a new token when the old one expired while a slow consumer read a cut stream', async () => {
    const short = await startTestService({ tokenTtlSeconds: 1 });
    try {
      const setup = clientOf(short.url);
      const m = await setup.migrations.create(['Counterparties']);
      await setup.migrations.stageCounterparties(m.referenceId, refusedBatch(1, 40), { format: 'json-seq' });
      const clean = (await collect(setup.migrations.logs(m.referenceId))).map((e) => e.sequenceNumber);
      await setup.close();

      await faults(short.url, 'GET /migration-assistance/migrations/*/logs/stream:cut=1:after=3000');
      const c = clientOf(short.url);
      const before = c.tokenFetches;
      // ~10 records per response, 150 ms per record: every resume comes after the token expired.
      const got = await collect(c.migrations.logs(m.referenceId), () => new Promise((r) => setTimeout(r, 150)));
      expect(got.map((e) => e.sequenceNumber)).toEqual(clean);
      expect(c.tokenFetches - before).toBeGreaterThanOrEqual(2);
      await c.close();
    } finally {
      await short.dispose();
    }
  });
});

describe('request retries under fault injection', () => {
  it('survives a 503/429 storm on reads within the retry budget', async () => {
    await faults(svc.url, 'GET /migration-assistance/*:status=503:p=0.4;GET /migration-assistance/*:status=429:retry-after=0:p=0.3');
    const { logger, lines } = countingLogger();
    const c = clientOf(svc.url, { logger, retry: { retries: 12, baseDelayMs: 5, maxDelayMs: 50 } });
    for (let i = 0; i < 20; i++) expect((await c.migrations.get(migrationId)).referenceId).toBe(migrationId);
    await c.close();
    const retried = lines.filter((l) => l.msg === 'retrying request').map((l) => l.obj.status);
    expect(retried).toContain(503);
    expect(retried).toContain(429);
  });

  it('gives up when the storm outlasts the budget, with the status and attempts', async () => {
    await faults(svc.url, 'GET /migration-assistance/*:status=503');
    const c = clientOf(svc.url, { retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 5 } });
    const err = await c.migrations.get(migrationId).then(
      () => undefined,
      (e: unknown) => e as ClientError,
    );
    await c.close();
    expect(err).toBeInstanceOf(ClientError);
    expect([err!.code, err!.status, err!.attempts]).toEqual(['INJECTED_FAULT', 503, 3]);
    expect(err!.message).toBe(
      `injected fault: rule \`GET /migration-assistance/*:status=503\` answered 503 (fault injection is on; see docs/fault-injection.md) (503 on GET /migration-assistance/migrations/${migrationId}) (gave up after 3 attempts)`,
    );
  });

  it('re-sends a staging batch whose connection was reset, and every record gets its result', async () => {
    await faults(svc.url, 'PUT /counterparty-management/migrations/*/staging/counterparties:reset=0.6:after=200', 11);
    const { logger, count } = countingLogger();
    const c = clientOf(svc.url, { logger, retry: { retries: 10, baseDelayMs: 5, maxDelayMs: 50 } });
    for (let batch = 0; batch < 4; batch++) {
      const results = await c.migrations.stageCounterparties(migrationId, validBatch(1000 + batch * 20, 20), { format: 'jsonl' });
      expect(results.map((r) => [r.referenceId, r.isSuccessful])).toEqual(
        Array.from({ length: 20 }, (_, i) => [ref(1000 + batch * 20 + i), true]),
      );
    }
    await c.close();
    expect(count('retrying request')).toBeGreaterThan(0);
  });

  it('hands a caller that takes results one by one every result again from the first when a reset batch is re-sent', async () => {
    await faults(svc.url, 'PUT /counterparty-management/migrations/*/staging/counterparties:reset=0.6:after=200', 13);
    const { logger, count } = countingLogger();
    const c = clientOf(svc.url, { logger, retry: { retries: 10, baseDelayMs: 5, maxDelayMs: 50 } });
    for (let batch = 0; batch < 4; batch++) {
      let taken: [string, boolean][] = [];
      const seq = validBatch(2000 + batch * 20, 20)
        .split('\n')
        .filter(Boolean)
        .map((line) => `\x1e${line}\n`)
        .join('');
      const returned = await c.migrations.stageCounterparties(migrationId, seq, {
        format: 'json-seq',
        onResult: (r, i) => {
          if (i === 0) taken = [];
          expect(i).toBe(taken.length);
          taken.push([r.referenceId, r.isSuccessful]);
        },
      });
      expect(returned).toEqual([]);
      expect(taken).toEqual(Array.from({ length: 20 }, (_, i) => [ref(2000 + batch * 20 + i), true]));
    }
    await c.close();
    expect(count('retrying request')).toBeGreaterThan(0);
  });

  it('never repeats a POST that met a 503: the process is requested once', async () => {
    await faults(svc.url, 'POST /process-orchestration/processes:status=503');
    const { logger, count } = countingLogger();
    const c = clientOf(svc.url, { logger });
    const [def] = await c.processes.definitions({ codes: ['CleanOrder'] });
    const err = await c.processes.create({ processDefinitionReferenceId: def!.referenceId }).then(
      () => undefined,
      (e: unknown) => e as ClientError,
    );
    await c.close();
    expect([err?.code, err?.status, err?.attempts]).toEqual(['INJECTED_FAULT', 503, 1]);
    expect(count('retrying request')).toBe(0);
  });

  it('retries a POST refused with 429 (not processed), then creates once', async () => {
    await faults(svc.url, 'POST /process-orchestration/processes:status=429:retry-after=0:p=0.5', 5);
    const c = clientOf(svc.url, { retry: { retries: 20, baseDelayMs: 1, maxDelayMs: 5 } });
    const [def] = await c.processes.definitions({ codes: ['CleanOrder'] });
    const created = await c.processes.create({ processDefinitionReferenceId: def!.referenceId });
    await faults(svc.url, null);
    expect(await c.processes.get(created.referenceId)).toMatchObject({ referenceId: created.referenceId });
    await c.close();
  });
});
