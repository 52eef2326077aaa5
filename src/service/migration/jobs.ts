/**
 * The background jobs of a migration: validate-staging, import and counts.
 *
 * A job is a row in `migration_jobs` that moves Running → Done. It works through the staged
 * records in staging order, a chunk per transaction (its findings, the live data it writes and
 * its cursor commit together), and yields to the event loop between chunks, so requests stay
 * served and shutdown can stop it between two chunks. On start, the service resumes every job
 * still Running from its cursor; one that fails is finished with an error result, so polling
 * always ends. `jobRecordsPerSecond` slows jobs down for tests of polling and restarts.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { Component, JobType, StagedCounterparty } from '../../contract/migration.js';
import { liveCounterpartyExists, upsertLiveCounterparties } from '../counterparties/store.js';
import { alterationsOf } from '../faults/alterations.js';
import { parseDialect } from '../dialect/switches.js';
import { COUNTERPARTIES, type MigrationParts } from './parts.js';
import type { JobRow } from './store-jobs.js';
import type { StagedRow } from './store-staging.js';
import { overall, type MigrationRow } from './store-migrations.js';
import { MIGRATION_COMPONENT } from './store-logs.js';
import { checkStagedRecord, type ValidationIssue } from './validate.js';

/** Entity names of the components in counts tables. */
export const ENTITY_OF: Record<Component, string> = {
  Counterparties: 'Counterparty',
  Collaterals: 'Collateral',
  FinancingSolutions: 'FinancingSolution',
  FinancingExecutions: 'FinancingExecution',
  Administrate: 'Administration',
};

interface ValidationError {
  component: string;
  referenceId: string;
  field: string;
  message: string;
}
interface ImportError {
  component: string;
  referenceId?: string;
  message: string;
}

type JobOutcome = 'done' | 'paused';

export class JobRunner {
  private readonly chunk: number;

  constructor(private readonly parts: MigrationParts) {
    const rate = parts.ctx.config.jobRecordsPerSecond;
    // Slowed jobs commit often, so a restart in the middle finds real progress.
    this.chunk = rate ? Math.max(1, Math.min(1000, Math.floor(rate / 5))) : 1000;
  }

  /**
   * Starts a job of `type` on a tenant's migration after checking the state machine (409s);
   * asking again while the same job type runs returns the running job's id.
   * @example runner.start('demo-broker', migrationId, 'ValidateStaging') // '3f1c…' (job id)
   */
  start(brokerKey: string, migrationId: string, type: JobType): string {
    const { ctx, migrations, jobs } = this.parts;
    const { id, created } = ctx.db.transaction(() => {
      const m = migrations.get(brokerKey, migrationId);
      const running = jobs.runningOf(m.reference_id);
      const same = running.find((j) => j.job_type === type);
      if (same) return { id: same.reference_id, created: false };
      const other = running[0];
      const components = migrations.components(m.reference_id);
      const intent = type === 'ValidateStaging' ? 'validate' : type === 'Import' ? 'import' : 'count';
      if (type === 'Counts') {
        if (m.activity === 'Canceled') migrations.requireActive(m, intent);
        if (components.some((c) => c.import_status !== 'Completed')) {
          migrations.conflict(
            m,
            intent,
            `has importStatus ${overall(components.map((c) => c.import_status))}`,
            'counts are available once the import job has completed',
          );
        }
      } else {
        migrations.requireActive(m, intent);
        if (other) {
          migrations.conflict(
            m,
            intent,
            `is running a ${other.job_type} job (${other.reference_id})`,
            `poll GET /migration-assistance/jobs/${other.reference_id} until it is done`,
          );
        }
        if (components.some((c) => c.import_status !== 'Pending')) {
          migrations.conflict(m, intent, 'has started importing', 'staged data can no longer be validated or imported again');
        }
        if (type === 'Import') {
          const notReady = components.filter((c) => c.staging_status !== 'Completed');
          if (notReady.length > 0) {
            migrations.conflict(
              m,
              intent,
              `has stagingStatus ${notReady.map((c) => `${c.staging_status} for ${c.component}`).join(', ')}`,
              'run PUT …/jobs/validate-staging, fix the errors it reports and run it again until it passes (stagingStatus Completed)',
            );
          }
          for (const c of components) migrations.setImportStatus(m.reference_id, c.component, 'InProgress');
        }
      }
      const jobId = randomUUID();
      jobs.create(jobId, m.reference_id, brokerKey, type, m.staging_generation);
      return { id: jobId, created: true };
    })();
    if (created) this.launch(id);
    return id;
  }

