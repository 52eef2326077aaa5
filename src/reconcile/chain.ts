/**
 * The platform half of a migration, after staging: validate → (drop invalid records and
 * validate again, when asked) → import → counts, each job driven through the ledger's jobs
 * table so a crash or Ctrl-C resumes the same job, and each result applied to the ledger's
 * records in one transaction (invalid records with their errors, imported records, import
 * failures attached to their records).
 *
 * Order on a re-run: an import that was started is resumed (or its result reused) and
 * validation is not repeated; otherwise a running validation is resumed, and a finished one
 * is run again, because staging may have changed since (corrections re-staged).
 */
import type { Ledger } from '../ledger/index.js';
import type { CountsResult, ImportResult, JobResult, ValidationResult } from '../contract/migration.js';
import { StagecoachError } from '../contract/errors.js';
import { driveJob, type JobEvent, type JobKind, type JobsApi } from './jobs-driver.js';
import { explainDuplicates } from './duplicate-identities.js';
import { explainRelationTargets } from './relation-targets.js';

/** Rounds of remove-and-validate-again before giving up (each round removes what the last refused). */
const MAX_DROP_ROUNDS = 5;

export interface ChainClient {
  jobs: JobsApi;
  migrations: {
    deleteStaged(migrationId: string, referenceId: string, opts?: { signal?: AbortSignal }): Promise<unknown>;
    /** The staged record, or undefined when the platform does not hold it (settling removals a kill cut short). */
    getStaged(migrationId: string, referenceId: string, opts?: { signal?: AbortSignal }): Promise<unknown>;
  };
}

export interface ChainOptions {
  signal?: AbortSignal;
  /** Longest wait for one job, in ms (default 30 minutes). The job keeps running on the service. */
  jobDeadlineMs?: number;
  /**
   * When validation refuses records: delete them from staging (they stay `invalid` in the
   * ledger and in the corrections file), validate again and import the rest. Without it the
   * chain stops before import, as the platform requires a passing validation.
   */
  dropInvalid?: boolean;
  onEvent?: (event: ChainEvent) => void;
}

export type ChainEvent =
  | JobEvent
  /** `invalid`: records this validation refused; `total`: records invalid in the ledger now (removed ones included). */
  | { type: 'validated'; isValid: boolean; invalid: number; errors: number; total: number }
  /** A `--drop-invalid` round deleting refused records from staging, one by one: `done` of `of` so far. */
  | { type: 'removing'; done: number; of: number }
  | { type: 'removed'; count: number }
  /** Removals an earlier, killed run had started: `removed` now confirmed, `void` no longer meant (the record was sent again). */
  | { type: 'settled'; removed: number; void: number }
  | { type: 'imported'; imported: number; failed: number };

export type ChainOutcome =
  | { status: 'validation-failed'; validation: ValidationResult }
  | { status: 'imported'; validation?: ValidationResult; import: ImportResult; counts: CountsResult };

function expect<T extends JobResult['jobType']>(result: JobResult, type: T, kind: JobKind): Extract<JobResult, { jobType: T }> {
  if (result.jobType !== type)
    throw new StagecoachError('JOB_FAILED', `The ${kind} job returned a ${result.jobType} result, expected ${type}`, {
      jobType: result.jobType,
    });
  return result as Extract<JobResult, { jobType: T }>;
}

type StepOptions = Pick<ChainOptions, 'signal' | 'jobDeadlineMs' | 'onEvent'>;

function driver(client: ChainClient, ledger: Ledger, migrationId: string, options: StepOptions) {
  return (kind: JobKind, whenDone: 'reuse' | 'again') =>
    driveJob(client.jobs, ledger.jobs, migrationId, kind, {
      signal: options.signal,
      deadlineMs: options.jobDeadlineMs,
      whenDone,
      onEvent: options.onEvent,
    });
}

/** Deletes one record from staging; a record the platform no longer holds counts as deleted. */
async function removeFromStaging(client: ChainClient, migrationId: string, referenceId: string, signal?: AbortSignal): Promise<void> {
  try {
    await client.migrations.deleteStaged(migrationId, referenceId, signal ? { signal } : {});
  } catch (err) {
    if (err instanceof StagecoachError && err.code === 'NOT_FOUND') return;
    throw err;
  }
}

