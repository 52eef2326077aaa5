/**
 * `stagecoach purge <pipeline>`: removes the personal data stagecoach keeps for a pipeline once
 * its migration is complete — the corrections files the ledger knows of, and the refused rows'
 * values in the ledger (docs/privacy.md). Also the "personal data held" lines of `status`.
 */
import type { Command } from 'commander';
import pc from 'picocolors';
import { relative } from 'node:path';
import { StagecoachError } from '../../contract/errors.js';
import type { Ledger } from '../../ledger/index.js';
import { DEFAULT_LEDGER_FILE } from '../../ledger/types.js';
import type { PipelineDefinition } from '../../pipeline/definition/load-pipeline.js';
import type { HeldData } from '../../privacy/index.js';
import { printJson } from '../output.js';
import { EXIT } from '../run.js';
import { existingLedgerFile } from '../ledger-file.js';

const rel = (f: string) => relative(process.cwd(), f) || f;

/** A pipeline's definition from its last run's file, for its privacy settings (undefined when it moved). */
export async function lastDefinition(ledger: Ledger, pipeline: string): Promise<PipelineDefinition | undefined> {
  const run = [...ledger.runs(pipeline)].pop();
  if (!run) return undefined;
  const { loadPipeline } = await import('../../pipeline/definition/load-pipeline.js');
  return loadPipeline(run.pipelineFile).catch(() => undefined);
}

/** The lines `status` prints of the personal data held for a pipeline. */
export function heldLines(h: HeldData): string[] {
  const out: string[] = [];
  if (h.files.length === 0 && h.recordsWithValues === 0) return out;
  out.push(pc.bold('personal data held locally'));
  for (const f of h.files) out.push(`  ${f.kind} file ${rel(f.path)} (${f.rows} row(s), written ${f.writtenAt})`);
  if (h.recordsWithValues > 0) out.push(`  refused rows' values in the ledger: ${h.recordsWithValues} record(s)`);
  out.push(
    h.removeAfter
      ? `  the migration completed ${h.completedAt}: retention removes the files after ${h.removeAfter.corrections}, the ledger's values after ${h.removeAfter.ledgerValues} (stagecoach purge ${h.pipeline} --expired), or now with stagecoach purge ${h.pipeline}`
      : `  kept until the migration is complete; then stagecoach purge ${h.pipeline} removes them`,
  );
  return out;
}

export function registerPrivacyCommands(program: Command): void {
  program
    .command('purge')
    .description(
      "Remove a pipeline's personal data kept locally: its corrections files and the refused rows' values in the ledger (exit 2 before its migration is complete, unless --force)",
    )
    .argument('<pipeline>', 'pipeline name, as status shows it')
    .option('--ledger <file>', `ledger file (default ${DEFAULT_LEDGER_FILE})`)
    .option('--expired', "remove only what the pipeline's retention settings say is due")
    .option('--force', 'remove even though the migration is not complete')
    .option('--json', 'print the result as JSON')
    .action(async (pipeline: string, opts: { ledger?: string; expired?: boolean; force?: boolean; json?: boolean }) => {
      const { openLedger } = await import('../../ledger/index.js');
      const { purge } = await import('../../privacy/index.js');
      const ledger = openLedger(existingLedgerFile(opts.ledger));
      try {
        if (!ledger.status().some((p) => p.pipeline === pipeline))
          throw new StagecoachError('CONFIG_INVALID', `the ledger ${ledger.file} holds no pipeline named ${pipeline}`);
        const def = await lastDefinition(ledger, pipeline);
        const result = await purge(ledger, pipeline, {
          ...(def ? { def } : {}),
          ...(opts.force ? { force: true } : {}),
          ...(opts.expired ? { expiredOnly: true } : {}),
        });
        if (opts.json) printJson(result);
        else if (result.kept) process.stdout.write(`${pc.yellow('nothing removed')}: ${result.kept}; --force removes it anyway\n`);
        else {
          for (const f of result.filesRemoved) process.stdout.write(`removed ${rel(f)}\n`);
          process.stdout.write(
            `removed the values of ${result.recordsScrubbed} refused record(s) from the ledger (codes, fields and file:line stay)\n`,
          );
        }
        if (result.kept) process.exitCode = EXIT.usage;
      } finally {
        ledger.close();
      }
    });
}
