/**
 * What the ledger knows about one platform migration, summed for the report: records per
 * component, entity type, state and first error code; the most frequent error codes with a few
 * example rows each (file:line, field, message); where the jobs stand; and the platform's own
 * numbers the jobs returned. One pass over the records of the pipelines that ran against the
 * migration, holding only counters and a handful of examples: the records without an error
 * counted by the ledger in groups (a million of them are a GROUP BY, not a million objects), those
 * with one read one by one for their codes and examples.
 */
import type { Ledger, RecordRow } from '../ledger/index.js';
import type { CountsResult, ImportResult, ValidationResult } from '../contract/migration.js';
import {
  countsByType,
  type ErrorCodeFacts,
  type ErrorExample,
  type GroupFacts,
  type JobFacts,
  type PlatformFacts,
  type Stage,
} from './report-model.js';

const EXAMPLES_PER_CODE = 3;

export interface LedgerFacts {
  pipelines: string[];
  groups: GroupFacts[];
  errorCodes: ErrorCodeFacts[];
  jobs: JobFacts;
  /** Platform numbers the ledger holds from finished jobs (counts tables, import errors). */
  platform: Pick<PlatformFacts, 'counts' | 'importErrors'>;
  /** Example records per code, for re-reading their legacy rows. */
  exampleRecords: Map<ErrorExample, RecordRow>;
}

/** The pipelines whose runs attached to the migration, in first-run order. */
export function pipelinesOf(ledger: Ledger, migrationId: string): string[] {
  const names: string[] = [];
  for (const run of ledger.runs()) if (run.migrationId === migrationId && !names.includes(run.pipeline)) names.push(run.pipeline);
  return names;
}

function stageOf(stage: string): Stage {
  if (stage === 'source' || stage === 'mapping' || stage === 'staging' || stage === 'validation' || stage === 'import') return stage;
  if (stage === 'check') return 'mapping';
  return 'staging';
}

/**
 * Sums the ledger's records of the migration (and the refused rows of its pipelines, which
 * never reached a migration) into report facts.
 * @example const facts = gatherLedgerFacts(ledger, migrationId);
 */
