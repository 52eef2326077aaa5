/**
 * Personal data held on this machine, and its removal: the corrections files the ledger knows
 * of and the refused rows' values in the ledger, per pipeline, with when the pipeline's
 * retention settings (`privacy.retention`) let them go — counted from the moment the
 * migration's import finished. `purge` removes them at once (once the migration is complete,
 * or with `force`); `expiredOnly` removes only what retention says is due.
 */
import { rm } from 'node:fs/promises';
import { durationMs } from '../pipeline/definition/schema.js';
import type { PipelineDefinition } from '../pipeline/definition/load-pipeline.js';
import type { Ledger, WrittenFile } from '../ledger/index.js';
import { Redactor } from './redact.js';

export interface HeldData {
  pipeline: string;
  migrationId?: string;
  /** When the migration's import finished; retention counts from here. */
  completedAt?: string;
  files: WrittenFile[];
  /** Records whose errors hold the offending values (refused rows). */
  recordsWithValues: number;
  /** When retention removes each, once the migration is complete. */
  removeAfter?: { corrections: string; ledgerValues: string };
}

const DEFAULT_RETENTION = { corrections: '30d', ledgerValues: '30d' };

/**
 * What personal data the ledger and its files hold for a pipeline.
 * @example personalDataHeld(ledger, 'crm', def).files.map((f) => f.path)
 */
export function personalDataHeld(ledger: Ledger, pipeline: string, def?: PipelineDefinition): HeldData {
  const run = [...ledger.runs(pipeline)].reverse().find((r) => r.migrationId);
  const migrationId = run?.migrationId ?? undefined;
  const completedAt = migrationId ? ledger.jobs.importFinishedAt(migrationId) : undefined;
  const retention = def?.privacy.retention ?? DEFAULT_RETENTION;
  const after = (d: string) => new Date(Date.parse(completedAt!) + durationMs(d)).toISOString();
  return {
    pipeline,
    ...(migrationId ? { migrationId } : {}),
    ...(completedAt
      ? { completedAt, removeAfter: { corrections: after(retention.corrections), ledgerValues: after(retention.ledgerValues) } }
      : {}),
    files: ledger.writtenFiles.held(pipeline),
    recordsWithValues: ledger.writtenFiles.recordsWithValues(pipeline),
  };
}

export interface PurgeResult {
  pipeline: string;
  filesRemoved: string[];
  recordsScrubbed: number;
  /** Why nothing was removed, when nothing was. */
  kept?: string;
}

/**
 * Removes a pipeline's corrections files and the refused rows' values in the ledger.
 * @example await purge(ledger, 'crm', { def })            // the migration must be complete
 *          await purge(ledger, 'crm', { expiredOnly: true }) // only what retention says is due
 */
export async function purge(
  ledger: Ledger,
  pipeline: string,
  options: { def?: PipelineDefinition; force?: boolean; expiredOnly?: boolean; now?: Date } = {},
): Promise<PurgeResult> {
  const held = personalDataHeld(ledger, pipeline, options.def);
  const now = (options.now ?? new Date()).toISOString();
  if (!held.completedAt && !options.force)
    return {
      pipeline,
      filesRemoved: [],
      recordsScrubbed: 0,
      kept: `the migration${held.migrationId ? ` ${held.migrationId}` : ''} of ${pipeline} is not complete (no finished import)`,
    };
  const due = (what: 'corrections' | 'ledgerValues') =>
    !options.expiredOnly || (held.removeAfter !== undefined && held.removeAfter[what] <= now);
  const filesRemoved: string[] = [];
  if (due('corrections')) {
    for (const f of held.files) {
      await rm(f.path, { force: true });
      ledger.writtenFiles.markRemoved(f.path);
      filesRemoved.push(f.path);
    }
  }
  let recordsScrubbed = 0;
  if (due('ledgerValues')) {
    const masked = new Redactor({ mode: 'masked', keyIsPersonal: options.def?.privacy.legacyKeyIsPersonal ?? false });
    recordsScrubbed = ledger.writtenFiles.scrubRecordValues(pipeline, (message, field, value, code) =>
      masked.message(message, field, value, code),
    );
  }
  return { pipeline, filesRemoved, recordsScrubbed };
}
