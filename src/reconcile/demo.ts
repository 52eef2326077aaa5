/**
 * `stagecoach demo`: the whole chain on the sample data with no setting at all. It starts the
 * embedded lending service in this process (port 0, data in ./.stagecoach/demo/service), stages
 * every sample pipeline (pipelines/*.yaml of the package) into one migration, validates —
 * records refused by validation are deleted from staging and validation runs again, so the
 * import can proceed with the rest (they stay `invalid` in the ledger and in the corrections
 * file) — imports, counts, and writes the report to ./.stagecoach/reports/demo.
 *
 * Every demo starts afresh: the service's data folder and the demo ledger are deleted first, so
 * the numbers are the same each time and nothing of a previous demo can be mistaken for this one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '../client/index.js';
import { StagecoachError } from '../contract/errors.js';
import { openLedger } from '../ledger/index.js';
import { runPipeline, type RunReport } from '../pipeline/runner/index.js';
import { DEMO_IDENTITIES, startService } from '../service/index.js';
import { runChain, type ChainEvent, type ChainOutcome } from './chain.js';
import { reconcile, REPORTS_DIR, type ReconcileResult } from './reconcile.js';
import { verificationHeadline, verify } from './verify/index.js';

export const DEMO_DIR = join('.stagecoach', 'demo');

export interface DemoOptions {
  /** Working folder of the demo's data (default ./.stagecoach/demo). */
  dir?: string;
  /** Folder of the report (default ./.stagecoach/reports/demo). */
  outDir?: string;
  /** Pipeline files to run (default: every pipelines/*.yaml of the package). */
  pipelines?: string[];
  signal?: AbortSignal;
  /** One line per step, for a person watching. */
  onStep?: (text: string) => void;
  onEvent?: (event: ChainEvent) => void;
}

export interface DemoResult {
  serviceUrl: string;
  migrationId: string;
  runs: RunReport[];
  chain: ChainOutcome;
  reconcile: ReconcileResult;
}

/** The package's root folder: where its package.json named stagecoach is, above this module. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'stagecoach') return dir;
      } catch {
        // not ours; keep looking
      }
    }
    const up = dirname(dir);
    if (up === dir)
      throw new StagecoachError('CONFIG_INVALID', 'Cannot find the stagecoach package folder (its package.json) above the installed code');
    dir = up;
  }
}

/**
 * The sample counterparty pipelines the package ships, in name order. The applications pipeline
 * (`component: Applications`) is lodged by `stagecoach applications`, not yet by the demo's chain.
 */
export function samplePipelines(): string[] {
  const dir = join(packageRoot(), 'pipelines');
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .filter((f) => !/^component:\s*Applications\b/m.test(readFileSync(join(dir, f), 'utf8')))
    .sort()
    .map((f) => join(dir, f));
}

/**
 * Runs the demo: embedded service, sample pipelines, validate, import, counts, report.
 * @example
 *   const demo = await runDemo({ onStep: (t) => console.log(t) });
 *   console.log(demo.reconcile.files.html);
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const step = options.onStep ?? (() => undefined);
  const dir = resolve(options.dir ?? DEMO_DIR);
  const serviceDir = join(dir, 'service');
  const ledgerFile = join(dir, 'ledger.db');
  await rm(serviceDir, { recursive: true, force: true });
  await rm(ledgerFile, { force: true });
  await rm(`${ledgerFile}-wal`, { force: true });
  await rm(`${ledgerFile}-shm`, { force: true });

  const service = await startService({ port: 0, dataDir: serviceDir, logLevel: 'silent' });
  step(`embedded lending service on ${service.url} (data in ${serviceDir})`);
  const who = DEMO_IDENTITIES.clients[0]!;
  const client = createClient({
    baseUrl: service.url,
    clientId: who.clientId,
    clientSecret: who.secret,
    brokerKey: who.brokerKey,
    labelReferenceId: who.labels[0]!,
  });
  try {
    const runs: RunReport[] = [];
    for (const file of options.pipelines ?? samplePipelines()) {
      const run = await runPipeline({ pipelineFile: file, client, ledgerFile, ...(options.signal ? { signal: options.signal } : {}) });
      runs.push(run);
      if (run.status !== 'completed') {
        throw new StagecoachError(
          run.error?.code ?? 'ABORTED',
          `Staging ${run.pipelineFile} ${run.status}${run.error ? `: ${run.error.message}` : ''}`,
        );
      }
      step(
        `staged ${run.pipelineFile}: ${run.rowsRead} rows read, ${run.staged} staged, ${run.rejected} rejected before upload, ${run.failed} refused by staging`,
      );
    }
    const migrationId = runs[runs.length - 1]!.migrationId!;
    const ledger = openLedger(ledgerFile);
    try {
      const chain = await runChain(client, ledger, migrationId, {
        dropInvalid: true,
        ...(options.signal ? { signal: options.signal } : {}),
        onEvent: (e) => {
          if (e.type === 'validated') step(`validation: ${e.isValid ? 'valid' : `${e.invalid} record(s) refused`}`);
          if (e.type === 'removed') step(`removed ${e.count} invalid record(s) from staging; validating again`);
          if (e.type === 'imported') step(`import: ${e.imported} imported${e.failed ? `, ${e.failed} failed` : ''}`);
          options.onEvent?.(e);
        },
      });
      if (chain.status !== 'imported') throw new StagecoachError('JOB_FAILED', 'The demo could not get the sample data through validation');
      const verification = await verify({ ledger, migrationId, client, ...(options.signal ? { signal: options.signal } : {}) });
      step(verificationHeadline(verification));
      const result = await reconcile({
        verification,
        ledger,
        migrationId,
        client,
        outDir: options.outDir ?? join(REPORTS_DIR, 'demo'),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return { serviceUrl: service.url, migrationId, runs, chain, reconcile: result };
    } finally {
      ledger.close();
    }
  } finally {
    await client.close();
    await service.close();
  }
}