export function gatherLedgerFacts(
  ledger: Ledger,
  migrationId: string,
  pipelines: string[] = pipelinesOf(ledger, migrationId),
): LedgerFacts {
  const removed = ledger.removals.active(migrationId);
  // keyed by component, source and entity type (null until resolved from the source's records)
  type Acc = Omit<GroupFacts, 'entityType' | 'component'> & { component: string; source: string; entityType: string | null };
  const accs = new Map<string, Acc>();
  const typesBySource = new Map<string, Map<string, number>>();
  const codes = new Map<string, ErrorCodeFacts>();
  const exampleRecords = new Map<ErrorExample, RecordRow>();
  const inc = (r: Record<string, number>, k: string, n = 1) => (r[k] = (r[k] ?? 0) + n);

  /** Counts `n` records of a group; a refused row is the pipeline's whatever migration its record last went to. */
  const count = (
    r: {
      component: string;
      source: string;
      entityType: string | null;
      state: string;
      migrationId: string | null;
      importedEarlierIn?: string | null | undefined;
    },
    firstCode: string,
    n: number,
    referenceId?: string | null,
  ) => {
    const sourceKey = `${r.component}\u0000${r.source}`;
    if (r.entityType) {
      const t = typesBySource.get(sourceKey) ?? new Map<string, number>();
      t.set(r.entityType, (t.get(r.entityType) ?? 0) + n);
      typesBySource.set(sourceKey, t);
    }
    const key = `${sourceKey}\u0000${r.entityType ?? ''}`;
    let acc = accs.get(key);
    if (!acc) {
      acc = {
        component: r.component,
        source: r.source,
        entityType: r.entityType,
        notSent: 0,
        inFlight: 0,
        rejected: {},
        refusedByStaging: {},
        staged: 0,
        invalid: {},
        imported: 0,
        removedFromStaging: 0,
        inOtherMigrations: 0,
      };
      accs.set(key, acc);
    }
    // What this migration imported stays counted for it, whatever later runs did to the record's
    // row (sent again into a new migration, refused since): the platform counts it here for good.
    if (r.importedEarlierIn === migrationId && r.migrationId !== migrationId) {
      acc.imported += n;
      return;
    }
    // Records sent to another migration belong to that one's report, but they are rows of the
    // export all the same: the source rows stay the export's (a corrected record kept from an
    // earlier migration, the records of a migration whose only run was a corrections run).
    if (r.migrationId !== null && r.migrationId !== migrationId) {
      if (r.state === 'rejected') inc(acc.rejected, firstCode, n);
      else acc.inOtherMigrations! += n;
      return;
    }
    switch (r.state) {
      case 'mapped':
        acc.notSent += n;
        break;
      case 'in_flight':
        acc.inFlight += n;
        break;
      case 'rejected':
        inc(acc.rejected, firstCode, n);
        break;
      case 'failed':
        inc(acc.refusedByStaging, firstCode, n);
        break;
      case 'staged':
        acc.staged += n;
        break;
      case 'invalid':
        inc(acc.invalid, firstCode, n);
        if (referenceId && removed.has(referenceId)) acc.removedFromStaging += n;
        break;
      case 'imported':
        acc.imported += n;
        break;
    }
  };

  for (const pipeline of pipelines) {
    // Most records carry no error: counted by the ledger in groups, not read one by one.
    for (const g of ledger.facts({ pipeline, countedOnly: true })) count(g, g.code ?? 'UNKNOWN', g.count);
    for (const rec of ledger.records({ pipeline, oneByOne: true })) {
      count({ ...rec, source: rec.provenance.source }, rec.errors[0]?.code ?? 'UNKNOWN', 1, rec.referenceId);
      // every code of the record counts once for the top-errors table
      const seen = new Set<string>();
      for (const e of rec.errors) {
        const stage = stageOf(e.stage);
        const id = `${stage}\u0000${e.code}`;
        if (seen.has(id)) continue;
        seen.add(id);
        let c = codes.get(id);
        if (!c) codes.set(id, (c = { stage, code: e.code, records: 0, examples: [] }));
        c.records++;
        if (c.examples.length < EXAMPLES_PER_CODE) {
          const example: ErrorExample = { file: rec.provenance.file, line: rec.provenance.line, field: e.field, message: e.message };
          if (rec.referenceId) example.referenceId = rec.referenceId;
          c.examples.push(example);
          exampleRecords.set(example, rec);
        }
      }
    }
  }

  // Rows refused before mapping have no entity type: they count with their source's main type.
  const groups = new Map<string, GroupFacts>();
  for (const acc of accs.values()) {
    let type = acc.entityType;
    if (!type) {
      const t = typesBySource.get(`${acc.component}\u0000${acc.source}`);
      type = t ? [...t.entries()].sort((a, b) => b[1] - a[1])[0]![0] : `(${acc.source})`;
    }
    const key = `${acc.component}\u0000${type}`;
    const g = groups.get(key);
    if (!g) {
      groups.set(key, {
        component: acc.component,
        entityType: type,
        notSent: acc.notSent,
        inFlight: acc.inFlight,
        rejected: { ...acc.rejected },
        refusedByStaging: { ...acc.refusedByStaging },
        staged: acc.staged,
        invalid: { ...acc.invalid },
        imported: acc.imported,
        removedFromStaging: acc.removedFromStaging,
        inOtherMigrations: acc.inOtherMigrations ?? 0,
      });
      continue;
    }
    g.notSent += acc.notSent;
    g.inFlight += acc.inFlight;
    g.staged += acc.staged;
    g.imported += acc.imported;
    g.removedFromStaging += acc.removedFromStaging;
    g.inOtherMigrations = (g.inOtherMigrations ?? 0) + (acc.inOtherMigrations ?? 0);
    for (const [k, v] of Object.entries(acc.rejected)) g.rejected[k] = (g.rejected[k] ?? 0) + v;
    for (const [k, v] of Object.entries(acc.refusedByStaging)) g.refusedByStaging[k] = (g.refusedByStaging[k] ?? 0) + v;
    for (const [k, v] of Object.entries(acc.invalid)) g.invalid[k] = (g.invalid[k] ?? 0) + v;
  }

  const { jobs, platform } = jobFacts(ledger, migrationId);
  return { pipelines, groups: [...groups.values()], errorCodes: [...codes.values()], jobs, platform, exampleRecords };
}

/** Where the jobs of the migration stand, and what the finished ones returned. */
export function jobFacts(
  ledger: Ledger,
  migrationId: string,
): { jobs: JobFacts; platform: Pick<PlatformFacts, 'counts' | 'importErrors'> } {
  const validation = ledger.jobs.latest<ValidationResult>(migrationId, 'validate-staging');
  const imp = ledger.jobs.latest<ImportResult>(migrationId, 'import');
  const counts = ledger.jobs.latest<CountsResult>(migrationId, 'counts');
  const jobs: JobFacts = {
    validation:
      !validation || validation.state === 'failed'
        ? 'not-run'
        : validation.state === 'running'
          ? 'running'
          : validation.result?.isValid
            ? 'valid'
            : 'invalid',
    import: !imp || imp.state === 'failed' ? 'not-run' : imp.state === 'running' ? 'running' : 'done',
    counts: !counts || counts.state === 'failed' ? 'not-run' : counts.state === 'running' ? 'running' : 'done',
  };
  const platform: Pick<PlatformFacts, 'counts' | 'importErrors'> = {};
  if (counts?.state === 'done' && counts.result) platform.counts = countsByType(counts.result);
  if (imp?.state === 'done' && imp.result)
    platform.importErrors = imp.result.errors.map((e) => ({ component: e.component, message: e.message }));
  return { jobs, platform };
}
