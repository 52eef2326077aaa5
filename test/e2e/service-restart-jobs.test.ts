import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { startService, type RunningService } from '../../src/service/index.js';
import { call, getToken, tempDir } from '../support/service.js';
import { createMigration, id, person, pollJob, stage } from '../cases/migration/records.js';

const dataDir = tempDir('stagecoach-restart-');
let svc: RunningService | undefined;
afterAll(async () => {
  await svc?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Slow jobs (20 records/s, committed every 4 records) so a restart lands in the middle of one. */
const start = () => startService({ dataDir, port: 0, logLevel: 'silent', jobRecordsPerSecond: 20 });
const RECORDS = 60;

async function startJob(url: string, token: string, m: string, job: string): Promise<string> {
  const res = await call(url, token, 'PUT', `/migration-assistance/migrations/${m}/jobs/${job}`);
  expect(res.status).toBe(200);
  return res.body as string;
}

describe('migration jobs across a service restart', () => {
  it('resumes validation and import from where they stopped, without losing or repeating work', async () => {
    svc = await start();
    let token = await getToken(svc.url);
    const m = await createMigration(svc.url, token);
    const records = Array.from({ length: RECORDS }, (_, i) => person(i + 1));
    records[9] = person(10, { nationalities: ['XX'] });
    records[49] = person(50, { sex: 'robot' });
    await stage(svc.url, token, m, records);

    // validate-staging: running (202), asked again returns the same job, then the service stops.
    const validation = await startJob(svc.url, token, m, 'validate-staging');
    const running = await call(svc.url, token, 'GET', `/migration-assistance/jobs/${validation}`);
    expect(running.status).toBe(202);
    expect(running.headers.get('retry-after')).toBe('1');
    expect(running.body).toEqual({ referenceId: validation, componentsCompleted: [] });
    expect(await startJob(svc.url, token, m, 'validate-staging')).toBe(validation);
    await new Promise((r) => setTimeout(r, 600));
    await svc.close();

    svc = await start();
    token = await getToken(svc.url);
    expect((await call(svc.url, token, 'GET', `/migration-assistance/jobs/${validation}`)).status).toBe(202);
    const failed = await pollJob(svc.url, token, validation);
    expect(failed).toEqual({
      referenceId: validation,
      jobType: 'ValidateStaging',
      isValid: false,
      errors: [
        { component: 'Counterparties', referenceId: id(10), field: 'nationalities.0', message: 'UNKNOWN_CODE' },
        { component: 'Counterparties', referenceId: id(50), field: 'sex', message: 'UNKNOWN_CODE' },
      ],
    });

    await stage(svc.url, token, m, [person(10), person(50)]);
    const passed = await pollJob(svc.url, token, await startJob(svc.url, token, m, 'validate-staging'));
    expect(passed.isValid).toBe(true);

    // import: stopped in the middle, resumed after the restart.
    const liveBefore = (await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1')).body.total as number;
    const importJob = await startJob(svc.url, token, m, 'import');
    await new Promise((r) => setTimeout(r, 600));
    await svc.close();

    svc = await start();
    token = await getToken(svc.url);
    expect((await call(svc.url, token, 'GET', `/migration-assistance/jobs/${importJob}`)).status).toBe(202);
    expect((await call(svc.url, token, 'GET', `/migration-assistance/migrations/${m}`)).body).toMatchObject({
      importStatus: 'InProgress',
      activity: 'Active',
    });
    const imported = await pollJob(svc.url, token, importJob);
    expect(imported).toEqual({
      referenceId: importJob,
      jobType: 'Import',
      status: 'Completed',
      numberOfStagedEntities: RECORDS,
      numberOfImportedEntities: RECORDS,
      errors: [],
    });
    expect((await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1')).body.total).toBe(liveBefore + RECORDS);

    // The log names every imported record exactly once.
    const res = await fetch(
      `${svc.url}/migration-assistance/migrations/${m}/logs/stream?Actions=ImportedEntities&LogLevels=INFO&Components=Counterparties`,
      {
        headers: { authorization: `Bearer ${token}`, accept: 'application/jsonl' },
      },
    );
    const entries = (await res.text())
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { entityReferenceIds: string[] });
    const ids = entries.flatMap((e) => e.entityReferenceIds).sort();
    expect(ids).toEqual(records.map((r) => r.referenceId as string).sort());
  });

  it('stops a running job with an error result when its migration is canceled', async () => {
    await svc?.close();
    svc = await start();
    const token = await getToken(svc.url);
    const m = await createMigration(svc.url, token);
    await stage(
      svc.url,
      token,
      m,
      Array.from({ length: RECORDS }, (_, i) => person(i + 101)),
    );
    const job = await startJob(svc.url, token, m, 'validate-staging');
    expect((await call(svc.url, token, 'PUT', `/migration-assistance/migrations/${m}/cancel`)).status).toBe(200);
    expect(await pollJob(svc.url, token, job)).toEqual({
      referenceId: job,
      jobType: 'ValidateStaging',
      isValid: false,
      errors: [
        {
          component: 'Counterparties',
          referenceId: '',
          field: '',
          message: `MIGRATION_NOT_ACTIVE: migration ${m} became Canceled while the job ran; the job stopped`,
        },
      ],
    });
  });
});
