/**
 * The reconciliation report model: from the ledger's facts (how many records sit in each state,
 * by component, entity type and error code) and the platform's own numbers (migration counters,
 * counts-job tables), build the chain
 *
 *   source rows → mapped → accepted by staging → valid → imported
 *
 * per component and entity type, explain every gap between two steps by reasons (reject codes,
 * staging codes, validation codes, a job that has not run yet), flag what no reason explains as
 * unaccounted, and set the platform's counts against the ledger's. Pure: no I/O, so every rule
 * is tested on plain numbers; the renderers only print what this returns.
 */
import type { VerificationReport } from './verify/verification-model.js';
import { tallyDisagreement, type SourceTally } from '../pipeline/source/tally.js';
import type { RowStory } from '../ledger/index.js';

/** What the ledger knows about one component and entity type (records by their current state). */
export interface GroupFacts {
  component: string;
  entityType: string;
  /**
   * Rows the sources reported reading, when the runner counted them independently of the
   * ledger; a difference with the ledger's record count is unaccounted. Absent: the ledger's
   * record count is the number of source rows.
   */
  sourceRowsRead?: number;
  /** Records mapped but never sent (the run stopped before uploading them). */
  notSent: number;
  /** Records sent whose staging result never came back (crash mid-request). */
  inFlight: number;
  /** Records rejected before upload, by their first reason code. */
  rejected: Record<string, number>;
  /** Records refused by staging, by their first error code. */
  refusedByStaging: Record<string, number>;
  /** Records accepted by staging and not (yet) validated or imported. */
  staged: number;
  /** Records refused by the validation job, by their first error code. */
  invalid: Record<string, number>;
  /** Records imported. */
  imported: number;
  /**
   * Records of the group's source rows held by another migration and not sent into this one (a
   * corrected record whose export row is unchanged, docs/reconciliation.md): counted among the
   * source rows and mapped, and accounted for between mapped and staged. Absent: none.
   */
  inOtherMigrations?: number;
  /** Invalid records that were deleted from the platform's staging area afterwards. */
  removedFromStaging: number;
}

/** Where the jobs stand for the migration; decides whether a gap is "pending" or unaccounted. */
export interface JobFacts {
  validation: 'not-run' | 'running' | 'valid' | 'invalid';
  import: 'not-run' | 'running' | 'done';
  counts: 'not-run' | 'running' | 'done';
}

/** The platform's own numbers. Each is optional: the report uses what it was given. */
export interface PlatformFacts {
  /** Per component, from GET migration. */
  migration?: Array<{ component: string; numberOfStagedEntities: number; numberOfImportedEntities: number }>;
  /** From the counts job: per entity type, and per entity (component) when the job gives totals. */
  counts?: CountsByType;
  /** Errors of the import job, per component (a partial import shows here). */
  importErrors?: Array<{ component: string; message: string }>;
}

/** One erroneous record shown as an example of its code, traced to its legacy row. */
export interface ErrorExample {
  referenceId?: string;
  file: string;
  line: number;
  field: string;
  message: string;
  /** The legacy row as read, cut to a readable length. */
  excerpt?: string;
}

export interface ErrorCodeFacts {
  stage: Stage;
  code: string;
  /** Records whose errors include this code. */
  records: number;
  examples: ErrorExample[];
}

export type Stage = 'source' | 'mapping' | 'staging' | 'validation' | 'import';

export interface ReconcileInput {
  run: { id: string; pipeline: string; migrationId?: string; startedAt?: string };
  generatedAt: string;
  groups: GroupFacts[];
  jobs: JobFacts;
  platform: PlatformFacts;
  errorCodes: ErrorCodeFacts[];
  tolerance: Tolerance;
  /** Each source file's two-way count as the runs kept it (ledger source_tallies); none for older ledgers. */
  sourceFiles?: SourceFileFacts[];
  /** Records refused once and read again since (ledger record_history), the first of them and how many. */
  rowStories?: { total: number; stories: RowStory[] };
  /**
   * A pipeline whose latest read of its export into the migration failed reading it (a file cut
   * or rewritten while read): what that run says. Its rows are not all accounted for until a run
   * reads the export to the end.
   */
  readFailures?: string[];
}

/** A source file counted two ways (src/pipeline/source/tally.ts); `accepted`: read with --allow-truncated. */
export interface SourceFileFacts {
  tally: SourceTally;
  accepted: boolean;
}

