/**
 * Nothing touches the platform before the configuration is known good, through the real CLI and
 * service: a mapping reading a column the export's header lacks, or a mapping script that does
 * not load, ends `run` and `migrate` with exit 2 and the mapping line that reads the column,
 * and the platform has no migration (the tenant's current one stays none); wrong credentials
 * end with exit 3 before any migration is created either.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagecoachClient } from '../../src/client/index.js';
import { runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoClient, generateSamples, runPipelineCli, type Samples } from '../support/pipeline-run.js';

describe('a configuration error is found before the platform is touched', () => {
  let service: TestService;
  let client: StagecoachClient;
  let samples: Samples;
  let mapping: string;
  let original: string;
  const header = () => readFileSync(join(samples.dir, 'klanten.csv'), 'latin1').split(/\r?\n/)[0]!.split(';');
  const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

  beforeAll(async () => {
    service = await startTestService();
    client = demoClient(service.url);
    samples = await generateSamples({ persons: 60, organisations: 5, batchRecords: 20, inFlight: 2 });
    mapping = join(samples.dir, 'mappings', 'crm-persons.yaml');
    original = readFileSync(mapping, 'utf8');
  });
  beforeEach(() => writeFileSync(mapping, original));
  afterAll(async () => {
    await client?.close();
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  it('a column the header lacks: exit 2 at the mapping line that reads it, naming the export; no migration, no ledger', async () => {
    const edited = original.replace('column: geboortedatum,', 'column: geboortedatum_iso,');
    expect(edited).not.toBe(original);
    writeFileSync(mapping, edited);
    const line = lineOf(edited, 'geboortedatum_iso');
    const col = edited.split('\n')[line - 1]!.indexOf('geboortedatum_iso') + 1;
    const expected = `stagecoach: mappings/crm-persons.yaml:${line}:${col}: record.dateOfBirth reads column "geboortedatum_iso", which the header of klanten.csv (klanten.csv:1) lacks; expected one of ${header()
      .map((c) => JSON.stringify(c))
      .join(', ')}\n`;

    for (const command of ['run', 'migrate']) {
      const res = await runCli([command, 'pipeline.yaml', '--base-url', service.url], { cwd: samples.dir });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toBe(expected);
      expect(await client.migrations.current()).toBeUndefined();
      // nor did the run write its start into a ledger
      if (command === 'run') expect(existsSync(join(samples.dir, '.stagecoach', 'ledger.db'))).toBe(false);
    }
    // plan, which sends nothing, says the same
    const plan = await runCli(['plan', 'pipeline.yaml'], { cwd: samples.dir });
    expect(plan.code).toBe(2);
    expect(plan.stderr).toBe(expected);
  });

  it('a mapping script without a default function: exit 2, no migration', async () => {
    writeFileSync(join(samples.dir, 'mappings', 'rules', 'no-default.mjs'), 'export const rule = (row, record) => record;\n');
    const edited = original.replace('script: ./rules/split-surname-prefix.mjs', 'script: ./rules/no-default.mjs');
    expect(edited).not.toBe(original);
    writeFileSync(mapping, edited);
    const res = await runCli(['run', 'pipeline.yaml', '--base-url', service.url], { cwd: samples.dir });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toBe(
      'stagecoach: mappings/crm-persons.yaml: script ./rules/no-default.mjs must export a default function (row, record, helpers) => record\n',
    );
    expect(await client.migrations.current()).toBeUndefined();
  });

  it('wrong credentials: exit 3, no migration', async () => {
    const res = await runCli(['run', 'pipeline.yaml', '--base-url', service.url, '--client-secret', 'not-the-secret'], {
      cwd: samples.dir,
    });
    expect(res.code, res.stderr).toBe(3);
    expect(await client.migrations.current()).toBeUndefined();
  });

  it('with the configuration good again, the run creates the migration and stages', async () => {
    const run = await runPipelineCli(samples, service.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.report).toMatchObject({ status: 'completed', migrationCreated: true });
    expect((await client.migrations.current())?.referenceId).toBe(run.report!.migrationId);
  });
});
