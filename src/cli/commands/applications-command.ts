/**
 * `stagecoach applications <pipeline>`: lodges the open loan applications of an applications
 * pipeline (component: Applications) as processes with one CleanOrder message each, and waits
 * for the platform's handling (src/pipeline/applications/). Run it again to continue after any
 * failure: the ledger says what is already lodged.
 */
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_LEDGER_FILE } from '../../ledger/types.js';
import { addConnectionOptions, clientFromOptions, type ConnectionFlags } from '../connection.js';
import { progressLine } from '../output.js';

export function registerApplicationsCommand(program: Command): void {
  const cmd = program
    .command('applications')
    .description(
      'Lodge open loan applications (a pipeline with component: Applications): build and check each CleanOrder message, lodge it once, wait for its handling',
    )
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/applications.yaml')
    .option('--ledger <file>', `ledger file (default ${DEFAULT_LEDGER_FILE})`)
    .option('--corrections-dir <dir>', 'where the corrections files go (default: corrections/ beside the ledger)')
    .option('--json', 'print the report as JSON');
  addConnectionOptions(cmd).action(
    async (file: string, opts: ConnectionFlags & { ledger?: string; correctionsDir?: string; json?: boolean }) => {
      const [{ loadApplicationsPipeline }, { runApplications, maskedReason }, { openLedgerDb }] = await Promise.all([
        import('../../pipeline/applications/definition.js'),
        import('../../reconcile/applications.js'),
        import('../../ledger/schema.js'),
      ]);
      const def = await loadApplicationsPipeline(file);
      const ledgerFile = opts.ledger ?? DEFAULT_LEDGER_FILE;
      const db = openLedgerDb(ledgerFile);
      const client = await clientFromOptions(opts);
      const progress = progressLine(); // on a terminal only: each application's step, then the wait for outcomes
      try {
        const report = await runApplications(def, client, db, {
          correctionsDir: opts.correctionsDir ?? join(dirname(ledgerFile), 'corrections'),
          onProgress: (text) => progress.update(text),
        });
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        } else {
          const out = [
            `${report.pipeline}: read ${report.read}, refused ${report.refused.length}, sent ${report.sent} (and ${report.alreadySent} sent before), handled: succeeded ${report.succeeded}, failed ${report.failed.length}, no outcome yet ${report.pending.length}`,
            ...report.refused.flatMap((r) => r.reasons.map((x) => `  refused ${x.code}: ${maskedReason(x.message)}`)),
            ...report.failed.map((f) => `  failed ${f.key}: ${JSON.stringify(f.errors)}`),
            ...report.corrections.map((c) => `  corrections: ${c.file} (${c.rows} row${c.rows === 1 ? '' : 's'})`),
          ];
          process.stdout.write(`${out.join('\n')}\n`);
        }
        // A failed handling is an outcome (in the ledger, with its reason); an application without one is unfinished.
        if (report.pending.length > 0) process.exitCode = 1;
      } finally {
        progress.done();
        db.close();
        await client.close();
      }
    },
  );
}