/** A source file in the report: its counts and, when they disagree or it was cut off, why. */
export interface SourceFileReport {
  source: string;
  file: string;
  format: string;
  physicalLines: number;
  blankLines: number;
  headerLines: number;
  items?: number;
  rowsRead: number;
  rowErrors: number;
  /** tallyDisagreement in words; absent when the file is accounted for. */
  disagreement?: string;
  /** The disagreement is a cut-off or empty file the run was told to accept (--allow-truncated). */
  accepted?: boolean;
  /** CSV under `csv.quotes: relaxed`: rows read as written although their quotes are malformed, in words. */
  relaxedQuotes?: string;
}

/** How many relaxed-quote rows a report names by line; past these it counts them. */
const RELAXED_NAMED = 20;

/** `3 rows with malformed quotes read as written (csv.quotes: relaxed): lines 2 (naam), 3 (naam), 4 (plaats)` */
export function relaxedQuotesText(t: SourceTally): string | undefined {
  const r = t.relaxedQuotes;
  if (!r || r.count === 0) return undefined;
  const named = r.listed.slice(0, RELAXED_NAMED).map((q) => `${q.line} (${q.column})`);
  const more = r.count - named.length;
  return `${r.count} row${r.count === 1 ? '' : 's'} with malformed quotes read as written (csv.quotes: relaxed): line${named.length === 1 ? '' : 's'} ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

export type Tolerance = { kind: 'absolute'; value: number } | { kind: 'percent'; value: number };

/**
 * Parses `--tolerance`: a count (`3`) or a percentage (`0.5%`).
 * @example parseTolerance('0.5%') // { kind: 'percent', value: 0.5 }
 */
export function parseTolerance(text: string | number | undefined): Tolerance {
  if (text === undefined || text === '') return { kind: 'absolute', value: 0 };
  if (typeof text === 'number') return { kind: 'absolute', value: text };
  const t = text.trim();
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(t);
  if (!m) throw new TypeError(`Invalid tolerance: expected a count such as 3 or a percentage such as 0.5%, got \`${text}\``);
  const value = Number(m[1]);
  if (m[2] === '%') {
    if (value > 100) throw new TypeError(`Invalid tolerance: a percentage is at most 100%, got \`${text}\``);
    return { kind: 'percent', value };
  }
  if (!Number.isInteger(value)) throw new TypeError(`Invalid tolerance: a count is a whole number, got \`${text}\``);
  return { kind: 'absolute', value };
}

/** The number of records a gap may leave unaccounted, given the size it is measured against. */
export function allowedDifference(tolerance: Tolerance, base: number): number {
  return tolerance.kind === 'absolute' ? tolerance.value : Math.floor((Math.abs(base) * tolerance.value) / 100);
}

export function formatTolerance(tolerance: Tolerance): string {
  return tolerance.kind === 'absolute' ? String(tolerance.value) : `${tolerance.value}%`;
}

// ---------------------------------------------------------------------------------------------
// The report

export type StepName = 'sourceRows' | 'mapped' | 'staged' | 'valid' | 'imported';
export const STEP_LABELS: Record<StepName, string> = {
  sourceRows: 'Source rows',
  mapped: 'Mapped',
  staged: 'Accepted by staging',
  valid: 'Valid',
  imported: 'Imported',
};

export interface Explanation {
  stage: Stage;
  /** A reason code (MISSING_REQUIRED_FIELD, UNKNOWN_CODE…) or a pseudo-code for a state (NOT_SENT, AWAITING_IMPORT…). */
  code: string;
  label: string;
  count: number;
  /** false: the reason is shown but does not account for the records (the result is unknown). */
  accounted: boolean;
}

export interface Gap {
  from: StepName;
  to: StepName;
  difference: number;
  explained: Explanation[];
  /** difference − accounted explanations; 0 when the gap is fully explained. */
  unaccounted: number;
  allowed: number;
  ok: boolean;
}

export interface PlatformCheck {
  measure: 'staged' | 'imported';
  /** Where the platform's number came from. */
  source: 'counts job' | 'counts job total' | 'migration';
  ledger: number;
  /** null: the platform did not report this number (unknown, not 0), so it was not checked. */
  platform: number | null;
  difference: number | null;
  allowed: number;
  ok: boolean;
}

