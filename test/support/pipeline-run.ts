/**
 * Test support for end-to-end pipeline runs: generated legacy exports with a pipeline file, the
 * CLI's `run --json` report, and what the service holds (its staged set, and every record it
 * was sent, from its own migration log) read back through the client.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type StagecoachClient } from '../../src/client/index.js';
import type { RunReport } from '../../src/pipeline/runner/index.js';
import { runCli, type CliResult } from './cli.js';
import { DEMO, tempDir } from './service.js';

export interface Samples {
  dir: string;
  pipeline: string;
}

/**
 * Writes `persons` generated persons (and `organisations`) with their pipeline into a new
 * folder, with the batching and window given.
 */
export async function generateSamples(opts: {
  persons: number;
  organisations?: number;
  everyDefectOnce?: boolean;
  batchRecords: number;
  inFlight: number;
  workers?: number;
}): Promise<Samples> {
  const dir = tempDir('stagecoach-pipeline-');
  const args = ['generate-samples', '--persons', String(opts.persons), '--organisations', String(opts.organisations ?? 0), '--out', dir];
  if (opts.everyDefectOnce) args.push('--every-defect-once');
  const res = await runCli(args);
  if (res.code !== 0) throw new Error(`generate-samples failed: ${res.stderr}`);
  const pipeline = join(dir, 'pipeline.yaml');
  const workers = opts.workers !== undefined ? `, workers: ${opts.workers}` : '';
  appendFileSync(
    pipeline,
    `batching: { records: ${opts.batchRecords}, bytes: 4194304 }\nconcurrency: { inFlight: ${opts.inFlight}${workers} }\n`,
  );
  return { dir, pipeline };
}

/** `stagecoach run <pipeline> --json` in the samples folder; the report when it printed one. */
export async function runPipelineCli(
  samples: Samples,
  baseUrl: string,
  extra: { args?: string[]; env?: Record<string, string> } = {},
): Promise<CliResult & { report: RunReport | undefined }> {
  // Generated samples plant defects in more than 5% of the rows: that share is expected.
  const res = await runCli(['run', 'pipeline.yaml', '--json', '--expect-refused', '100%', '--base-url', baseUrl, ...(extra.args ?? [])], {
    cwd: samples.dir,
    ...(extra.env ? { env: extra.env } : {}),
  });
  let report: RunReport | undefined;
  try {
    report = JSON.parse(res.stdout) as RunReport;
  } catch {
    report = undefined;
  }
  return { ...res, report };
}

export function demoClient(baseUrl: string): StagecoachClient {
  return createClient({
    baseUrl,
    clientId: DEMO.clientId,
    clientSecret: DEMO.secret,
    brokerKey: DEMO.broker,
    labelReferenceId: DEMO.label,
    retry: { baseDelayMs: 10, maxDelayMs: 100 },
  });
}

/** The referenceIds staged in the migration, sorted (read page by page). */
export async function stagedSet(client: StagecoachClient, migrationId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await client.migrations.listStaged(migrationId, { offset, limit: 100 });
    for (const item of page.items) ids.push(String(item.referenceId));
    if (offset + 100 >= page.total) break;
  }
  return ids.sort();
}

/** Every referenceId the service staged, once per time it was sent, from the migration's own log. */
export async function stagedLog(client: StagecoachClient, migrationId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const entry of client.migrations.logs(migrationId, { Actions: ['StagedEntities'] }))
    ids.push(...(entry.entityReferenceIds ?? []));
  return ids;
}
