/**
 * `reconcile`: the report of one platform migration from the ledger and the platform's own
 * numbers, written as Markdown, HTML and JSON, with the corrections files of the refused rows.
 * It starts no job: the counts and import numbers are those the ledger recorded from finished
 * jobs (`migrate` runs them first); the migration object is read live when a client is given.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Ledger, RecordRow, RowStory, RunRow } from '../ledger/index.js';
import type { PipelineDefinition } from '../pipeline/definition/load-pipeline.js';
import { loadPipeline } from '../pipeline/definition/load-pipeline.js';
import type { MigrationRecord } from '../client/index.js';
import { writeCorrections, type CorrectionSource, type CorrectionsFile } from './corrections.js';
import { gatherLedgerFacts, pipelinesOf } from './ledger-facts.js';
import { renderHtml } from './render-html.js';
import { renderJson, renderMarkdown } from './render-markdown.js';
import { buildReport, parseTolerance, type ReconciliationReport, type Tolerance } from './report-model.js';
import { cellDelimiter, formatOf, readRowAt, rowFormatOf } from '../pipeline/source/index.js';
import { cellText, correctionsFormatOf, sourceColumns } from '../pipeline/checks/corrections.js';
import { Redactor, columnClassifier, migrationKey, type ValuesMode } from '../privacy/index.js';
import { cutText } from '../contract/cut.js';
import type { VerificationReport } from './verify/verification-model.js';

/** Default folder of reports: one subfolder per run. */
export const REPORTS_DIR = join('.stagecoach', 'reports');

export interface ReconcileOptions {
  ledger: Ledger;
  migrationId: string;
  /** Reads the migration object for the platform's counters; without it they are left out. */
  client?: { migrations: { get(id: string, opts?: { signal?: AbortSignal }): Promise<MigrationRecord> } };
  /** `3` or `0.5%` (default 0). */
  tolerance?: string | number | Tolerance;
  /** Folder of report.{md,html,json} and the corrections files (default ./.stagecoach/reports/run-<id>). */
  outDir?: string;
  /** Pipelines to report on (default: those whose runs attached to the migration). */
  pipelines?: string[];
  /** Loaded definitions of those pipelines (for corrections and row excerpts); loaded from the run's pipeline file when absent. */
  definitions?: PipelineDefinition[];
  signal?: AbortSignal;
  now?: () => Date;
  /**
   * How the report shows values of personal fields (default: the pipeline's `privacy.reportValues`,
   * else masked). `revealed` is for a local working copy; the report says in its head which it is.
   */
  values?: ValuesMode;
  /** What `verify` found (verify/index.ts), shown as the report's Verification section. */
  verification?: VerificationReport;
}

export interface ReconcileResult {
  report: ReconciliationReport;
  dir: string;
  files: { markdown: string; html: string; json: string };
  corrections: CorrectionsFile[];
}

/** Resolves a provenance path: relative to the working folder (as runs record it), else to the pipeline's folder. */
export function sourcePath(file: string, def: PipelineDefinition | undefined): string {
  if (isAbsolute(file)) return file;
  const here = resolve(file);
  if (existsSync(here) || !def) return here;
  return resolve(def.dir, file);
}

export async function loadDefinitions(ledger: Ledger, pipelines: string[]): Promise<PipelineDefinition[]> {
  const defs: PipelineDefinition[] = [];
  for (const name of pipelines) {
    const run = [...ledger.runs(name)].pop();
    if (!run) continue;
    try {
      defs.push(await loadPipeline(run.pipelineFile));
    } catch {
      // the pipeline file moved or changed: the report still stands, without excerpts and corrections
    }
  }
  return defs;
}