export interface GroupReport {
  component: string;
  entityType: string;
  steps: Record<StepName, number>;
  gaps: Gap[];
  /** Staged records the ledger expects on the platform (accepted, minus those deleted from staging). */
  expectedOnPlatform: number;
  removedFromStaging: number;
  /** Records held by another migration, not sent into this one (GroupFacts.inOtherMigrations). */
  inOtherMigrations: number;
  platform: PlatformCheck[];
  balanced: boolean;
}

export interface ComponentReport {
  component: string;
  platform: PlatformCheck[];
  importErrors: Array<{ component: string; message: string }>;
  balanced: boolean;
}

export interface ReconciliationReport {
  schema: 'stagecoach.reconciliation/1';
  run: ReconcileInput['run'];
  generatedAt: string;
  tolerance: string;
  jobs: JobFacts;
  balanced: boolean;
  totals: Record<StepName, number> & { unaccounted: number; removedFromStaging: number; inOtherMigrations: number };
  groups: GroupReport[];
  components: ComponentReport[];
  topErrors: ErrorCodeFacts[];
  /**
   * Every source file with its two-way count. A file whose counts disagree, or that was cut off,
   * is a problem: the report does not balance while any file is not accounted for, except a
   * cut-off or empty file accepted with --allow-truncated (listed, marked accepted).
   */
  sourceFiles: SourceFileReport[];
  /**
   * Each record refused once and read again since (from a corrections file or a fixed export):
   * its refusals, then where it stands now. `total` may exceed the stories listed.
   */
  rowStories: { total: number; stories: RowStory[] };
  /** One line per reason the report does not balance; empty when it does. */
  problems: string[];
  /** Counts tables of the platform that break down nothing the ledger knows: shown, not compared. */
  otherCountTables?: NonNullable<CountsByType['otherTables']>;
  /** How the report shows values of personal fields (set when it is written; see docs/privacy.md). */
  privacy?: { values: 'masked' | 'hashed' | 'revealed'; note: string };
  /** What `verify` found the platform holds, field by field (verify/verification-model.ts), when it ran. */
  verification?: VerificationReport;
}

const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
const byCount = (a: [string, number], b: [string, number]) => b[1] - a[1] || a[0].localeCompare(b[0]);

function explanations(stage: Stage, counts: Record<string, number>): Explanation[] {
  return Object.entries(counts)
    .filter(([, n]) => n !== 0)
    .sort(byCount)
    .map(([code, count]) => ({ stage, code, label: code, count, accounted: true }));
}

/** Local rejects: unreadable rows are a source problem, the rest a mapping or local-check one. */
function localRejects(counts: Record<string, number>): Explanation[] {
  return explanations('mapping', counts).map((e) => (e.code.startsWith('SOURCE_') ? { ...e, stage: 'source' as const } : e));
}

function gap(
  from: StepName,
  to: StepName,
  steps: Record<StepName, number>,
  explained: Explanation[],
  tolerance: Tolerance,
  base: number,
): Gap {
  const difference = steps[from] - steps[to];
  const accounted = explained.filter((e) => e.accounted).reduce((a, e) => a + e.count, 0);
  const unaccounted = difference - accounted;
  const allowed = allowedDifference(tolerance, base);
  return { from, to, difference, explained, unaccounted, allowed, ok: Math.abs(unaccounted) <= allowed };
}

function check(
  measure: PlatformCheck['measure'],
  source: PlatformCheck['source'],
  ledger: number,
  platform: number | null,
  tolerance: Tolerance,
): PlatformCheck {
  const allowed = allowedDifference(tolerance, ledger);
  if (platform === null) return { measure, source, ledger, platform, difference: null, allowed, ok: true };
  const difference = platform - ledger;
  return { measure, source, ledger, platform, difference, allowed, ok: Math.abs(difference) <= allowed };
}

/**
 * Builds the report: the chain per group, its gaps and their reasons, the platform checks and
 * whether it all balances within the tolerance.
 * @example
 *   const report = buildReport(input);
 *   if (!report.balanced) console.error(report.problems.join('\n'));
 */
