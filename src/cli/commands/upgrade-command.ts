/**
 * `stagecoach upgrade <pipeline>`: rewrites a pipeline written for an earlier version of the
 * pipeline language, and its mappings, to the current version where that keeps their meaning
 * (src/pipeline/definition/upgrade.ts); prints each place changed.
 */
import type { Command } from 'commander';
import { printJson } from '../output.js';

export function registerUpgradeCommand(program: Command): void {
  program
    .command('upgrade')
    .description(
      'Rewrite a pipeline and its mappings to the current version of the pipeline language, keeping what they meant (comments and layout kept)',
    )
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/crm.yaml')
    .option('--dry-run', 'say what would change, write nothing')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, opts: { dryRun?: boolean; json?: boolean }) => {
      const { upgradePipeline } = await import('../../pipeline/definition/upgrade.js');
      const report = await upgradePipeline(file, { write: opts.dryRun !== true });
      if (opts.json) return printJson(report);
      if (report.files.length === 0) {
        process.stdout.write(`${report.pipeline} is written for pipeline language ${report.to}: nothing to upgrade\n`);
        return;
      }
      const verb = report.written ? 'upgraded' : 'would upgrade (--dry-run, nothing written)';
      process.stdout.write(`${verb} ${report.pipeline} from pipeline language ${report.from} to ${report.to}\n`);
      for (const f of report.files) {
        process.stdout.write(`  ${f.file}: ${f.sites.length === 0 ? 'states language ' + report.to : `${f.sites.length} place(s)`}\n`);
        for (const s of f.sites) process.stdout.write(`    ${s.line}:${s.column} ${s.change}: ${s.keep?.text ?? ''}\n`);
      }
    });
}