/**
 * Settles the removals a killed run left `removing` (the intent written, the DELETE's answer
 * not): each still-applying one is looked up on the platform and, when still staged, deleted —
 * the intent is carried out, so how many records a `--drop-invalid` drops does not depend on
 * where a kill landed; an intent for a record sent again since is dropped. Runs before any
 * validation, whose result would otherwise take a record the ledger meant to delete for staged.
 * @example const { removed } = await settleRemovals(client, ledger, migrationId);
 */
export async function settleRemovals(
  client: ChainClient,
  ledger: Ledger,
  migrationId: string,
  options: Pick<StepOptions, 'signal' | 'onEvent'> = {},
): Promise<{ removed: number; void: number }> {
  const pending = ledger.removals.pending(migrationId);
  let removed = 0;
  for (const p of pending) {
    if (!p.applies) {
      ledger.removals.drop(migrationId, p.referenceId);
      continue;
    }
    if (options.signal?.aborted) throw new StagecoachError('ABORTED', 'Interrupted while settling removals from staging');
    const staged = await client.migrations.getStaged(migrationId, p.referenceId, options.signal ? { signal: options.signal } : {});
    if (staged !== undefined) await removeFromStaging(client, migrationId, p.referenceId, options.signal);
    ledger.removals.confirm(migrationId, p.referenceId);
    removed++;
  }
  const settled = { removed, void: pending.length - removed };
  if (pending.length > 0) options.onEvent?.({ type: 'settled', ...settled });
  return settled;
}

/**
 * Validates the staged data (resuming a running validation, else starting a new one) and marks
 * the refused records `invalid` with their errors, the others `staged` again. Removals an
 * earlier run left unsettled are settled first. The result's messages of a missing relation
 * target name the legacy rows (src/reconcile/relation-targets.ts).
 * @example const v = await validateStep(client, ledger, migrationId); if (!v.isValid) …
 */
export async function validateStep(
  client: ChainClient,
  ledger: Ledger,
  migrationId: string,
  options: StepOptions = {},
): Promise<ValidationResult> {
  await settleRemovals(client, ledger, migrationId, options);
  const result = expect(
    (await driver(client, ledger, migrationId, options)('validate-staging', 'again')).result,
    'ValidateStaging',
    'validate-staging',
  );
  // The refused records are still staged: name the legacy rows a missing relation target points at.
  const explained = explainDuplicates(
    ledger,
    await explainRelationTargets(client.migrations, ledger, migrationId, result.errors, { signal: options.signal }),
  );
  const v: ValidationResult = { ...result, errors: result.errors.map((e, i) => ({ ...e, message: explained[i]!.message })) };
  // Records deleted from staging are absent from a new validation's errors, yet still refused:
  // they keep their errors (markValidated would otherwise clear every record it does not name).
  const removed = [...ledger.removals.active(migrationId)].flatMap(([referenceId, errors]) =>
    errors.map((e) => ({ referenceId, field: e.field, message: e.message, code: e.code })),
  );
  const applied = ledger.markValidated(migrationId, [
    ...explained.map((e) => ({ referenceId: e.referenceId, field: e.field, message: e.message, ...(e.code ? { code: e.code } : {}) })),
    ...removed,
  ]);
  options.onEvent?.({
    type: 'validated',
    isValid: v.isValid,
    invalid: new Set(v.errors.map((e) => e.referenceId)).size,
    errors: v.errors.length,
    total: applied.invalid,
  });
  return v;
}

/**
 * The statuses of an import that ran to its end (with per-record errors or none): the spec's
 * `Completed`, or `Succeeded` as another platform may say. Anything else (`Failed`, `Canceled`, …)
 * is an import the ledger cannot account record by record.
 */
const IMPORT_RAN_TO_ITS_END = /^(completed|succeeded)$/i;

/**
 * Imports (resuming a running import, or reusing a finished one: an import never runs twice)
 * and marks the records `imported`, attaching import errors to the records they name.
 */