export function buildReport(input: ReconcileInput): ReconciliationReport {
  const { tolerance, jobs, platform } = input;
  const problems: string[] = [];
  const groups: GroupReport[] = [...input.groups]
    .sort((a, b) => a.component.localeCompare(b.component) || a.entityType.localeCompare(b.entityType))
    .map((g) => {
      const rejected = sum(g.rejected);
      const refused = sum(g.refusedByStaging);
      const invalid = sum(g.invalid);
      const elsewhere = g.inOtherMigrations ?? 0;
      const ledgerRecords = rejected + g.notSent + g.inFlight + refused + g.staged + invalid + g.imported + elsewhere;
      const steps: Record<StepName, number> = {
        sourceRows: g.sourceRowsRead ?? ledgerRecords,
        mapped: ledgerRecords - rejected,
        staged: g.staged + invalid + g.imported,
        valid: g.staged + g.imported,
        imported: g.imported,
      };
      const base = steps.sourceRows;
      const sentNoAnswer: Explanation[] = [];
      if (elsewhere)
        sentNoAnswer.push({
          stage: 'staging',
          code: 'IN_OTHER_MIGRATION',
          label: 'held by another migration, not sent into this one',
          count: elsewhere,
          accounted: true,
        });
      if (g.notSent)
        sentNoAnswer.push({
          stage: 'staging',
          code: 'NOT_SENT',
          label: 'mapped but not uploaded (run did not finish)',
          count: g.notSent,
          accounted: false,
        });
      if (g.inFlight)
        sentNoAnswer.push({
          stage: 'staging',
          code: 'IN_FLIGHT',
          label: 'uploaded, staging result unknown (run interrupted)',
          count: g.inFlight,
          accounted: false,
        });

      const validationExplained = explanations('validation', g.invalid);
      const importExplained: Explanation[] = [];
      if (g.staged) {
        if (jobs.validation === 'not-run' || jobs.validation === 'running') {
          importExplained.push({
            stage: 'validation',
            code: 'AWAITING_VALIDATION',
            label: 'staged, validation not finished',
            count: g.staged,
            accounted: true,
          });
        } else if (jobs.validation === 'invalid' && jobs.import === 'not-run') {
          importExplained.push({
            stage: 'import',
            code: 'IMPORT_BLOCKED',
            label: 'valid, import waits until staging validates',
            count: g.staged,
            accounted: true,
          });
        } else if (jobs.import === 'not-run' || jobs.import === 'running') {
          importExplained.push({
            stage: 'import',
            code: 'AWAITING_IMPORT',
            label: 'valid, import not finished',
            count: g.staged,
            accounted: true,
          });
        } else {
          const errors = (platform.importErrors ?? []).filter((e) => e.component === g.component);
          if (errors.length) {
            const code = /^([A-Z][A-Z_]+)\b/.exec(errors[0]!.message)?.[1] ?? 'IMPORT_FAILED';
            importExplained.push({ stage: 'import', code, label: `not imported: ${errors[0]!.message}`, count: g.staged, accounted: true });
          } else {
            importExplained.push({
              stage: 'import',
              code: 'NOT_IMPORTED',
              label: 'valid, import done, record not imported and no import error',
              count: g.staged,
              accounted: false,
            });
          }
        }
      }
      const gaps: Gap[] = [
        gap('sourceRows', 'mapped', steps, localRejects(g.rejected), tolerance, base),
        gap('mapped', 'staged', steps, [...explanations('staging', g.refusedByStaging), ...sentNoAnswer], tolerance, base),
        gap('staged', 'valid', steps, validationExplained, tolerance, base),
        gap('valid', 'imported', steps, importExplained, tolerance, base),
      ];
      const expectedOnPlatform = steps.staged - g.removedFromStaging;
      const checks: PlatformCheck[] = [];
      if (platform.counts && jobs.counts === 'done') {
        // A type the counts job does not name is unknown, not 0: shown as not reported, not compared.
        checks.push(check('staged', 'counts job', expectedOnPlatform, platform.counts.staged[g.entityType] ?? null, tolerance));
        checks.push(check('imported', 'counts job', steps.imported, platform.counts.imported[g.entityType] ?? null, tolerance));
      }
      const label = `${g.component} / ${g.entityType}`;
      for (const gp of gaps) {
        if (!gp.ok)
          problems.push(
            `${label}: ${Math.abs(gp.unaccounted)} record(s) between "${STEP_LABELS[gp.from]}" and "${STEP_LABELS[gp.to]}" are unaccounted (tolerance ${gp.allowed})`,
          );
      }
      for (const c of checks) {
        if (!c.ok)
          problems.push(
            `${label}: the platform (${c.source}) reports ${c.platform} ${c.measure}, the ledger ${c.ledger} (difference ${signed(c.difference!)}, tolerance ${c.allowed})`,
          );
      }
      return {
        component: g.component,
        entityType: g.entityType,
        steps,
        gaps,
        expectedOnPlatform,
        removedFromStaging: g.removedFromStaging,
        inOtherMigrations: elsewhere,
        platform: checks,
        balanced: gaps.every((x) => x.ok) && checks.every((c) => c.ok),
      };
    });

  // Counts job types and entities that the ledger has no records of are still set against zero
  // (a zero is agreement); TotalEntity rows are entities, checked per component below.
  if (platform.counts && jobs.counts === 'done') {
    const totals = platform.counts.totals ?? {};
    const known = new Set(groups.map((g) => g.entityType));
    const numbers = [...Object.entries(platform.counts.staged), ...Object.entries(platform.counts.imported)].filter(
      ([t]) => !(t in totals),
    );
    for (const [entity, t] of Object.entries(totals)) {
      if (groups.some((g) => entityMatchesComponent(entity, g.component))) continue;
      numbers.push([entity, t.staged], [entity, t.imported]);
    }
    for (const [type, n] of numbers) {
      if (!known.has(type) && n !== 0) {
        problems.push(`${type}: the platform (counts job) reports ${n} record(s) of an entity type the ledger has none of`);
        known.add(type);
      }
    }
  }

  const componentNames = [...new Set([...groups.map((g) => g.component), ...(platform.migration ?? []).map((m) => m.component)])].sort();
  const components: ComponentReport[] = componentNames.map((component) => {
    const own = groups.filter((g) => g.component === component);
    const expected = own.reduce((a, g) => a + g.expectedOnPlatform, 0);
    const imported = own.reduce((a, g) => a + g.steps.imported, 0);
    const checks: PlatformCheck[] = [];
    const total =
      platform.counts?.totals && jobs.counts === 'done'
        ? Object.entries(platform.counts.totals).find(([entity]) => entityMatchesComponent(entity, component))
        : undefined;
    if (total) {
      checks.push(check('staged', 'counts job total', expected, total[1].staged, tolerance));
      checks.push(check('imported', 'counts job total', imported, total[1].imported, tolerance));
    }
    const m = platform.migration?.find((x) => x.component === component);
    if (m) {
      checks.push(check('staged', 'migration', expected, m.numberOfStagedEntities, tolerance));
      checks.push(check('imported', 'migration', imported, m.numberOfImportedEntities, tolerance));
    }
    for (const c of checks) {
      if (!c.ok)
        problems.push(
          `${component}: the platform (${c.source}) reports ${c.platform} ${c.measure}, the ledger ${c.ledger} (difference ${signed(c.difference!)}, tolerance ${c.allowed})`,
        );
    }
    const importErrors = (platform.importErrors ?? []).filter((e) => e.component === component);
    return { component, platform: checks, importErrors, balanced: checks.every((c) => c.ok) };
  });

  const totals = {
    sourceRows: 0,
    mapped: 0,
    staged: 0,
    valid: 0,
    imported: 0,
    unaccounted: 0,
    removedFromStaging: 0,
    inOtherMigrations: 0,
  };
  for (const g of groups) {
    for (const k of Object.keys(g.steps) as StepName[]) totals[k] += g.steps[k];
    totals.unaccounted += g.gaps.reduce((a, x) => a + Math.abs(x.unaccounted), 0);
    totals.removedFromStaging += g.removedFromStaging;
    totals.inOtherMigrations += g.inOtherMigrations;
  }
  const sourceFiles = (input.sourceFiles ?? []).map(({ tally: t, accepted }): SourceFileReport => {
    const disagreement = tallyDisagreement(t);
    const isAccepted = accepted && disagreement !== undefined && t.truncated !== undefined;
    if (disagreement !== undefined && !isAccepted) problems.push(`source file not accounted for: ${disagreement}`);
    return {
      source: t.source,
      file: t.file,
      format: t.format,
      physicalLines: t.physicalLines,
      blankLines: t.blankLines,
      headerLines: t.headerLines,
      ...(t.items !== undefined ? { items: t.items } : {}),
      rowsRead: t.rowsRead,
      rowErrors: t.rowErrors,
      ...(disagreement !== undefined ? { disagreement } : {}),
      ...(isAccepted ? { accepted: true } : {}),
      ...(t.relaxedQuotes?.count ? { relaxedQuotes: relaxedQuotesText(t)! } : {}),
    };
  });
  for (const f of input.readFailures ?? []) problems.push(f);
  const topErrors = [...input.errorCodes].sort(
    (a, b) => b.records - a.records || a.code.localeCompare(b.code) || a.stage.localeCompare(b.stage),
  );
  return {
    schema: 'stagecoach.reconciliation/1',
    run: input.run,
    generatedAt: input.generatedAt,
    tolerance: formatTolerance(tolerance),
    jobs,
    balanced: problems.length === 0,
    totals,
    groups,
    components,
    topErrors,
    sourceFiles,
    rowStories: input.rowStories ?? { total: 0, stories: [] },
    problems,
    ...(platform.counts?.otherTables && jobs.counts === 'done' ? { otherCountTables: platform.counts.otherTables } : {}),
  };
}