/** The legacy row of an example, on one line, cut to a readable length, its values shown as the redactor says. */
async function excerpt(rec: RecordRow, defs: PipelineDefinition[], redactor: Redactor): Promise<string | undefined> {
  const def = defs.find((d) => d.name === rec.pipeline);
  const source = def?.sources.find((s) => s.name === rec.provenance.source);
  if (!def || !source) return undefined;
  try {
    const path = sourcePath(rec.provenance.file, def);
    const row = await readRowAt(path, rec.provenance.byteOffset, (await correctionsFormatOf(path)) ?? source);
    const spec = source.mappingFile.spec;
    // Each value cut first: masking a 10 MB field (a million line breaks) split it into a million pieces.
    const values = Object.fromEntries(Object.entries(row.values).map(([c, v]) => [c, typeof v === 'string' ? cutText(v, 1000) : v]));
    const shown = redactor.row(values, columnClassifier(spec), spec.key.column);
    // Formats whose records share one header show as a line of cells; the others as the object.
    const text =
      formatOf(source.format).corrections === 'csv'
        ? row.columns.map((c) => cellText(shown[c])).join(cellDelimiter(source))
        : JSON.stringify(shown);
    // Cut before flattening: a 10 MB field full of line breaks made the replace take 100 MB.
    const flat = text.slice(0, 1000).replace(/\s*\r?\n\s*/g, ' ');
    return flat.length > 240 ? `${flat.slice(0, 239)}…` : flat;
  } catch {
    return undefined;
  }
}

/** How many row stories a report lists (the JSON report and `total` say how many there are). */
const STORIES_LISTED = 500;

/** The row stories of the pipelines, their legacy keys shown as the report shows keys. */
function storiesOf(ledger: Ledger, pipelines: readonly string[], redactor: Redactor): { total: number; stories: RowStory[] } {
  let total = 0;
  const stories: RowStory[] = [];
  for (const p of pipelines) {
    const found = ledger.stories.of(p, STORIES_LISTED - stories.length);
    total += found.total;
    const shown = (key: string) => redactor.legacyKey(key);
    stories.push(
      ...found.stories.map((s) => ({
        ...s,
        legacyKey: shown(s.legacyKey),
        steps: s.steps.map((st) => (st.formerKey !== undefined ? { ...st, formerKey: shown(st.formerKey) } : st)),
      })),
    );
  }
  return { total, stories };
}

/** The report's redactor: `values` given, else the pipelines' setting (the most careful of them), else masked. */
export function reportRedactor(
  options: Pick<ReconcileOptions, 'values'>,
  defs: PipelineDefinition[],
  ledgerFile: string,
  migrationId: string,
): Redactor {
  const order: ValuesMode[] = ['masked', 'hashed', 'revealed'];
  const configured = defs.map((d) => d.privacy.reportValues).sort((a, b) => order.indexOf(a) - order.indexOf(b))[0];
  const mode = options.values ?? configured ?? 'masked';
  return new Redactor({
    mode,
    ...(mode === 'hashed' ? { key: migrationKey(ledgerFile, migrationId) } : {}),
    keyIsPersonal: defs.some((d) => d.privacy.legacyKeyIsPersonal),
  });
}

/**
 * Builds the reconciliation report of a migration and writes it (Markdown, HTML, JSON) with the
 * corrections files of the refused rows.
 * @example
 *   const { report, files } = await reconcile({ ledger, migrationId, client, tolerance: '0.5%' });
 *   if (!report.balanced) process.exitCode = 1;
 */
/**
 * Per pipeline, its latest run of the export (not of corrections files) into the migration, when
 * that run failed reading the export or found a file cut short: the report cannot say every row
 * is accounted for, and says why, until a run reads the export to the end.
 */
function readFailuresOf(runs: readonly RunRow[]): string[] {
  const latest = new Map<string, RunRow>();
  for (const r of runs) {
    const report = r.report as { corrections?: unknown } | null;
    if (r.status === 'running' || report?.corrections !== undefined) continue;
    latest.set(r.pipeline, r);
  }
  const out: string[] = [];
  for (const r of latest.values()) {
    const report = r.report as { error?: { code: string; message: string }; readFailures?: string[] } | null;
    const why =
      report?.error?.code === 'SOURCE_READ_FAILED'
        ? report.error.message
        : (report?.readFailures?.length ?? 0) > 0
          ? report!.readFailures!.join('; ')
          : undefined;
    if (why !== undefined)
      out.push(
        `run ${r.id} of ${r.pipeline} failed reading its export: ${why}. Its rows are not all accounted for: run ${r.pipeline} again once the export is complete`,
      );
  }
  return out;
}

