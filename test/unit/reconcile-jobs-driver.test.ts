import { describe, expect, it } from 'vitest';
import { driveJob, type JobKind, type JobRow, type JobStore, type JobsApi } from '../../src/reconcile/jobs-driver.js';
import type { JobResult } from '../../src/contract/migration.js';

const MIGRATION = '11111111-1111-4111-8111-111111111111';

function memoryStore(): JobStore & { rows: JobRow[] } {
  const rows: JobRow[] = [];
  return {
    rows,
    latest: (m, k) => [...rows].reverse().find((r) => r.migrationId === m && r.kind === k),
    started: (migrationId, kind, jobId) => void rows.push({ migrationId, kind, jobId, state: 'running', startedAt: 'now' }),
    finished: (jobId, state, result) => {
      const row = rows.find((r) => r.jobId === jobId)!;
      row.state = state;
      row.result = result;
    },
    list: (m) => rows.filter((r) => r.migrationId === m),
  };
}

function validation(jobId: string, isValid = true): JobResult {
  return { referenceId: jobId, jobType: 'ValidateStaging', isValid, errors: [] };
}

/** A fake service side: counts the jobs it starts, and can fail the wait like a crash does. */
function fakeApi(options: { failWait?: boolean } = {}) {
  const started: Array<{ kind: JobKind; jobId: string }> = [];
  const waited: string[] = [];
  let n = 0;
  const start = (kind: JobKind) => async () => {
    const jobId = `00000000-0000-4000-8000-00000000000${++n}`;
    started.push({ kind, jobId });
    return jobId;
  };
  const api: JobsApi = {
    validateStaging: start('validate-staging'),
    import: start('import'),
    counts: start('counts'),
    async waitFor(jobId) {
      waited.push(jobId);
      if (options.failWait) throw new Error('connection reset');
      return validation(jobId);
    },
  };
  return { api, started, waited };
}

describe('jobs driver', () => {
  it('records the job id before polling, so a wait that dies leaves a running job in the ledger', async () => {
    const store = memoryStore();
    const crashing = fakeApi({ failWait: true });
    await expect(driveJob(crashing.api, store, MIGRATION, 'validate-staging')).rejects.toThrow('connection reset');
    expect(store.rows).toEqual([
      { migrationId: MIGRATION, kind: 'validate-staging', jobId: crashing.started[0]!.jobId, state: 'running', startedAt: 'now' },
    ]);
  });

  it('resumes by polling the same job instead of starting a second one', async () => {
    const store = memoryStore();
    store.started(MIGRATION, 'validate-staging', 'aaaaaaaa-0000-4000-8000-000000000001');
    const api = fakeApi();
    const out = await driveJob(api.api, store, MIGRATION, 'validate-staging', { whenDone: 'again' });
    expect(out).toEqual({
      jobId: 'aaaaaaaa-0000-4000-8000-000000000001',
      result: validation('aaaaaaaa-0000-4000-8000-000000000001'),
      resumed: true,
    });
    expect(api.started).toEqual([]);
    expect(api.waited).toEqual(['aaaaaaaa-0000-4000-8000-000000000001']);
    expect(store.rows[0]!.state).toBe('done');
  });

  it('reuses a finished job or starts a new one, as asked', async () => {
    const store = memoryStore();
    const api = fakeApi();
    const first = await driveJob(api.api, store, MIGRATION, 'counts');
    const reused = await driveJob(api.api, store, MIGRATION, 'counts');
    expect(reused).toEqual({ ...first, resumed: true });
    const again = await driveJob(api.api, store, MIGRATION, 'counts', { whenDone: 'again' });
    expect(again.jobId).not.toBe(first.jobId);
    expect(api.started.map((s) => s.kind)).toEqual(['counts', 'counts']);
  });

  it('does not start a job once interrupted', async () => {
    const store = memoryStore();
    const api = fakeApi();
    const controller = new AbortController();
    controller.abort();
    await expect(driveJob(api.api, store, MIGRATION, 'import', { signal: controller.signal })).rejects.toThrow(
      'Interrupted before starting the import job',
    );
    expect(api.started).toEqual([]);
  });
});
