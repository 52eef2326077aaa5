/**
 * A run attached and started: the migration it stages into recorded in the ledger and the report,
 * where it starts reading (the resume stage's decision), and which export rows corrections
 * replaced (a run of the export leaves those alone while they are unchanged).
 */
import { originKey } from '../../ledger/index.js';
import type { FrontRow } from '../types.js';
import { attachMigration } from './attach-migration.js';
import type { PipelineClient } from './ports.js';
import type { ResumeReport, ResumeStart } from './resume.js';
import type { OpenRun } from './run-ends.js';

/** What the stages after the start take. */
export interface RunStart {
  migrationId: string;
  /** The migration's number in the ledger. */
  migrationNo: number;
  /** Where a resumed run starts reading; undefined: at the start of every source. */
  start: ResumeStart | undefined;
  /** An export row a corrections file replaced (src/ledger/corrections.ts): counted, neither sent nor refused. */
  keptCorrected: (row: FrontRow) => boolean;
}

/** Attaches the run to its migration and decides where it starts reading. */
export async function attachAndStart(run: OpenRun, client: PipelineClient | undefined): Promise<RunStart> {
  const { def, ledger, options, report } = run;
  // The migration this pipeline's runs went into last (the run itself is not attached yet).
  const before = ledger.lastMigrationOf(run.scope)?.id;
  const migration = await attachMigration(def, client, options.signal, options.logger);
  report.migrationId = migration.referenceId;
  if (before !== undefined && before !== migration.referenceId) {
    // A re-run after a migration completed (or was canceled) sends into another one: it says so,
    // and that the earlier migration keeps what it imported (its report stays as it was).
    report.previousMigrationId = before;
    options.logger?.warn(
      { migration: migration.referenceId, previous: before },
      `${def.name}'s records go into migration ${migration.referenceId}, not ${before}, the migration of its last run: what ${before} imported stays counted for it (stagecoach report --migration ${before})`,
    );
  }
  report.migrationCreated = migration.created;
  ledger.setRunMigration(run.runId, migration.referenceId);
  const migrationNo = ledger.migrationNo(migration.referenceId);
  const start = await startReading(run, migration.referenceId);
  // Read after startReading dropped the keyless rejects.
  const corrected = options.corrections ? undefined : ledger.correctedOrigins(run.scope);
  const keptCorrected = (row: FrontRow) =>
    corrected !== undefined && corrected.size > 0 && corrected.has(originKey(row.row.provenance.file, row.row.provenance.hash));
  return { migrationId: migration.referenceId, migrationNo, start, keptCorrected };
}

/**
 * Where this run starts reading (the resume stage's decision), recorded in the ledger and the
 * report. A run that reads every row (not a resumed one, not one over corrections files) clears
 * the keyless rejects, which it reports afresh as it reads; a resumed run keeps those of the rows
 * it does not read again.
 */
async function startReading(run: OpenRun, migrationId: string): Promise<ResumeStart | undefined> {
  const { resume, ledger, options } = run;
  const { report: resumed, start } = await resume
    .decide(ledger, migrationId)
    .catch((err: unknown): { report: ResumeReport; start?: undefined } => ({
      report: { mode: 'full', reason: `cannot resume: ${err instanceof Error ? err.message : String(err)}` },
    }));
  if (options.corrections === undefined && !start) ledger.dropKeylessRejects(run.scope);
  ledger.setRunSources(run.runId, resume.record(start));
  run.report.resume = resumed;
  options.logger?.info(
    { resume: resumed },
    resumed.mode === 'resumed' ? `resuming at ${resumed.file}:${resumed.line}: ${resumed.reason}` : `reading everything: ${resumed.reason}`,
  );
  return start;
}
