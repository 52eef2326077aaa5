/**
 * The two ends of a run in the ledger. Opened: the definition snapshot and hash, the resume
 * stage's first look, the run recorded (runs found dead are recovered and warned about), an
 * empty report. Settled: whatever stopped it, the report's status and counts, the run finished
 * in the ledger with its report, the last progress and the closing log line.
 */
import type { ChildTally } from '../checks/child-tally.js';
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Ledger, RunRow, Scope } from '../../ledger/index.js';
import { type MappingSnapshot, takeMappingSnapshot } from '../definition/mapping-snapshot.js';
import type { CorrectionsSummary, PipelineDefinition } from '../read-pipeline.js';
import type { SourceTally } from '../source/index.js';
import type { RunPipelineOptions } from './ports.js';
import type { ProgressTracker } from './progress.js';
import { Resume } from './resume.js';
import { newRunReport, settleRunReport, type RunReport } from './run-report.js';

/** A run recorded in the ledger, and what every later stage of it takes. */
export interface OpenRun {
  def: PipelineDefinition;
  ledger: Ledger;
  options: RunPipelineOptions;
  runId: number;
  scope: Scope;
  report: RunReport;
  resume: Resume;
  /** performance.now() when the run started. */
  started: number;
  /** What reading finds besides rows, filled in as it goes and settled into the report. */
  found: {
    /** Each whole file's two-way count (source/tally.ts). */
    tallies: SourceTally[];
    /** What became of each child source's rows (children/child-join.ts). */
    children: ChildTally[];
    /** A corrections run: the files read, the duplicates that came back unedited. */
    corrections: CorrectionsSummary;
  };
}

/**
 * Whether a migration's completed `runs` (oldest first) staged what the pipeline reads now: the
 * same pipeline and mappings, and every source file as the newest run that read them found it.
 * `migrate` resumes a chain whose import is done only then.
 * @example await stagedFromWhatIsReadNow(def, ledger, runs) // false after a row was added to the export
 */
export async function stagedFromWhatIsReadNow(def: PipelineDefinition, ledger: Ledger, runs: readonly RunRow[]): Promise<boolean> {
  const hash = await pipelineHash(def, await takeMappingSnapshot(def));
  // The newest of the migration's runs that read the export (a corrections run read none).
  for (const run of [...runs].reverse()) {
    if (run.pipelineHash !== hash) return false;
    const asFound = await Resume.sourcesAsFound(def, ledger, run.id);
    if (asFound !== undefined) return asFound;
  }
  return true;
}

/** Records the run in the ledger (nothing reaches the platform yet). */
export async function openRun(def: PipelineDefinition, ledger: Ledger, options: RunPipelineOptions): Promise<OpenRun> {
  const started = performance.now();
  const mappings = await takeMappingSnapshot(def);
  const definitionHash = await pipelineHash(def, mappings);
  const resume = await Resume.look(def, ledger, definitionHash, { corrections: options.corrections !== undefined });
  const { run, scope, crashed } = ledger.startRun({
    pipeline: def.name,
    component: def.component,
    pipelineFile: def.file,
    pipelineHash: definitionHash,
    // The keyless rejects stay until the run is attached to its migration and knows it reads
    // everything (startReading): a run refused by the platform before reading reports none afresh.
    readsEverything: false,
  });
  ledger.runMappings.record(run.id, mappings);
  for (const c of crashed)
    options.logger?.warn(
      { run: c.id, pid: c.pid, startedAt: c.startedAt },
      `run ${c.id} of ${def.name} ended without finishing (crashed); its in-flight records are sent again`,
    );
  const report = newRunReport({
    runId: run.id,
    pipeline: def.name,
    pipelineFile: def.file,
    component: def.component,
    ledgerFile: ledger.file,
    recoveredRuns: crashed.map((c) => c.id),
  });
  const found = { tallies: [], children: [], corrections: { files: [], unchangedDuplicates: 0 } };
  return { def, ledger, options, runId: run.id, scope, report, resume, started, found };
}

/** Settles the report from what stopped the run (`failure`: the first one), and finishes the run in the ledger. */
export function settleRun(run: OpenRun, progress: ProgressTracker, failure: unknown, retries: { count: number } | undefined): RunReport {
  const { report, options, found } = run;
  report.retries = retries?.count;
  if (options.corrections) report.corrections = found.corrections;
  settleRunReport(report, {
    ledger: run.ledger,
    failure,
    interrupted: options.signal?.aborted === true || options.stop?.aborted === true,
    durationMs: performance.now() - run.started,
    tallies: found.tallies,
    children: found.children,
    allowTruncated: options.allowTruncated === true,
  });
  run.ledger.finishRun(run.runId, report.status, report);
  progress.finish();
  options.logger?.info(
    {
      run: report.runId,
      status: report.status,
      staged: report.staged,
      skipped: report.skippedUnchanged,
      rejected: report.rejected,
      failed: report.failed,
      durationMs: report.durationMs,
    },
    `run ${report.runId} ${report.status}`,
  );
  return report;
}

/** Hash of the pipeline file, its mapping files and their scripts, to tell runs of changed definitions apart. */
async function pipelineHash(def: PipelineDefinition, mappings: MappingSnapshot): Promise<string> {
  const parts = [def.path, hash('sha256', await readFile(def.path), 'hex')];
  for (const [name, text] of Object.entries(mappings.files).sort(([a], [b]) => a.localeCompare(b)))
    parts.push(name, hash('sha256', text, 'hex'));
  return hash('sha256', parts.join('\n'), 'hex').slice(0, 32);
}