export async function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  const { ledger, migrationId } = options;
  const tolerance = typeof options.tolerance === 'object' ? options.tolerance : parseTolerance(options.tolerance);
  const pipelines = options.pipelines ?? pipelinesOf(ledger, migrationId);
  const facts = gatherLedgerFacts(ledger, migrationId, pipelines);
  const defs = options.definitions ?? (await loadDefinitions(ledger, pipelines));
  const redactor = reportRedactor(options, defs, ledger.file, migrationId);
  for (const [example, rec] of facts.exampleRecords) {
    const text = await excerpt(rec, defs, redactor);
    if (text !== undefined) example.excerpt = text;
    const error = rec.errors.find((e) => e.field === example.field && e.message === example.message);
    example.message = redactor.message(example.message, example.field, error?.value, error?.code);
  }

  let migration: MigrationRecord | undefined;
  if (options.client) migration = await options.client.migrations.get(migrationId, { signal: options.signal });

  const runs = ledger.runs().filter((r) => r.migrationId === migrationId && pipelines.includes(r.pipeline));
  const lastRun = runs[runs.length - 1];
  const runLabel = lastRun ? `run-${lastRun.id}` : `migration-${migrationId}`;
  const report = buildReport({
    run: {
      id: lastRun ? String(lastRun.id) : migrationId,
      pipeline: pipelines.join(', ') || '(no pipeline)',
      migrationId,
      ...(runs[0] ? { startedAt: runs[0].startedAt } : {}),
    },
    generatedAt: (options.now?.() ?? new Date()).toISOString(),
    groups: facts.groups,
    jobs: facts.jobs,
    platform: {
      ...facts.platform,
      ...(migration
        ? {
            migration: migration.components.map((c) => ({
              component: c.component,
              numberOfStagedEntities: c.numberOfStagedEntities,
              numberOfImportedEntities: c.numberOfImportedEntities,
            })),
          }
        : {}),
    },
    errorCodes: facts.errorCodes,
    tolerance,
    sourceFiles: ledger.tallies.latest(runs.map((r) => r.id)),
    rowStories: storiesOf(ledger, pipelines, redactor),
    readFailures: readFailuresOf(runs),
  });
  report.privacy = { values: redactor.mode, note: redactor.describe() };
  if (options.verification) report.verification = options.verification;

  const dir = options.outDir ?? join(REPORTS_DIR, runLabel);
  await mkdir(dir, { recursive: true });
  const files = { markdown: join(dir, 'report.md'), html: join(dir, 'report.html'), json: join(dir, 'report.json') };
  await writeFile(files.markdown, renderMarkdown(report));
  await writeFile(files.html, renderHtml(report));
  await writeFile(files.json, renderJson(report));

  const corrections: CorrectionsFile[] = [];
  for (const def of defs) {
    const sources: CorrectionSource[] = [];
    for (const s of def.sources) {
      const columns = await sourceColumns(def, s);
      sources.push({
        name: s.name,
        ...rowFormatOf(s),
        ...(columns ? { columns: [...columns] } : {}),
      });
    }
    const written = await writeCorrections(ledger.refused({ pipeline: def.name }), sources, dir, process.cwd());
    // They hold the refused rows' personal data: the ledger keeps where, for status and purge.
    for (const c of written)
      if (!c.unreadable)
        ledger.writtenFiles.record({ path: resolve(c.file), kind: 'corrections', pipeline: def.name, migrationId, rows: c.rows });
    corrections.push(...written);
  }
  if (redactor.mode === 'revealed')
    for (const f of Object.values(files))
      ledger.writtenFiles.record({ path: resolve(f), kind: 'report', pipeline: pipelines.join(', '), migrationId, rows: 0 });
  return { report, dir, files, corrections };
}
