/**
 * `stagecoach init <exports…>`: writes a pipeline and its mappings from the export files
 * themselves (src/init/), runs `plan` on them and prints what is left to decide.
 */
import type { Command } from 'commander';
import pc from 'picocolors';
import { relative } from 'node:path';
import { printJson } from '../output.js';

const rel = (f: string) => relative(process.cwd(), f) || f;

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      'Write a pipeline and one mapping per export from the export files themselves (sniffed, profiled, guessed), then plan it; nothing is sent',
    )
    .argument('<exports...>', 'export files (CSV, JSON, JSON Lines) or folders of them')
    .option('--out <dir>', 'folder to write pipeline.yaml and mappings/ into', '.')
    .option('--name <name>', "name of the pipeline (default: the out folder's name)")
    .option('--layout <file>', 'record layout of fixed-width exports: a COBOL copybook or a name,start,length CSV')
    .option('--rows <n>', 'profile at most n rows per file (default: all)', (v) => Number(v))
    .option('--force', 'overwrite files that exist')
    .option('--no-plan', 'do not run plan on what was written')
    .option('--json', 'print the result as JSON')
    .action(
      async (
        inputs: string[],
        opts: { out: string; name?: string; layout?: string; rows?: number; force?: boolean; plan: boolean; json?: boolean },
      ) => {
        const { initPipeline } = await import('../../init/index.js');
        const { stepDisplay } = await import('../progress.js');
        // Reading every row of every export twice (profile, then plan) takes seconds to minutes.
        const steps = {
          profile: stepDisplay({ label: 'init: profiling', unit: 'rows', quietWhenShort: true }),
          plan: stepDisplay({ label: 'init: planning', unit: 'rows', quietWhenShort: true }),
        };
        const result = await initPipeline({
          onProgress: (p) => {
            if (p.step === 'plan') steps.profile.done();
            steps[p.step].update(p.rowsRead, undefined, p.fraction);
          },
          inputs,
          outDir: opts.out,
          plan: opts.plan,
          ...(opts.name ? { name: opts.name } : {}),
          ...(opts.layout ? { layout: opts.layout } : {}),
          ...(opts.rows !== undefined && Number.isFinite(opts.rows) ? { maxRows: opts.rows } : {}),
          ...(opts.force ? { force: true } : {}),
        }).finally(() => {
          steps.profile.done();
          steps.plan.done();
        });
        if (opts.json) {
          printJson({
            pipelineFile: result.pipelineFile,
            todos: result.todos,
            sources: result.sources.map((s) => ({
              name: s.name,
              file: s.file,
              dialect: s.dialect,
              profile: s.profile,
              type: s.mapping.type,
              key: s.mapping.keyColumn,
              mappingFile: s.mappingFile,
              fields: s.mapping.fields.map((f) => f.name),
              unmapped: s.mapping.unmapped.map((u) => `${u.column}: ${u.reason}`),
            })),
            plan: result.plan,
          });
          return;
        }
        const out: string[] = [pc.bold(`Wrote ${rel(result.pipelineFile)}`)];
        for (const s of result.sources) {
          const d = s.dialect;
          const how =
            d.kind === 'csv'
              ? `CSV ${d.encoding}, ${JSON.stringify(d.delimiter)}, ${d.header ? 'header' : 'no header'}, ${d.lineEnd}`
              : d.kind === 'xlsx'
                ? `workbook, sheet ${JSON.stringify(d.sheet)}, header row ${d.headerRow}`
                : d.kind === 'fixed-width'
                  ? `fixed-width ${d.encoding}, ${d.length} characters, ${d.columns.length} columns ${d.named ? 'from the layout' : 'proposed (no layout)'}${d.header ? `, ${d.header} header line(s)` : ''}${d.trailer ? ', a trailer' : ''}`
                  : `${d.kind} ${d.encoding}${d.kind === 'json' && d.arrayPath ? ` at ${d.arrayPath}` : ''}`;
          out.push(
            `  ${pc.cyan(s.name)}  ${rel(s.file)}: ${how}; ${s.profile.rows.toLocaleString('en-US')} rows, ${s.profile.columns} columns → ${s.mapping.type}, key ${s.mapping.keyColumn ?? '(TODO)'}, ${s.mapping.fields.length} fields  (${rel(s.mappingFile)})`,
          );
          for (const u of s.mapping.unmapped) out.push(pc.dim(`      unmapped ${u.column}: ${u.reason}`));
        }
        const p = result.plan;
        if (p) {
          out.push('', pc.bold('Plan of what was written (nothing sent)'));
          out.push(
            `  rows read ${p.rowsRead}, mapped ${p.mapped}, rejected ${p.rejected}; rejected rows by their first reason (plan lists every reason a row has):`,
          );
          for (const [code, n] of Object.entries(p.rejectedByReason).sort((a, b) => b[1] - a[1]))
            out.push(`    ${code.padEnd(26)} ${String(n).padStart(7)}`);
        }
        out.push('', pc.bold(result.todos.length > 0 ? 'Left to decide' : 'Nothing left to decide that init could see'));
        for (const t of result.todos) out.push(`  ${pc.yellow('TODO')} ${t}`);
        out.push('', `Next: read the comments in ${rel(result.pipelineFile)} and its mappings, then`);
        out.push(`  stagecoach plan ${rel(result.pipelineFile)}        # rejects by reason, with file:line`);
        out.push(`  stagecoach migrate ${rel(result.pipelineFile)}     # stage, validate, import, report`);
        process.stdout.write(`${out.join('\n')}\n`);
      },
    );
}
