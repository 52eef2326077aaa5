import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagecoachClient } from '../../src/client/index.js';
import type { PlanImpact } from '../../src/pipeline/read-pipeline.js';
import { runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoClient, generateSamples, runPipelineCli, stagedLog, type Samples } from '../support/pipeline-run.js';

// `plan --ledger` after a change of mapping: it says how many staged records the change alters
// (and how many rows it now lets through), and the next `run` sends exactly those.

describe('plan against the ledger of an earlier run', () => {
  let service: TestService;
  let client: StagecoachClient;
  let samples: Samples;
  let migrationId: string;
  const persons = () => join(samples.dir, 'mappings', 'crm-persons.yaml');

  beforeAll(async () => {
    service = await startTestService();
    client = demoClient(service.url);
    samples = await generateSamples({ persons: 120, organisations: 20, everyDefectOnce: true, batchRecords: 50, inFlight: 2 });
    const first = await runPipelineCli(samples, service.url);
    expect(first.code).toBe(0);
    migrationId = first.report!.migrationId!;
  });
  afterAll(async () => {
    await client?.close();
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  const plan = async () => {
    const res = await runCli(['plan', 'pipeline.yaml', '--ledger', '--json'], { cwd: samples.dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    return JSON.parse(res.stdout) as { mapped: number; impact: PlanImpact };
  };

  it('says nothing would be sent when nothing changed', async () => {
    const s = await plan();
    expect(s.impact).toMatchObject({ migrationId, changed: 0, new: 0, again: 0, nowRefused: 0, toSend: 0, unchanged: s.mapped });
    expect(s.impact.ledger).toBe('.stagecoach/ledger.db');
  });

  it('counts the records a changed mapping rule changes, shows them, and run sends exactly those', async () => {
    const before = readFileSync(persons(), 'utf8');
    // One rule changes (prefixes upper case instead of lower), and the unknown nationality code of one
    // refused row becomes known.
    const changed = before
      .replace(
        'surnamePrefix: { column: tussenvoegsel, transforms: [collapse-spaces, lower] }',
        'surnamePrefix: { column: tussenvoegsel, transforms: [collapse-spaces, upper] }',
      )
      .replace(/^ {2}land:\n/m, '  land:\n    MARSIAANS: NL\n');
    expect(changed).not.toBe(before);
    writeFileSync(persons(), changed);
    const klanten = readFileSync(join(samples.dir, 'klanten.csv'), 'utf8').split('\n');
    const header = klanten[0]!.split(';');
    const prefix = header.indexOf('tussenvoegsel');
    const withPrefix = klanten.slice(1).filter((l) => (l.split(';')[prefix] ?? '').trim() !== '').length;
    expect(withPrefix).toBeGreaterThan(0);

    const s = await plan();
    const i = s.impact;
    expect(i.changed).toBeGreaterThan(0);
    expect(i.changed).toBeLessThanOrEqual(withPrefix);
    expect(i.new).toBe(0);
    expect(i.again).toBe(1); // the row refused for MARSIAANS
    expect(i.toSend).toBe(i.changed + 1);
    const refusedBefore = i.examples.find((x) => x.kind === 'again')!;
    expect(refusedBefore.before).toMatchObject({
      state: 'rejected',
      contentKept: false,
      reasons: [{ code: 'UNKNOWN_CODE', field: 'nationalities[0]' }],
    });
    expect(refusedBefore.after.record).toMatchObject({ type: 'person', nationalities: ['N*'] });
    expect(i.unchanged + i.changed + i.again).toBe(s.mapped);
    const example = i.examples.find((x) => x.kind === 'changed')!;
    // The ledger keeps no record, but the mappings of the run that sent it: the row is mapped as
    // that run did, and only the changed field differs (masked, both sides).
    expect(example.before).toMatchObject({ state: 'staged', contentKept: false, remapped: { run: 1 } });
    expect(example.before.remapped!.changes).toEqual([
      { field: 'surnamePrefix', before: expect.stringMatching(/^[a-z]\*+/), after: expect.stringMatching(/^[A-Z]\*+/) },
    ]);
    expect(example.after.record).toMatchObject({ type: 'person' });
    // masked, as plan masks personal values
    expect(JSON.stringify(example.after.record)).toContain('*');

    const run = await runPipelineCli(samples, service.url);
    expect(run.code).toBe(0);
    expect(run.report).toMatchObject({ status: 'completed', migrationId, sent: i.toSend, skippedUnchanged: i.unchanged });
    const log = await stagedLog(client, migrationId);
    expect(log.length).toBeGreaterThan(0);

    // After the run, the ledger holds what the mapping makes: nothing left to send.
    const again = await plan();
    expect(again.impact).toMatchObject({ changed: 0, new: 0, again: 0, toSend: 0, unchanged: again.mapped });
  });

  it('prints the comparison at a terminal, with each changed field before and after', async () => {
    // the prefixes back to lower case: the records staged by the run above change again
    writeFileSync(
      persons(),
      readFileSync(persons(), 'utf8').replace(
        'tussenvoegsel, transforms: [collapse-spaces, upper] }',
        'tussenvoegsel, transforms: [collapse-spaces, lower] }',
      ),
    );
    const res = await runCli(['plan', 'pipeline.yaml', '--ledger'], { cwd: samples.dir });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Compared with the ledger .stagecoach/ledger.db (migration ${migrationId})`);
    expect(res.stdout).toMatch(/ {2}changed +\d+ {3}already staged, would be sent again\n/);
    // The records the run above staged (prefixes upper case), mapped as it did and as now: only the
    // prefix differs, masked on both sides.
    expect(res.stdout).toMatch(/ {6}staged; mapped as run 2 did, then as now:\n {6}surnamePrefix: "[A-Z]\*+" → "[a-z]\*+"\n/);
  });
});
