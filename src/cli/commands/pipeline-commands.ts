/** Commands of this group are registered here as they are built. */
import type { Command } from 'commander';
import pc from 'picocolors';
import { loadPipeline, readPipeline, summarisePlan, type PlanSummary } from '../../pipeline/read-pipeline.js';
import { generateCrmSamples } from '../../pipeline/samples/generate-crm.js';
import { StagecoachError } from '../../contract/errors.js';

export function registerPipelineCommands(program: Command): void {
  registerPlanCommand(program);
  registerMapCommand(program);
  registerGenerateSamplesCommand(program);
}

// ---------------------------------------------------------------------------------------------
// plan, map, generate-samples (the pipeline's front half: reading, mapping, checks; no network)

const positiveInt = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new StagecoachError('CONFIG_INVALID', `${name} expects a whole number, got ${JSON.stringify(v)}`);
  return n;
};

function printPlan(s: PlanSummary): void {
  const out: string[] = [];
  const num = (n: number) => String(n).padStart(9);
  out.push(pc.bold(`Plan for ${s.pipeline} (${s.component}): read, mapped and checked, nothing sent`));
  out.push(`  rows read ${num(s.rowsRead)}   ${Object.entries(s.bySource).map(([k, v]) => `${k} ${v.rowsRead}`).join(', ')}`);
  out.push(`  mapped    ${num(s.mapped)}`);
  out.push(`  rejected  ${num(s.rejected)}`);
  const reasons = Object.entries(s.reasons).sort((a, b) => b[1] - a[1]);
  if (reasons.length > 0) {
    out.push('', pc.bold('Rejects by reason (a row can have several)'));
    for (const [code, n] of reasons) out.push(`  ${code.padEnd(26)} ${String(n).padStart(7)}`);
    out.push('', pc.bold('Examples'));
    for (const x of s.samples) {
      out.push(`  ${pc.cyan(`${x.file}:${x.line}`)}  ${x.code}  ${x.field || '(row)'}${x.value !== undefined ? ` = ${JSON.stringify(x.value).slice(0, 60)}` : ''}`);
      out.push(`      ${x.message}`);
    }
  }
  out.push('', `${s.rowsRead} rows in ${(s.elapsedMs / 1000).toFixed(1)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description('Dry run of a pipeline: read, map and check every row, send nothing; counts, rejects by reason, examples (exit 0 even with rejects, 2 when the pipeline is invalid)')
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/crm.yaml')
    .option('--json', 'print the summary as JSON')
    .option('--samples <n>', 'examples per reason code', positiveInt('--samples'), 5)
    .option('--corrections <file>', 'plan only the rows of a corrections file')
    .action(async (file: string, opts: { json?: boolean; samples: number; corrections?: string }) => {
      const def = await loadPipeline(file);
      const ac = new AbortController();
      const stop = () => ac.abort();
      process.once('SIGINT', stop);
      try {
        const summary = await summarisePlan(def, { signal: ac.signal, samplesPerReason: opts.samples, ...(opts.corrections ? { corrections: opts.corrections } : {}) });
        if (opts.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        else printPlan(summary);
      } finally {
        process.off('SIGINT', stop);
      }
    });
}

export function registerMapCommand(program: Command): void {
  program
    .command('map')
    .description('Show source rows next to their mapped records (or the reasons they are rejected)')
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/crm.yaml')
    .option('--sample <n>', 'how many rows to show', positiveInt('--sample'), 5)
    .option('--skip <n>', 'rows to pass over first', positiveInt('--skip'), 0)
    .option('--source <name>', 'only rows of this source')
    .option('--rejected', 'only rejected rows')
    .option('--json', 'one JSON object a line: {provenance, source, values, kind, record | reasons}')
    .action(async (file: string, opts: { sample: number; skip: number; source?: string; rejected?: boolean; json?: boolean }) => {
      const def = await loadPipeline(file);
      if (opts.source && !def.sources.some((s) => s.name === opts.source)) {
        throw new StagecoachError('CONFIG_INVALID', `--source ${opts.source}: ${def.file} has no such source, expected one of ${def.sources.map((s) => s.name).join(', ')}`);
      }
      let skipped = 0;
      let shown = 0;
      if (opts.sample === 0) return;
      for await (const r of readPipeline(def)) {
        if (opts.source && r.row.source !== opts.source) continue;
        if (opts.rejected && r.kind !== 'rejected') continue;
        if (skipped < opts.skip) {
          skipped++;
          continue;
        }
        const values = 'values' in r.row ? r.row.values : undefined;
        if (opts.json) {
          const line = { provenance: r.row.provenance, source: r.row.source, values, kind: r.kind, ...(r.kind === 'mapped' ? { referenceId: r.referenceId, record: r.record } : { reasons: r.reasons }) };
          process.stdout.write(`${JSON.stringify(line)}\n`);
        } else {
          const p = r.row.provenance;
          const head = `${p.file}:${p.line} (${r.row.source}${r.legacyKey !== undefined ? `, key ${r.legacyKey}` : ''})`;
          const out = [pc.bold(`── ${head} ${'─'.repeat(Math.max(0, 70 - head.length))}`)];
          out.push(pc.dim('source'));
          if (values) for (const [k, v] of Object.entries(values)) out.push(`  ${k.padEnd(22)} ${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)}`);
          else if ('raw' in r.row && r.row.raw !== undefined) out.push(`  ${r.row.raw}`);
          if (r.kind === 'mapped') {
            out.push(pc.dim(`mapped → ${r.referenceId}`));
            out.push(...JSON.stringify(r.record, null, 2).split('\n').map((l) => `  ${l}`));
          } else {
            out.push(pc.red('rejected'));
            for (const reason of r.reasons) out.push(`  ${reason.code}  ${reason.message}`);
          }
          process.stdout.write(`${out.join('\n')}\n\n`);
        }
        if (++shown >= opts.sample) break;
      }
    });
}

export function registerGenerateSamplesCommand(program: Command): void {
  program
    .command('generate-samples')
    .description('Write deterministic legacy CRM exports (klanten.csv, bedrijven.json) of any size, with planted defects and a runnable pipeline.yaml')
    .requiredOption('--persons <n>', 'persons in klanten.csv', positiveInt('--persons'))
    .option('--organisations <n>', 'organisations in bedrijven.json (default persons/5; 0: none)', positiveInt('--organisations'))
    .requiredOption('--out <dir>', 'folder to write into')
    .option('--seed <n>', 'seed of the generator', positiveInt('--seed'), 1)
    .option('--defects-per-10k <k>', 'defects planted per 10,000 rows, kinds in turn', positiveInt('--defects-per-10k'), 0)
    .option('--every-defect-once', 'plant one defect of each kind at fixed places instead (as in samples/crm)')
    .option('--encoding <name>', 'encoding of klanten.csv: utf-8 or windows-1252', 'utf-8')
    .option('--no-pipeline', 'do not write pipeline.yaml and the mapping copies')
    .action(async (opts: { persons: number; organisations?: number; out: string; seed: number; defectsPer10k: number; everyDefectOnce?: boolean; encoding: string; pipeline: boolean }) => {
      if (opts.encoding !== 'utf-8' && opts.encoding !== 'windows-1252') throw new StagecoachError('CONFIG_INVALID', `--encoding expects utf-8 or windows-1252, got ${JSON.stringify(opts.encoding)}`);
      const started = performance.now();
      const result = await generateCrmSamples({
        out: opts.out,
        persons: opts.persons,
        ...(opts.organisations !== undefined ? { organisations: opts.organisations } : {}),
        seed: opts.seed,
        defectsPer10k: opts.defectsPer10k,
        everyDefectOnce: opts.everyDefectOnce ?? false,
        encoding: opts.encoding,
        pipeline: opts.pipeline,
      });
      const seconds = (performance.now() - started) / 1000;
      process.stdout.write(`Wrote ${result.persons} persons, ${result.organisations} organisations, ${result.defects.length} planted defects (${(result.bytes / 1024 / 1024).toFixed(1)} MB in ${seconds.toFixed(1)} s)\n`);
      for (const f of result.files) process.stdout.write(`  ${f}\n`);
    });
}