/**
 * A row's story in one line, for the Markdown and HTML reports.
 * @example storyText(story) // 'rejected in run 1 at klanten.csv:11 (INVALID_FIELD_VALUE) → imported, read in run 2 from corrections/klanten.corrections.csv:2'
 *          // a correction that gave the row a key: 'rejected in run 1 at klanten.csv:136 (SOURCE_ROW_INVALID) → corrected as key 100133: staged, read in run 2 from fixed.csv:2'
 */
export function storyText(story: RowStory): string {
  return story.steps
    .map((s, i) => {
      const codes = s.codes.length > 0 ? ` (${s.codes.join(', ')})` : '';
      const rekeyed = story.steps[i - 1]?.formerKey !== undefined ? `corrected as key ${story.legacyKey}: ` : '';
      return i === 0
        ? `${s.state} in run ${s.run} at ${s.file}:${s.line}${codes}`
        : `${rekeyed}${s.state}${codes}, read in run ${s.run} from ${s.file}:${s.line}`;
    })
    .join(' → ');
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

export interface CountsByType {
  /** Per entity type (person, organisation): from the per-type tables, else the TotalEntity rows. Absent: not reported. */
  staged: Record<string, number>;
  imported: Record<string, number>;
  /** Per entity (Counterparty…) from the TotalEntity table. */
  totals?: Record<string, { staged: number; imported: number }>;
  /**
   * Tables that break down no entity of the TotalEntity table (e.g. an import-outcome table):
   * shown in the report, never compared.
   */
  otherTables?: Array<{ type: string; staged: Record<string, number>; imported: Record<string, number> }>;
}

/** Reads one counts table's rows into name → count, finding the name and count columns by their headers. */
function readTable(table: { headers: string[]; stagedRows: string[][]; importedRows: string[][] }): {
  staged: Record<string, number>;
  imported: Record<string, number>;
} {
  const lower = table.headers.map((h) => h.toLowerCase());
  let countCol = lower.findIndex((h) => h.includes('count') || h.includes('number') || h === 'total');
  if (countCol < 0) countCol = table.headers.length - 1;
  let typeCol = lower.findIndex((h, i) => i !== countCol && (h.includes('type') || h.includes('entity')));
  if (typeCol < 0) typeCol = countCol === 0 ? 1 : 0;
  const read = (rows: string[][]) => {
    const into: Record<string, number> = {};
    for (const row of rows) {
      const type = row[typeCol];
      const n = Number(row[countCol]);
      if (type !== undefined && Number.isFinite(n)) into[type] = (into[type] ?? 0) + n;
    }
    return into;
  };
  return { staged: read(table.stagedRows), imported: read(table.importedRows) };
}

/**
 * Reads a counts-job result. The spec shows a TotalEntity table (entity type and count); the
 * embedded service adds one table per entity with its types (a `Counterparty` table of person
 * and organisation counts). Per-type numbers come from those tables when present, else from
 * the TotalEntity rows themselves; the TotalEntity rows then give per-entity totals.
 * @example countsByType({ counts: [{ type: 'TotalEntity', headers: ['EntityType','Count'], stagedRows: [['person','3']], importedRows: [] }] })
 *   // { staged: { person: 3 }, imported: {} }
 */
export function countsByType(result: {
  counts: Array<{ type: string; headers: string[]; stagedRows: string[][]; importedRows: string[][] }>;
}): CountsByType {
  const total = result.counts.find((t) => t.type === 'TotalEntity');
  const totalRows = total ? readTable(total) : undefined;
  const totals: Record<string, { staged: number; imported: number }> = {};
  if (totalRows)
    for (const name of new Set([...Object.keys(totalRows.staged), ...Object.keys(totalRows.imported)]))
      totals[name] = { staged: totalRows.staged[name] ?? 0, imported: totalRows.imported[name] ?? 0 };
  // With a TotalEntity table, a per-type table counts only when it breaks down one of its entities.
  const perType = result.counts.filter((t) => t !== total && (!total || t.type in totals));
  const others = result.counts.filter((t) => t !== total && !perType.includes(t));
  const out: CountsByType = perType.length === 0 && totalRows ? { ...totalRows } : { staged: {}, imported: {} };
  for (const t of perType) {
    const r = readTable(t);
    for (const [k, v] of Object.entries(r.staged)) out.staged[k] = (out.staged[k] ?? 0) + v;
    for (const [k, v] of Object.entries(r.imported)) out.imported[k] = (out.imported[k] ?? 0) + v;
  }
  if (total) out.totals = totals;
  if (others.length) out.otherTables = others.map((t) => ({ type: t.type, ...readTable(t) }));
  return out;
}

/** An uncompared counts table in one line. @example otherTableText({type: 'X', staged: {a: 1}, imported: {}}) // 'staged a 1; imported none' */
export function otherTableText(t: { staged: Record<string, number>; imported: Record<string, number> }): string {
  const list = (r: Record<string, number>) =>
    Object.entries(r)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  return `staged ${list(t.staged)}; imported ${list(t.imported)}`;
}

/** Whether a counts table's entity name (Counterparty) stands for a migration component (Counterparties). */
export function entityMatchesComponent(entity: string, component: string): boolean {
  const e = entity.toLowerCase();
  const c = component.toLowerCase();
  return e === c || `${e}s` === c || e.replace(/y$/, 'ies') === c || c.startsWith(e);
}

/** Where the jobs stand when nothing is imported yet, in the words of a status report. */
export function importState(jobs: JobFacts): string {
  if (jobs.validation === 'not-run') return 'validation has not run';
  if (jobs.validation === 'running') return 'validation is running';
  if (jobs.validation === 'invalid') return 'validation refused records: fix them or use --drop-invalid';
  if (jobs.import === 'not-run') return 'the import has not run';
  return jobs.import === 'running' ? 'the import is running' : 'the import is done';
}

/**
 * The report's first line, the one a migration lead pastes into a status report: balanced only
 * says every row is accounted for, which is also true before anything reached the platform, so a
 * balanced report with nothing imported says that first.
 * @example headline(report)
 *   // { state: 'pending', title: 'Nothing imported yet', text: '228 of 240 source rows staged, 12 not staged (refused, see below), 0 imported; the import has not run. Every row is accounted for so far.' }
 */
export function headline(report: Pick<ReconciliationReport, 'balanced' | 'totals' | 'jobs'>): {
  state: 'balanced' | 'pending' | 'not-balanced';
  title: string;
  text: string;
} {
  const t = report.totals;
  if (!report.balanced) return { state: 'not-balanced', title: 'NOT BALANCED', text: '' };
  if (t.imported === 0 && t.sourceRows > 0) {
    const elsewhere = t.inOtherMigrations ?? 0;
    const notStaged = t.sourceRows - t.staged - elsewhere;
    const held = elsewhere > 0 ? `, ${elsewhere} held by another migration` : '';
    return {
      state: 'pending',
      title: 'Nothing imported yet',
      text: `${t.staged} of ${t.sourceRows} source rows staged, ${notStaged} not staged${notStaged > 0 ? ' (refused, see below)' : ''}${held}, 0 imported; ${importState(report.jobs)}. Every row is accounted for so far.`,
    };
  }
  return { state: 'balanced', title: 'Balanced', text: 'every source row is accounted for, and the platform agrees with the ledger.' };
}