  /** Resumes the jobs a previous run of the service left Running. */
  resumeAll(): void {
    for (const job of this.parts.jobs.running()) {
      this.parts.ctx.logger.info({ job: job.reference_id, type: job.job_type, cursor: job.cursor }, 'resuming migration job');
      this.launch(job.reference_id);
    }
  }

  /** The job as GET /migration-assistance/jobs/{id} shows it: 202 while running, else 200. */
  render(brokerKey: string, jobId: string): { status: 200 | 202; body: unknown } | undefined {
    const job = this.parts.jobs.get(jobId);
    if (!job || job.broker_key !== brokerKey) return undefined;
    if (job.state === 'Running') {
      return {
        status: 202,
        body: { referenceId: job.reference_id, componentsCompleted: JSON.parse(job.components_completed) as string[] },
      };
    }
    const result = JSON.parse(job.result!) as Record<string, unknown>;
    if (job.job_type === 'Counts') return { status: 200, body: result };
    return { status: 200, body: { ...result, errors: this.parts.jobs.errors(jobId) } };
  }

  private launch(jobId: string): void {
    const { ctx } = this.parts;
    ctx.background.run(async (signal) => {
      try {
        const job = this.parts.jobs.get(jobId)!;
        const outcome = await this.run(job, signal);
        if (outcome === 'paused') ctx.logger.info({ job: jobId }, 'migration job paused for shutdown; it resumes on the next start');
      } catch (err) {
        ctx.logger.error({ err, job: jobId }, 'migration job failed');
        try {
          this.fail(jobId, err as Error);
        } catch (failErr) {
          ctx.logger.error({ err: failErr, job: jobId }, 'could not record the failure of a migration job');
        }
      }
    });
  }

  private run(job: JobRow, signal: AbortSignal): Promise<JobOutcome> {
    switch (job.job_type) {
      case 'ValidateStaging':
        return this.validate(job, signal);
      case 'Import':
        return this.import(job, signal);
      case 'Counts':
        return this.counts(job);
    }
  }

  // -------------------------------------------------------------------------------------------
  // validate-staging

  private async validate(job: JobRow, signal: AbortSignal): Promise<JobOutcome> {
    const { ctx, staging, jobs, migrations } = this.parts;
    const mid = job.migration_id;
    const jobId = job.reference_id;
    this.markOthersCompleted(job);
    // Shared identities are a property of the whole staging area: find them once per (re)start.
    // The record staged first is kept; each later one is refused naming it (docs/contract-gaps.md).
    // The dialect `duplicates=refuse-all` is a platform that keeps none: the first is refused
    // too, naming the second; no record of the group is then imported.
    const refuseAll = parseDialect(ctx.config.dialect).duplicates === 'refuse-all';
    const twinOf = new Map<string, { other: string; kept: boolean }>();
    for (const [first, ...later] of staging.duplicates(mid)) {
      for (const id of later) twinOf.set(id, { other: first!, kept: !refuseAll });
      if (refuseAll) twinOf.set(first!, { other: later[0]!, kept: false });
    }
    const targetExists = (id: string) => staging.exists(mid, id) || liveCounterpartyExists(ctx.db, job.broker_key, id);

    const step = ctx.db.transaction((rows: Array<{ id: number; reference_id: string; data: string }>, processed: number) => {
      const errors: ValidationError[] = [];
      for (const row of rows) {
        const record = JSON.parse(row.data) as StagedCounterparty;
        const issues: ValidationIssue[] = checkStagedRecord(record, targetExists);
        const twin = twinOf.get(row.reference_id);
        const identity = twin ? identityOf(record) : undefined;
        if (twin) {
          issues.push({
            field: record.type === 'organisation' ? 'cocNumber' : 'surname,initials,dateOfBirth',
            message: 'DUPLICATE_IDENTITY',
            detail: `same ${record.type === 'organisation' ? 'cocNumber' : 'surname, initials and dateOfBirth'} (${identity}) as ${twin.other}, ${twin.kept ? 'staged earlier and kept' : 'refused as well: no record of a shared identity is kept'}`,
          });
        }
        if (issues.length === 0) continue;
        for (const i of issues)
          errors.push({
            component: COUNTERPARTIES,
            referenceId: row.reference_id,
            field: i.field,
            message: i.message,
            ...(i.message === 'DUPLICATE_IDENTITY' ? { duplicateOf: twin?.other, identity } : {}),
          });
        this.parts.log(mid, {
          component: COUNTERPARTIES,
          action: 'ValidatedStaging',
          logLevel: 'ERROR',
          entityReferenceIds: [row.reference_id],
          message: `validation ${jobId}: ${issues.map((i) => `${i.field} ${i.message}: ${i.detail}`).join('; ')}`,
        });
      }
      jobs.addErrors(jobId, errors);
      jobs.advance(jobId, rows[rows.length - 1]!.id, processed);
    });

    const walked = await this.walkStaged(job, signal, step);
    if (walked.outcome) return walked.outcome;
    const processed = walked.processed;

    ctx.db.transaction(() => {
      const errorCount = jobs.countErrors(jobId);
      const m = migrations.byId(mid)!;
      const isValid = errorCount === 0;
      const unchanged = m.staging_generation === job.staging_generation;
      const components = migrations.components(mid);
      const open = m.activity === 'Active' && components.every((c) => c.import_status === 'Pending');
      if (isValid && unchanged && open) for (const c of components) migrations.setStagingStatus(mid, c.component, 'Completed');
      const message = !isValid
        ? `validation ${jobId} found ${errorCount} error${errorCount === 1 ? '' : 's'} in ${processed} staged records; fix them and validate again`
        : unchanged
          ? `validation ${jobId} passed: ${processed} staged records; stagingStatus Completed, import may start`
          : `validation ${jobId} passed for ${processed} records, but staging changed while it ran; validate again`;
      this.parts.log(mid, {
        component: MIGRATION_COMPONENT,
        action: 'ValidatedStaging',
        logLevel: isValid && unchanged ? 'INFO' : 'WARN',
        message,
      });
      this.finish(
        jobId,
        { referenceId: jobId, jobType: 'ValidateStaging', isValid },
        components.map((c) => c.component),
      );
    })();
    return 'done';
  }

