import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedReferenceId } from '../../src/service/counterparties/seed.js';
import { call, getToken, startTestService, type TestService } from '../support/service.js';
import { createMigration, id, organisation, person, runJob, stage, stagingPath } from '../cases/migration/records.js';

let svc: TestService;
let token: string;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
});
afterAll(async () => svc?.dispose());

const MIGRATIONS = '/migration-assistance/migrations';
const ada = seedReferenceId('demo-broker', 'person/ada'); // a live (seeded) counterparty

async function migration(m: string) {
  return (await call(svc.url, token, 'GET', `${MIGRATIONS}/${m}`)).body;
}

describe('validate-staging, import and counts', () => {
  it('reports each kind of validation error, passes after fixes, imports and counts', async () => {
    const m = await createMigration(svc.url, token, ['Counterparties', 'Collaterals']);
    const twin = { initials: 'J.', surname: 'Tweeling', dateOfBirth: '1990-05-05' };
    const results = await stage(svc.url, token, m, [
      person(1, {
        nationalities: ['NL', 'XX'],
        relations: [
          { to: id(2), type: 'isSignificantOtherOf' },
          { to: ada, type: 'isChildOf' },
        ],
      }),
      person(2, { relations: [{ to: id(999), type: 'isSignificantOtherOf' }] }),
      organisation(3, { countryOfIncorporation: undefined, telephoneNumbers: [{ number: '+31201234567' }] }),
      person(4, twin),
      person(5, { ...twin, income: { amount: 100, currency: 'EUR', frequency: 'Fortnightly' } }),
    ]);
    expect(results.every((r) => r.isSuccessful)).toBe(true);

    const refusedImport = await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/jobs/import`);
    expect(refusedImport.status).toBe(409);
    expect(refusedImport.body).toMatchObject({
      code: 'MIGRATION_STATE_CONFLICT',
      detail: `cannot import: migration ${m} has stagingStatus InProgress for Counterparties, Pending for Collaterals; run PUT …/jobs/validate-staging, fix the errors it reports and run it again until it passes (stagingStatus Completed)`,
    });

    const jobId = (await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/jobs/validate-staging`)).body as string;
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    const failed = await runJob(svc.url, token, m, 'validate-staging');
    expect(failed).toEqual({
      referenceId: expect.any(String),
      jobType: 'ValidateStaging',
      isValid: false,
      errors: [
        { component: 'Counterparties', referenceId: id(1), field: 'nationalities.1', message: 'UNKNOWN_CODE' },
        { component: 'Counterparties', referenceId: id(2), field: 'relations.0.to', message: 'RELATION_TARGET_MISSING' },
        { component: 'Counterparties', referenceId: id(3), field: 'telephoneNumbers.0.type', message: 'MISSING_REQUIRED_FIELD' },
        { component: 'Counterparties', referenceId: id(3), field: 'countryOfIncorporation', message: 'MISSING_REQUIRED_FIELD' },
        { component: 'Counterparties', referenceId: id(5), field: 'income.frequency', message: 'UNKNOWN_CODE' },
        // the twin staged first (4) is kept; the later one is refused, naming it and the identity
        {
          component: 'Counterparties',
          referenceId: id(5),
          field: 'surname,initials,dateOfBirth',
          message: 'DUPLICATE_IDENTITY',
          duplicateOf: id(4),
          identity: 'Tweeling J. 1990-05-05',
        },
      ],
    });
    expect((await migration(m)).stagingStatus).toBe('InProgress');

    // Fix: correct records 1, 2, 3 and 5; remove the twin.
    await stage(svc.url, token, m, [
      person(1, {
        nationalities: ['NL', 'BE'],
        relations: [
          { to: id(2), type: 'isSignificantOtherOf' },
          { to: ada, type: 'isChildOf' },
        ],
      }),
      person(2, { relations: [{ to: id(1), type: 'isSignificantOtherOf' }] }),
      organisation(3, { telephoneNumbers: [{ type: 'office', number: '+31201234567' }] }),
      person(5, { ...twin, income: { amount: 100, currency: 'EUR', frequency: 'FourWeekly' } }),
    ]);
    expect((await call(svc.url, token, 'DELETE', `${stagingPath(m)}/${id(4)}`)).status).toBe(204);
    const passed = await runJob(svc.url, token, m, 'validate-staging');
    expect(passed).toEqual({ referenceId: expect.any(String), jobType: 'ValidateStaging', isValid: true, errors: [] });
    expect(await migration(m)).toMatchObject({
      stagingStatus: 'Completed',
      importStatus: 'Pending',
      numberOfStagedEntities: 4,
      components: [
        {
          component: 'Counterparties',
          stagingStatus: 'Completed',
          importStatus: 'Pending',
          numberOfStagedEntities: 4,
          numberOfImportedEntities: 0,
        },
        {
          component: 'Collaterals',
          stagingStatus: 'Completed',
          importStatus: 'Pending',
          numberOfStagedEntities: 0,
          numberOfImportedEntities: 0,
        },
      ],
    });

    const refusedCounts = await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/jobs/counts`);
    expect(refusedCounts.status).toBe(409);
    expect(refusedCounts.body.detail).toBe(
      `cannot count: migration ${m} has importStatus Pending; counts are available once the import job has completed`,
    );

    const liveBefore = (await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1')).body.total as number;
    const imported = await runJob(svc.url, token, m, 'import');
    expect(imported).toEqual({
      referenceId: expect.any(String),
      jobType: 'Import',
      status: 'Completed',
      numberOfStagedEntities: 4,
      numberOfImportedEntities: 4,
      errors: [],
    });
    expect(await migration(m)).toEqual({
      referenceId: m,
      stagingStatus: 'Completed',
      importStatus: 'Completed',
      numberOfStagedEntities: 4,
      numberOfImportedEntities: 4,
      activity: 'Completed',
      components: [
        {
          component: 'Counterparties',
          stagingStatus: 'Completed',
          importStatus: 'Completed',
          numberOfStagedEntities: 4,
          numberOfImportedEntities: 4,
        },
        {
          component: 'Collaterals',
          stagingStatus: 'Completed',
          importStatus: 'Completed',
          numberOfStagedEntities: 0,
          numberOfImportedEntities: 0,
        },
      ],
    });
    expect((await call(svc.url, token, 'GET', '/counterparty-management/counterparties?limit=1')).body.total).toBe(liveBefore + 4);

    const counts = await runJob(svc.url, token, m, 'counts');
    expect(counts).toEqual({
      referenceId: expect.any(String),
      jobType: 'Counts',
      counts: [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: [
            ['Counterparty', '4'],
            ['Collateral', '0'],
          ],
          importedRows: [
            ['Counterparty', '4'],
            ['Collateral', '0'],
          ],
        },
        {
          type: 'Counterparty',
          headers: ['Type', 'Count'],
          stagedRows: [
            ['person', '3'],
            ['organisation', '1'],
          ],
          importedRows: [
            ['person', '3'],
            ['organisation', '1'],
          ],
        },
      ],
    });

    // Completed is final: no more staging or jobs, except counts; a new migration may start.
    const staging = await call(svc.url, token, 'PUT', stagingPath(m), { raw: '', headers: { 'content-type': 'application/json-seq' } });
    expect(staging.status).toBe(409);
    expect(staging.body.detail).toBe(
      `cannot stage: migration ${m} is Completed (imported), which is final; register a new migration (POST /migration-assistance/migrations) to continue`,
    );
    expect((await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/jobs/validate-staging`)).body.code).toBe('MIGRATION_NOT_ACTIVE');
    expect((await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/cancel`)).body.code).toBe('MIGRATION_NOT_ACTIVE');
    expect((await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/jobs/counts`)).status).toBe(200);
    expect((await call(svc.url, token, 'GET', `${MIGRATIONS}/current`)).status).toBe(404);
  });

  it('asks for a new validation when staging changes after one passed', async () => {
    const m = await createMigration(svc.url, token);
    await stage(svc.url, token, m, [person(11)]);
    expect((await runJob(svc.url, token, m, 'validate-staging')).isValid).toBe(true);
    expect((await migration(m)).stagingStatus).toBe('Completed');
    await stage(svc.url, token, m, [person(12)]);
    expect((await migration(m)).stagingStatus).toBe('InProgress');
    expect((await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/jobs/import`)).status).toBe(409);
    await call(svc.url, token, 'PUT', `${MIGRATIONS}/${m}/cancel`);
  });

  it('imports what it can and lists IMPORT_FAILED for a record whose relation target was deleted after validation', async () => {
    const m = await createMigration(svc.url, token);
    await stage(svc.url, token, m, [person(21, { relations: [{ to: id(22), type: 'isParentOf' }] }), person(22), organisation(23)]);
    expect((await runJob(svc.url, token, m, 'validate-staging')).isValid).toBe(true);
    await call(svc.url, token, 'DELETE', `${stagingPath(m)}/${id(22)}`);
    const imported = await runJob(svc.url, token, m, 'import');
    expect(imported).toEqual({
      referenceId: expect.any(String),
      jobType: 'Import',
      status: 'Completed',
      numberOfStagedEntities: 2,
      numberOfImportedEntities: 1,
      errors: [
        {
          component: 'Counterparties',
          referenceId: id(21),
          message: `IMPORT_FAILED: counterparty ${id(21)}: relation isParentOf targets ${id(22)}, which is in neither staging nor live data`,
        },
      ],
    });
    const counts = await runJob(svc.url, token, m, 'counts');
    expect(counts.counts[1]).toEqual({
      type: 'Counterparty',
      headers: ['Type', 'Count'],
      stagedRows: [
        ['person', '1'],
        ['organisation', '1'],
      ],
      importedRows: [
        ['person', '0'],
        ['organisation', '1'],
      ],
    });
  });

  it('answers an unknown job with 404', async () => {
    const res = await call(svc.url, token, 'GET', '/migration-assistance/jobs/00000000-0000-4000-8000-00000000dead');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });
});