export async function importStep(
  client: ChainClient,
  ledger: Ledger,
  migrationId: string,
  options: StepOptions = {},
): Promise<ImportResult> {
  const imported = expect((await driver(client, ledger, migrationId, options)('import', 'reuse')).result, 'Import', 'import');
  if (!IMPORT_RAN_TO_ITS_END.test(imported.status)) {
    // A failed or canceled import names no record it left out: marking the staged records
    // imported would make the ledger disagree with the platform, so they stay as they are.
    const first = imported.errors[0]?.message;
    throw new StagecoachError(
      'JOB_FAILED',
      `The import job ${imported.referenceId} of migration ${migrationId} ended with status ${JSON.stringify(imported.status)}, expected Completed: ` +
        `the platform imported ${imported.numberOfImportedEntities} of ${imported.numberOfStagedEntities} staged record(s)` +
        `${imported.errors.length > 0 ? `, ${imported.errors.length} error(s), the first: ${first}` : ''}; ` +
        'the ledger does not mark the records imported: look at the migration on the platform (stagecoach logs) before going on',
      { jobId: imported.referenceId, field: 'status', value: imported.status },
    );
  }
  const failures = imported.errors
    .filter((e): e is typeof e & { referenceId: string } => typeof (e as { referenceId?: unknown }).referenceId === 'string')
    .map((e) => ({ referenceId: e.referenceId, message: e.message }));
  const applied = ledger.markImportOutcome(migrationId, failures);
  options.onEvent?.({ type: 'imported', imported: applied.imported, failed: failures.length });
  return imported;
}

/** Runs a counts job (resuming a running one) and returns its tables. */
export async function countsStep(
  client: ChainClient,
  ledger: Ledger,
  migrationId: string,
  options: StepOptions = {},
): Promise<CountsResult> {
  return expect((await driver(client, ledger, migrationId, options)('counts', 'again')).result, 'Counts', 'counts');
}

/**
 * Runs validate → import → counts for a staged migration.
 * @example
 *   const outcome = await runChain(client, ledger, migrationId, { signal, dropInvalid: true });
 *   if (outcome.status === 'validation-failed') console.log(outcome.validation.errors.length, 'errors');
 */
export async function runChain(
  client: ChainClient,
  ledger: Ledger,
  migrationId: string,
  options: ChainOptions = {},
): Promise<ChainOutcome> {
  const emit = options.onEvent ?? (() => undefined);
  const step: StepOptions = { signal: options.signal, jobDeadlineMs: options.jobDeadlineMs, onEvent: emit };

  let validation: ValidationResult | undefined;
  if (!ledger.jobs.latest(migrationId, 'import')) {
    validation = await validateStep(client, ledger, migrationId, step);
    // Removing a record can invalidate the records that point at it (RELATION_TARGET_MISSING),
    // so removal and validation repeat until validation passes, a bounded number of rounds.
    for (let round = 0; !validation.isValid && options.dropInvalid && round < MAX_DROP_ROUNDS; round++) {
      const invalid = ledger
        .recordsByReferenceIds(new Set(validation.errors.map((e) => e.referenceId)))
        .filter((r) => r.state === 'invalid' && r.migrationId === migrationId);
      if (invalid.length === 0) break;
      // The intent first, for the whole round; each DELETE is confirmed when answered. A kill in
      // between leaves `removing` rows that the next validateStep settles (settleRemovals).
      ledger.removals.intend(
        migrationId,
        invalid.map((rec) => ({ referenceId: rec.referenceId!, lastBatch: rec.lastBatch, errors: rec.errors })),
      );
      emit({ type: 'removing', done: 0, of: invalid.length });
      for (const [i, rec] of invalid.entries()) {
        if (options.signal?.aborted) throw new StagecoachError('ABORTED', 'Interrupted while removing invalid records from staging');
        await removeFromStaging(client, migrationId, rec.referenceId!, options.signal);
        ledger.removals.confirm(migrationId, rec.referenceId!);
        emit({ type: 'removing', done: i + 1, of: invalid.length });
      }
      emit({ type: 'removed', count: invalid.length });
      validation = await validateStep(client, ledger, migrationId, step);
    }
    if (!validation.isValid) return { status: 'validation-failed', validation };
  }
  const imported = await importStep(client, ledger, migrationId, step);
  const counts = await countsStep(client, ledger, migrationId, step);
  return { status: 'imported', ...(validation ? { validation } : {}), import: imported, counts };
}