  // -------------------------------------------------------------------------------------------
  // import

  private async import(job: JobRow, signal: AbortSignal): Promise<JobOutcome> {
    const { ctx, staging, jobs, migrations } = this.parts;
    const mid = job.migration_id;
    const jobId = job.reference_id;
    const brokerKey = job.broker_key;
    this.markOthersCompleted(job);
    const targetExists = (id: string) => staging.exists(mid, id) || liveCounterpartyExists(ctx.db, brokerKey, id);
    // Data alterations (off by default, docs/fault-injection.md): the platform keeps some records other than staged, or loses them.
    const alterations = alterationsOf(ctx);
    const upsert = ctx.db.transaction((records: StagedCounterparty[]) => upsertLiveCounterparties(ctx.db, brokerKey, records, 'import'));

    const step = ctx.db.transaction((rows: Array<{ id: number; reference_id: string; data: string }>, processed: number) => {
      // kept: the record as the platform stores it (an alteration may change it, or lose it: undefined).
      const ready: Array<{ id: number; record: StagedCounterparty; kept: StagedCounterparty | undefined }> = [];
      const failed: Array<{ id: number; referenceId: string; why: string }> = [];
      for (const row of rows) {
        const record = JSON.parse(row.data) as StagedCounterparty;
        // Staged data may have lost a relation target since validation (a deleted record).
        const dangling = record.relations?.find((r) => !targetExists(r.to));
        if (dangling)
          failed.push({
            id: row.id,
            referenceId: row.reference_id,
            why: `relation ${dangling.type} targets ${dangling.to}, which is in neither staging nor live data`,
          });
        else ready.push({ id: row.id, record, kept: alterations.active ? alterations.apply(record) : record });
      }
      let imported: typeof ready = ready;
      // A record an alteration lost is counted imported and never stored.
      const stored = (rs: typeof ready) => rs.flatMap((r) => r.kept ?? []);
      try {
        upsert(stored(ready));
      } catch {
        // One record spoiled the chunk: import one at a time to find it and keep the others.
        imported = [];
        for (const r of ready) {
          try {
            upsert(stored([r]));
            imported.push(r);
          } catch (err) {
            failed.push({ id: r.id, referenceId: r.record.referenceId, why: (err as Error).message });
          }
        }
      }
      for (const r of imported) staging.setImportState(r.id, 'imported');
      for (const f of failed) staging.setImportState(f.id, 'failed');
      const errors: ImportError[] = failed.map((f) => ({
        component: COUNTERPARTIES,
        referenceId: f.referenceId,
        message: `IMPORT_FAILED: counterparty ${f.referenceId}: ${f.why}`,
      }));
      jobs.addErrors(jobId, errors);
      // Counted as they go: a COUNT per chunk would make the job quadratic in the staged records.
      migrations.setImportedCount(mid, COUNTERPARTIES, migrations.component(mid, COUNTERPARTIES)!.imported + imported.length);
      if (imported.length > 0) {
        this.parts.log(mid, {
          component: COUNTERPARTIES,
          action: 'ImportedEntities',
          logLevel: 'INFO',
          entityReferenceIds: imported.map((r) => r.record.referenceId),
          message: `import ${jobId}: ${imported.length} counterpart${imported.length === 1 ? 'y' : 'ies'} imported`,
        });
      }
      for (const e of errors) {
        this.parts.log(mid, {
          component: COUNTERPARTIES,
          action: 'ImportedEntities',
          logLevel: 'ERROR',
          entityReferenceIds: [e.referenceId!],
          message: `import ${jobId}: ${e.message}`,
        });
      }
      jobs.advance(jobId, rows[rows.length - 1]!.id, processed);
    });

    const walked = await this.walkStaged(job, signal, step);
    if (walked.outcome) return walked.outcome;

    ctx.db.transaction(() => {
      const components = migrations.components(mid);
      for (const c of components) migrations.setImportStatus(mid, c.component, 'Completed');
      migrations.complete(mid);
      const staged = components.reduce((n, c) => n + c.staged, 0);
      const imported = components.reduce((n, c) => n + c.imported, 0);
      const errorCount = jobs.countErrors(jobId);
      this.parts.log(mid, {
        component: MIGRATION_COMPONENT,
        action: 'ImportedEntities',
        logLevel: errorCount ? 'WARN' : 'INFO',
        message: `import ${jobId} completed: ${imported} of ${staged} staged entities imported${errorCount ? `, ${errorCount} failed` : ''}; migration Completed`,
      });
      this.finish(
        jobId,
        { referenceId: jobId, jobType: 'Import', status: 'Completed', numberOfStagedEntities: staged, numberOfImportedEntities: imported },
        components.map((c) => c.component),
      );
    })();
    return 'done';
  }

