/**
 * A migration's end, through the real CLI and service: after `migrate` completes a migration,
 * `plan --ledger` predicts exactly what `run` then does (a new migration, every mapped record
 * sent), even right after a mapping change; and after that new migration is canceled, `status`
 * says what the platform holds: the records imported in the first migration stay live (the
 * platform's own counterparty list agrees), not "the platform no longer holds them".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagecoachClient } from '../../src/client/index.js';
import type { PlanImpact } from '../../src/pipeline/read-pipeline.js';
import { runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoClient, generateSamples, runPipelineCli, stagedSet, type Samples } from '../support/pipeline-run.js';

describe('after a migration ends', () => {
  let service: TestService;
  let client: StagecoachClient;
  let samples: Samples;
  let first: string;
  let imported: number;
  let second: string;
  let secondSent: number;
  /** Counterparties the service holds before the migration (its demo tenant's own). */
  let liveBefore: number;

  beforeAll(async () => {
    service = await startTestService();
    client = demoClient(service.url);
    liveBefore = (await client.counterparties.list({ limit: 1 })).total;
    samples = await generateSamples({ persons: 150, organisations: 20, everyDefectOnce: true, batchRecords: 40, inFlight: 2 });
    const migrate = await runCli(['migrate', 'pipeline.yaml', '--expect-refused', '100%', '--base-url', service.url], { cwd: samples.dir });
    // the planted defects are refused before upload, everything else is imported
    expect(migrate.code, migrate.stderr).toBe(0);
    const current = await runCli(['status', '--json'], { cwd: samples.dir });
    const runs = (JSON.parse(current.stdout) as { runs: { migrationId: string }[] }).runs;
    first = runs.at(-1)!.migrationId;
    const m = await client.migrations.get(first);
    expect(m.activity).toBe('Completed');
    imported = m.numberOfImportedEntities;
    expect(imported).toBeGreaterThan(100);
  });
  afterAll(async () => {
    await client?.close();
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  const plan = async (json = true) => {
    const res = await runCli(['plan', 'pipeline.yaml', '--ledger', ...(json ? ['--json'] : [])], { cwd: samples.dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    return res;
  };
  const impactOf = (stdout: string) => JSON.parse(stdout) as { mapped: number; impact: PlanImpact };
  const livePlatform = async () => (await client.counterparties.list({ limit: 1 })).total;

  it('plan --ledger after a completed migration: a new migration, every mapped record sent; run does exactly that', async () => {
    // a mapping change, so that a comparison with the completed migration would count some records changed, the rest unchanged
    const persons = join(samples.dir, 'mappings', 'crm-persons.yaml');
    const before = readFileSync(persons, 'utf8');
    // (and the unknown nationality of one refused row becomes known: one record the platform never held)
    const changed = before
      .replace(
        'surnamePrefix: { column: tussenvoegsel, transforms: [collapse-spaces, lower] }',
        'surnamePrefix: { column: tussenvoegsel, transforms: [collapse-spaces, upper] }',
      )
      .replace(/^ {2}land:\n/m, '  land:\n    MARSIAANS: NL\n');
    expect(changed).not.toBe(before);
    writeFileSync(persons, changed);

    const s = impactOf((await plan()).stdout);
    expect(s.impact.newMigration).toEqual({ after: { migrationId: first, how: 'completed', at: expect.any(String) } });
    expect(s.impact.migrationId).toBeUndefined();
    expect(s.impact).toMatchObject({ changed: 0, unchanged: 0, nowRefused: 0, toSend: s.mapped });
    expect(s.impact.again).toBe(imported + 1);
    expect(s.mapped).toBe(imported + 1);
    expect(s.impact.examples).toEqual([]);

    const text = (await plan(false)).stdout;
    expect(text).toContain(
      `\nCompared with the ledger .stagecoach/ledger.db\n  migration ${first} was completed (imported) ${s.impact.newMigration!.after.at} and takes no more records:\n  a run registers a new migration and sends every mapped record into it\n`,
    );
    expect(text).toMatch(new RegExp(` {2}again +${imported + 1} {3}in the ledger, sent again into the new migration\\n`));
    expect(text).toContain(`  a run would send ${s.mapped} records`);

    const run = await runPipelineCli(samples, service.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.report).toMatchObject({ status: 'completed', migrationCreated: true, sent: s.impact.toSend, skippedUnchanged: 0 });
    second = run.report!.migrationId!;
    secondSent = run.report!.sent;
    expect(second).not.toBe(first);
    expect((await stagedSet(client, second)).length).toBe(s.impact.toSend);

    // staged into the new, still active migration: compared with it again, nothing left to send
    const after = impactOf((await plan()).stdout);
    expect(after.impact.newMigration).toBeUndefined();
    expect(after.impact).toMatchObject({ migrationId: second, toSend: 0, unchanged: after.mapped });
  });

  it('status after the new migration is canceled: the records imported before stay live, as the platform says', async () => {
    expect(second).toBeDefined();
    expect(await livePlatform()).toBe(liveBefore + imported);
    const cancel = await runCli(['cancel', second, '--base-url', service.url], { cwd: samples.dir });
    expect(cancel.code, cancel.stderr).toBe(0);
    // the platform still holds every counterparty the first migration imported
    expect(await livePlatform()).toBe(liveBefore + imported);

    const status = await runCli(['status'], { cwd: samples.dir });
    expect(status.code, status.stderr).toBe(0);
    const row = (state: string) => new RegExp(`^${state} +(\\d+)$`, 'm').exec(status.stdout)?.[1];
    expect(row('imported')).toBe(String(imported));
    expect(row('staged')).toBe('0');
    expect(row('in a canceled migration')).toBe(String(secondSent - imported));
    const canceledAt = /canceled (\S+):/.exec(status.stdout)?.[1];
    expect(status.stdout).toContain(
      `${secondSent} records were sent to migration ${second}, canceled ${canceledAt}: the platform no longer holds ${
        secondSent - imported
      } of them; ${imported} stay imported from migration ${first}, live on the platform; the next run stages them into a new migration.\n`,
    );
    const json = JSON.parse((await runCli(['status', '--json'], { cwd: samples.dir })).stdout) as {
      canceled: { migrationId: string; state: string; records: number; importedIn?: string }[];
    };
    const liveRows = json.canceled.filter((c) => c.importedIn === first);
    expect(liveRows.reduce((n, c) => n + c.records, 0)).toBe(imported);
    expect(json.canceled.every((c) => c.migrationId === second)).toBe(true);

    // after a cancel, too, plan --ledger says a new migration takes everything, and run does that
    const s = impactOf((await plan()).stdout);
    expect(s.impact.newMigration).toEqual({ after: { migrationId: second, how: 'canceled', at: canceledAt } });
    expect(s.impact.toSend).toBe(s.mapped);
    const run = await runPipelineCli(samples, service.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.report).toMatchObject({ migrationCreated: true, sent: s.impact.toSend, skippedUnchanged: 0 });
  });
});