  // -------------------------------------------------------------------------------------------
  // counts

  private async counts(job: JobRow): Promise<JobOutcome> {
    const { ctx, staging, migrations } = this.parts;
    const mid = job.migration_id;
    await yieldToLoop();
    ctx.db.transaction(() => {
      const components = migrations.components(mid);
      const stagedOf = (c: { component: Component; staged: number }) => (c.component === COUNTERPARTIES ? staging.count(mid) : c.staged);
      const importedOf = (c: { component: Component; imported: number }) =>
        c.component === COUNTERPARTIES ? staging.countImported(mid) : c.imported;
      const counts = [
        {
          type: 'TotalEntity',
          headers: ['EntityType', 'Count'],
          stagedRows: components.map((c) => [ENTITY_OF[c.component], String(stagedOf(c))]),
          importedRows: components.map((c) => [ENTITY_OF[c.component], String(importedOf(c))]),
        },
      ];
      if (components.some((c) => c.component === COUNTERPARTIES)) {
        const byType = new Map(staging.countByType(mid).map((r) => [r.type, r]));
        const types = ['person', 'organisation'];
        counts.push({
          type: 'Counterparty',
          headers: ['Type', 'Count'],
          stagedRows: types.map((t) => [t, String(byType.get(t)?.staged ?? 0)]),
          importedRows: types.map((t) => [t, String(byType.get(t)?.imported ?? 0)]),
        });
      }
      this.parts.log(mid, {
        component: MIGRATION_COMPONENT,
        action: 'CountedEntities',
        logLevel: 'INFO',
        message: `counts ${job.reference_id}: ${counts[0]!.stagedRows.map(([e, n], i) => `${e} staged ${n}, imported ${counts[0]!.importedRows[i]![1]}`).join('; ')}`,
      });
      this.finish(
        job.reference_id,
        { referenceId: job.reference_id, jobType: 'Counts', counts },
        components.map((c) => c.component),
      );
    })();
    return 'done';
  }

  // -------------------------------------------------------------------------------------------

  /** Components without staged data (all but Counterparties) need no work: done at once. */
  private markOthersCompleted(job: JobRow): void {
    const others = this.parts.migrations
      .components(job.migration_id)
      .map((c) => c.component)
      .filter((c) => c !== COUNTERPARTIES);
    this.parts.jobs.setComponentsCompleted(job.reference_id, others);
  }

  private finish(jobId: string, result: object, componentsCompleted: string[]): void {
    this.parts.jobs.setComponentsCompleted(jobId, componentsCompleted);
    this.parts.jobs.finish(jobId, result);
  }

  /** The migration was canceled (or completed) under a running job: end it with an error. */
  /**
   * Walks the migration's staged rows after the job's cursor, a chunk at a time, one `step`
   * transaction per chunk (which also advances the persisted cursor), paced by the configured
   * job rate. Ends early with an outcome when the service shuts down (the job resumes on the
   * next start) or the migration stopped being active.
   */
  private async walkStaged(
    job: JobRow,
    signal: AbortSignal,
    step: (rows: StagedRow[], processed: number) => void,
  ): Promise<{ outcome?: JobOutcome; processed: number }> {
    const { staging, migrations } = this.parts;
    let cursor = job.cursor;
    let processed = job.processed;
    for (;;) {
      if (signal.aborted) return { outcome: 'paused', processed };
      const m = migrations.byId(job.migration_id)!;
      if (m.activity !== 'Active') return { outcome: this.stopped(job, m), processed };
      const rows = staging.after(job.migration_id, cursor, this.chunk);
      if (rows.length === 0) return { processed };
      processed += rows.length;
      step(rows, processed);
      cursor = rows[rows.length - 1]!.id;
      await this.pace(rows.length, signal);
    }
  }

  private stopped(job: JobRow, m: MigrationRow): JobOutcome {
    const message = `MIGRATION_NOT_ACTIVE: migration ${m.reference_id} became ${m.activity} while the job ran; the job stopped`;
    this.parts.ctx.db.transaction(() => this.finishWithError(job, message))();
    return 'done';
  }

  /** Records an unexpected failure as the job's result, so that polling ends. */
  private fail(jobId: string, err: Error): void {
    const job = this.parts.jobs.get(jobId);
    if (job?.state !== 'Running') return;
    this.parts.ctx.db.transaction(() => {
      this.finishWithError(job, `JOB_FAILED: ${err.message}`);
      this.parts.log(job.migration_id, {
        component: MIGRATION_COMPONENT,
        action: logActionOf(job.job_type),
        logLevel: 'ERROR',
        message: `job ${jobId} failed: ${err.message}`,
      });
    })();
  }

  private finishWithError(job: JobRow, message: string): void {
    const jobId = job.reference_id;
    const done = JSON.parse(job.components_completed) as string[];
    switch (job.job_type) {
      case 'ValidateStaging':
        this.parts.jobs.addErrors(jobId, [{ component: COUNTERPARTIES, referenceId: '', field: '', message }]);
        this.finish(jobId, { referenceId: jobId, jobType: 'ValidateStaging', isValid: false }, done);
        return;
      case 'Import': {
        this.parts.jobs.addErrors(jobId, [{ component: COUNTERPARTIES, message: `IMPORT_FAILED: ${message}` }]);
        const components = this.parts.migrations.components(job.migration_id);
        this.finish(
          jobId,
          {
            referenceId: jobId,
            jobType: 'Import',
            status: message.startsWith('MIGRATION_NOT_ACTIVE') ? 'Canceled' : 'Failed',
            numberOfStagedEntities: components.reduce((n, c) => n + c.staged, 0),
            numberOfImportedEntities: components.reduce((n, c) => n + c.imported, 0),
          },
          done,
        );
        return;
      }
      case 'Counts':
        this.finish(jobId, { referenceId: jobId, jobType: 'Counts', counts: [], error: message }, done);
    }
  }

  private async pace(records: number, signal: AbortSignal): Promise<void> {
    const rate = this.parts.ctx.config.jobRecordsPerSecond;
    try {
      if (rate) await sleep((records / rate) * 1000, undefined, { signal });
      else await yieldToLoop(undefined, { signal });
    } catch {
      /* aborted: the loop sees the signal and pauses */
    }
  }
}

function logActionOf(type: JobType) {
  return type === 'ValidateStaging'
    ? ('ValidatedStaging' as const)
    : type === 'Import'
      ? ('ImportedEntities' as const)
      : ('CountedEntities' as const);
}

/** The identity two records share, as the records give it: what a person fixing the export looks for. */
function identityOf(record: StagedCounterparty): string {
  if (record.type === 'organisation') return record.cocNumber;
  return [record.surnamePrefix, record.surname, record.initials, record.dateOfBirth].filter(Boolean).join(' ');
}
