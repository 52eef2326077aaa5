/** Commands of this group are registered here as they are built. */
import type { ChildTally } from '../../pipeline/checks/child-tally.js';
import type { Command } from 'commander';
import pc from 'picocolors';
import {
  checkConfiguration,
  ImpactTally,
  loadPipeline,
  readPipeline,
  summarisePlan,
  type PlanImpact,
  type PlanSummary,
} from '../../pipeline/read-pipeline.js';
import { generateCrmSamples } from '../../pipeline/samples/generate-crm.js';
import { StagecoachError } from '../../contract/errors.js';
import type { RunReport } from '../../pipeline/runner/index.js';
import type { CanceledRecords, PipelineStatus, RunRow } from '../../ledger/index.js';
import { DEFAULT_LEDGER_FILE, RECORD_STATES } from '../../ledger/types.js';
import { addConnectionOptions, resolveConnection, type ConnectionFlags } from '../connection.js';
import { EXIT, exitCodeFor } from '../run.js';
import { existingLedgerFile } from '../ledger-file.js';
import { printJson, printTable, STAGE_UNDECIDED_HELP } from '../output.js';
import { EXPECT_REFUSED_HELP, parseExpectedRefused, refusedShareLine, runRefused } from '../refused-share.js';
import { Redactor } from '../../privacy/index.js';
import { correctionsNotes } from '../corrections-notes.js';

// The runner and the ledger (undici, SQLite, pino) are imported by the commands that use them, not by plan or map.

export function registerPipelineCommands(program: Command): void {
  registerPlanCommand(program);
  registerMapCommand(program);
  registerGenerateSamplesCommand(program);
  registerRunCommand(program);
  registerStatusCommand(program);
}

// ---------------------------------------------------------------------------------------------
// plan, map, generate-samples (the pipeline's front half: reading, mapping, checks; no network)

const positiveInt = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new StagecoachError('CONFIG_INVALID', `${name} expects a whole number, got ${JSON.stringify(v)}`);
  return n;
};

/**
 * The plan's examples with values of personal fields shown as the pipeline's privacy settings say
 * (masked unless revealed: a plan has no migration, so no key to hash with).
 */
function redactSamples(s: PlanSummary, redactor: Redactor): PlanSummary {
  return {
    ...s,
    ...(s.impact ? { impact: redactImpact(s.impact, redactor) } : {}),
    samples: s.samples.map((x) => ({
      ...x,
      ...(x.value !== undefined ? { value: redactor.value(x.field, x.value, x.code) } : {}),
      ...(x.legacyKey !== undefined ? { legacyKey: redactor.legacyKey(x.legacyKey) } : {}),
      message: redactor.message(x.message, x.field, x.value, x.code),
      ...(x.trace !== undefined ? { trace: redactor.message(x.trace, x.field, x.value, x.code) } : {}),
    })),
  };
}

/** A staged record with each value shown as its field's class says (`addresses[0].postalCode` masked like a postcode). */
function redactRecord(value: unknown, redactor: Redactor, field = ''): unknown {
  if (Array.isArray(value)) return value.map((v, i) => redactRecord(v, redactor, `${field}[${i}]`));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactRecord(v, redactor, field ? `${field}.${k}` : k)]));
  // ids and the type say nothing about the person
  if (field === 'referenceId' || field === 'type' || value === undefined) return value;
  const shown = redactor.value(field, value);
  // a value shown as it is keeps its JSON type (a flag stays a boolean)
  return shown === (typeof value === 'string' ? value : JSON.stringify(value)) ? value : shown;
}

function redactImpact(impact: PlanImpact, redactor: Redactor): PlanImpact {
  const reasons = (list: PlanImpact['examples'][number]['after']['reasons']) =>
    list?.map((r) => ({
      ...r,
      ...(r.value !== undefined ? { value: redactor.value(r.field, r.value, r.code) } : {}),
      message: redactor.message(r.message, r.field, r.value, r.code),
    }));
  return {
    ...impact,
    examples: impact.examples.map((x) => ({
      ...x,
      legacyKey: redactor.legacyKey(x.legacyKey),
      before: {
        ...x.before,
        ...(x.before.reasons ? { reasons: reasons(x.before.reasons) } : {}),
        ...(x.before.remapped
          ? {
              remapped: {
                ...x.before.remapped,
                record: redactRecord(x.before.remapped.record, redactor),
                changes: x.before.remapped.changes.map((c) =>
                  'before' in c && 'after' in c
                    ? { field: c.field, ...redactor.change(c.field, c.before, c.after) }
                    : {
                        field: c.field,
                        ...('before' in c ? { before: redactor.value(c.field, c.before) } : {}),
                        ...('after' in c ? { after: redactor.value(c.field, c.after) } : {}),
                      },
                ),
              },
            }
          : {}),
      },
      after: {
        ...(x.after.record !== undefined ? { record: redactRecord(x.after.record, redactor) } : {}),
        ...(x.after.reasons ? { reasons: reasons(x.after.reasons) } : {}),
      },
    })),
  };
}

const shownValue = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

const IMPACT_HEADS: Record<PlanImpact['examples'][number]['kind'], string> = {
  changed: 'changed: on the platform, the mapping now makes another record (sent again)',
  again: 'not on the platform yet: refused, failed or unsent before (sent)',
  nowRefused: 'on the platform, now refused before upload (not sent; the platform keeps what it has)',
};

function printImpact(i: PlanImpact, out: string[]): void {
  const num = (n: number) => String(n).padStart(9);
  const ended = i.newMigration?.after;
  out.push(
    '',
    pc.bold(
      `Compared with the ledger ${i.ledger}${
        i.migrationId ? ` (migration ${i.migrationId})` : ended ? '' : ' (no run staged anything yet)'
      }`,
    ),
  );
  if (ended)
    out.push(
      `  migration ${ended.migrationId} was ${ended.how === 'completed' ? 'completed (imported)' : 'canceled'} ${ended.at} and takes no more records:`,
      '  a run registers a new migration and sends every mapped record into it',
    );
  out.push(`  changed   ${num(i.changed)}   already staged, would be sent again`);
  out.push(`  new       ${num(i.new)}   not in the ledger`);
  out.push(
    `  again     ${num(i.again)}   ${
      ended ? `in the ledger, sent again into the new migration` : 'in the ledger, not staged (refused, failed or unsent before)'
    }`,
  );
  out.push(`  unchanged ${num(i.unchanged)}   staged with this content, not sent`);
  if (i.nowRefused > 0) out.push(`  now refused ${String(i.nowRefused).padStart(7)}   staged before, refused now (not sent)`);
  if (i.keptCorrected > 0)
    out.push(`  corrected ${num(i.keptCorrected)}   export rows a corrections file replaced, unchanged since (not sent)`);
  out.push(`  a run would send ${i.toSend} records`);
  for (const kind of ['changed', 'again', 'nowRefused'] as const) {
    const examples = i.examples.filter((x) => x.kind === kind);
    if (examples.length === 0) continue;
    out.push('', pc.bold(`  ${IMPACT_HEADS[kind]}`));
    for (const x of examples) {
      out.push(`  ${pc.cyan(`${x.file}:${x.line}`)}  key ${x.legacyKey}`);
      const refused = x.before.reasons?.map((r) => r.message).join('; ');
      const remapped = x.before.remapped;
      if (remapped) {
        out.push(`      ${x.before.state}; mapped as run ${remapped.run} did, then as now:`);
        for (const c of remapped.changes) out.push(`      ${c.field}: ${shownValue(c.before)} → ${shownValue(c.after)}`);
        continue;
      }
      out.push(`      before: ${x.before.state}${refused ? `, ${refused}` : ''} (the ledger keeps no record content, only its hash)`);
      if (x.after.record !== undefined) out.push(`      after:  ${JSON.stringify(x.after.record)}`);
      for (const r of x.after.reasons ?? []) out.push(`      after:  refused, ${r.message}`);
    }
  }
}

function printPlan(s: PlanSummary, note: string): void {
  const out: string[] = [];
  const num = (n: number) => String(n).padStart(9);
  out.push(pc.bold(`Plan for ${s.pipeline} (${s.component}): read, mapped and checked, nothing sent`));
  out.push(
    `  rows read ${num(s.rowsRead)}   ${Object.entries(s.bySource)
      .map(([k, v]) => `${k} ${v.rowsRead}`)
      .join(', ')}`,
  );
  out.push(`  mapped    ${num(s.mapped)}`);
  out.push(`  rejected  ${num(s.rejected)}`);
  const reasons = Object.entries(s.reasons).sort((a, b) => b[1] - a[1]);
  if (reasons.length > 0) {
    out.push('', pc.bold('Rejects by reason (a row can have several)'));
    for (const [code, n] of reasons) out.push(`  ${code.padEnd(26)} ${String(n).padStart(7)}`);
    out.push('', pc.bold('Examples'));
    for (const x of s.samples) {
      out.push(
        `  ${pc.cyan(`${x.file}:${x.line}`)}  ${x.code}  ${x.field || '(row)'}${x.value !== undefined ? ` = ${JSON.stringify(x.value).slice(0, 60)}` : ''}`,
      );
      out.push(`      ${x.message}`);
      if (x.trace !== undefined) out.push(pc.dim(`      made by: ${x.trace}`));
    }
  }
  if (s.files.length > 0) {
    out.push('', pc.bold('Files, counted apart from the parser (physical lines / blank / header / rows / errors)'));
    for (const f of s.files)
      out.push(
        `  ${pc.cyan(f.file)}  ${f.physicalLines} / ${f.blankLines} / ${f.headerLines} / ${f.rowsRead} / ${f.rowErrors}${f.items !== undefined ? `  (${f.items} array items)` : ''}`,
      );
    for (const d of s.disagreements) out.push(pc.red(`  not accounted for: ${d}`));
  }
  if (s.children) printChildTallies(s.children, out);
  if (s.impact) printImpact(s.impact, out);
  out.push('', `${s.rowsRead} rows in ${(s.elapsedMs / 1000).toFixed(1)} s`);
  if (s.samples.length > 0 || (s.impact?.examples.length ?? 0) > 0) out.push(pc.dim(note));
  process.stdout.write(`${out.join('\n')}\n`);
}

/** What became of each child source's rows: read → attached → with a mapped parent, and the refused. */
function printChildTallies(children: readonly ChildTally[], out: string[]): void {
  out.push(
    '',
    pc.bold('Child sources (rows read / attached / with a mapped parent / with a refused parent / duplicates / orphans / unreadable)'),
  );
  for (const t of children)
    out.push(
      `  ${pc.cyan(t.source)} → ${t.of}.${t.into}  ${t.rowsRead} / ${t.attached} / ${t.withMappedParent} / ${t.withRefusedParent} / ${t.duplicates} / ${t.orphans} / ${t.rowErrors}${t.settledBefore ? `  (${t.settledBefore} with parents settled before)` : ''}`,
    );
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'Dry run of a pipeline: read, map and check every row, send nothing; counts, rejects by reason, examples (exit 0 even with rejects, 2 when the pipeline is invalid)',
    )
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/crm.yaml')
    .option('--json', 'print the summary as JSON')
    .option('--samples <n>', 'examples per reason code', positiveInt('--samples'), 5)
    .option('--corrections <path>', 'plan only the rows of a corrections file or folder (repeatable)', (v: string, prev: string[] = []) => [
      ...prev,
      v,
    ])
    .option('--reveal', "show the examples' personal values in the clear (default: masked, docs/privacy.md)")
    .option('--stage-undecided', STAGE_UNDECIDED_HELP)
    .option(
      '--ledger [file]',
      `compare with the records a ledger holds: how many a run would send again (changed), send first (new), leave (unchanged); default ${DEFAULT_LEDGER_FILE}`,
    )
    .action(
      async (
        file: string,
        opts: {
          json?: boolean;
          samples: number;
          corrections?: string[];
          reveal?: boolean;
          ledger?: string | true;
          stageUndecided?: boolean;
        },
      ) => {
        const def = await loadPipeline(file);
        await checkConfiguration(def, undefined, { stageUndecided: opts.stageUndecided === true });
        const ac = new AbortController();
        const stop = () => ac.abort();
        process.once('SIGINT', stop);
        const ledgerFile = opts.ledger === true ? DEFAULT_LEDGER_FILE : opts.ledger;
        // SQLite is loaded only when a ledger is asked for.
        const held = ledgerFile
          ? (await import('../../ledger/index.js')).LedgerImpact.open(ledgerFile, def.name, def.component, {
              newMigration: def.target.migration === 'new',
            })
          : undefined;
        try {
          const impact = held && ledgerFile ? new ImpactTally(held, ledgerFile, Math.min(opts.samples, 3)) : undefined;
          const { stepDisplay } = await import('../progress.js');
          const progress = stepDisplay({ label: `plan ${file}`, unit: 'rows', quietWhenShort: true });
          const summary = await summarisePlan(def, {
            signal: ac.signal,
            samplesPerReason: opts.samples,
            onProgress: (p) => progress.update(p.rowsRead, undefined, p.fraction),
            ...(opts.corrections ? { corrections: opts.corrections } : {}),
            ...(impact ? { impact } : {}),
          }).finally(progress.done);
          await impact?.addBefore(def);
          const reveal = opts.reveal === true || def.privacy.reportValues === 'revealed';
          const redactor = new Redactor({ mode: reveal ? 'revealed' : 'masked', keyIsPersonal: def.privacy.legacyKeyIsPersonal });
          const shown = redactSamples(summary, redactor);
          if (opts.json) process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
          else printPlan(shown, redactor.describe());
        } finally {
          held?.close();
          process.off('SIGINT', stop);
        }
      },
    );
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
    .option('--stage-undecided', STAGE_UNDECIDED_HELP)
    .action(
      async (
        file: string,
        opts: { sample: number; skip: number; source?: string; rejected?: boolean; json?: boolean; stageUndecided?: boolean },
      ) => {
        const def = await loadPipeline(file);
        await checkConfiguration(def, undefined, { stageUndecided: opts.stageUndecided === true });
        if (opts.source && !def.sources.some((s) => s.name === opts.source)) {
          throw new StagecoachError(
            'CONFIG_INVALID',
            `--source ${opts.source}: ${def.file} has no such source, expected one of ${def.sources.map((s) => s.name).join(', ')}`,
          );
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
            const line = {
              provenance: r.row.provenance,
              source: r.row.source,
              values,
              kind: r.kind,
              ...(r.kind === 'mapped' ? { referenceId: r.referenceId, record: r.record } : { reasons: r.reasons }),
            };
            process.stdout.write(`${JSON.stringify(line)}\n`);
          } else {
            const p = r.row.provenance;
            const head = `${p.file}:${p.line} (${r.row.source}${r.legacyKey !== undefined ? `, key ${r.legacyKey}` : ''})`;
            const out = [pc.bold(`── ${head} ${'─'.repeat(Math.max(0, 70 - head.length))}`)];
            out.push(pc.dim('source'));
            if (values)
              for (const [k, v] of Object.entries(values))
                out.push(`  ${k.padEnd(22)} ${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)}`);
            else if ('raw' in r.row && r.row.raw !== undefined) out.push(`  ${r.row.raw}`);
            if (r.kind === 'mapped') {
              out.push(pc.dim(`mapped → ${r.referenceId}`));
              out.push(
                ...JSON.stringify(r.record, null, 2)
                  .split('\n')
                  .map((l) => `  ${l}`),
              );
            } else {
              out.push(pc.red('rejected'));
              for (const reason of r.reasons) out.push(`  ${reason.code}  ${reason.message}`);
            }
            process.stdout.write(`${out.join('\n')}\n\n`);
          }
          if (++shown >= opts.sample) break;
        }
      },
    );
}

export function registerGenerateSamplesCommand(program: Command): void {
  program
    .command('generate-samples')
    .description(
      'Write deterministic legacy CRM exports (klanten.csv, bedrijven.json) of any size, with planted defects and a runnable pipeline.yaml',
    )
    .requiredOption('--persons <n>', 'persons in klanten.csv', positiveInt('--persons'))
    .option('--organisations <n>', 'organisations in bedrijven.json (default persons/5; 0: none)', positiveInt('--organisations'))
    .requiredOption('--out <dir>', 'folder to write into')
    .option('--seed <n>', 'seed of the generator', positiveInt('--seed'), 1)
    .option('--defects-per-10k <k>', 'defects planted per 10,000 rows, kinds in turn', positiveInt('--defects-per-10k'), 0)
    .option('--every-defect-once', 'plant one defect of each kind at fixed places instead (as in samples/crm)')
    .option('--encoding <name>', 'encoding of klanten.csv: utf-8 or windows-1252', 'utf-8')
    .option('--no-pipeline', 'do not write pipeline.yaml and the mapping copies')
    .action(
      async (opts: {
        persons: number;
        organisations?: number;
        out: string;
        seed: number;
        defectsPer10k: number;
        everyDefectOnce?: boolean;
        encoding: string;
        pipeline: boolean;
      }) => {
        if (opts.encoding !== 'utf-8' && opts.encoding !== 'windows-1252')
          throw new StagecoachError('CONFIG_INVALID', `--encoding expects utf-8 or windows-1252, got ${JSON.stringify(opts.encoding)}`);
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
        process.stdout.write(
          `Wrote ${result.persons} persons, ${result.organisations} organisations, ${result.defects.length} planted defects (${(result.bytes / 1024 / 1024).toFixed(1)} MB in ${seconds.toFixed(1)} s)\n`,
        );
        for (const f of result.files) process.stdout.write(`  ${f}\n`);
      },
    );
}

// ---------------------------------------------------------------------------------------------
// run, status (the pipeline's back half: ledger, batches, uploads; docs/running.md)

/**
 * Test hook: `STAGECOACH_TEST_KILL_AFTER_BATCHES=n` makes the process SIGKILL itself at the n-th
 * batch event of the kind `STAGECOACH_TEST_KILL_AT` names (`in_flight`: the batch is in the
 * ledger, its PUT not sent; `answered`: the results are in, not yet in the ledger; `done`: the
 * results are in the ledger; default `done`), so end-to-end tests can crash a run at exact points.
 */
function testKillHook(env: NodeJS.ProcessEnv): ((e: { type: string }) => void) | undefined {
  const after = Number(env.STAGECOACH_TEST_KILL_AFTER_BATCHES);
  if (!Number.isInteger(after) || after < 1) return undefined;
  const at = env.STAGECOACH_TEST_KILL_AT ?? 'done';
  let seen = 0;
  return (e) => {
    if (e.type === at && ++seen === after) process.kill(process.pid, 'SIGKILL');
  };
}

const num = (v: number) => v.toLocaleString('en-US');
const byCode = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([code, count]) => `${code} ${num(count)}`)
    .join(', ');

function printRunReport(r: RunReport, expectedRefused?: number): void {
  const out: string[] = [];
  const status = r.status === 'completed' ? pc.green(r.status) : r.status === 'interrupted' ? pc.yellow(r.status) : pc.red(r.status);
  out.push(
    pc.bold(
      `Run ${r.runId} of ${r.pipeline} (${r.component}) into migration ${r.migrationId ?? '(none)'}${r.migrationCreated ? ' (created)' : ''}: `,
    ) + status,
  );
  const moved = refusedShareLine(runRefused(r), expectedRefused);
  if (moved) out.push(pc.red(moved));
  const row = (label: string, value: number, note = '') =>
    out.push(`  ${label.padEnd(20)} ${num(value).padStart(10)}${note ? `   ${note}` : ''}`);
  if (r.previousMigrationId)
    out.push(
      `  not into ${r.previousMigrationId}, the migration of ${r.pipeline}'s last run (no longer active): what it imported stays counted for it`,
    );
  if (r.resume)
    out.push(
      r.resume.mode === 'resumed'
        ? `  resumed at ${r.resume.file}:${r.resume.line} (byte ${num(r.resume.byteOffset ?? 0)}): ${r.resume.reason}`
        : `  read from the start: ${r.resume.reason}`,
    );
  if (r.corrections) out.push(`  corrections from ${r.corrections.files.join(', ')}`);
  for (const note of correctionsNotes(r)) out.push(`  ${note}`);
  row('rows read', r.rowsRead);
  row('mapped', r.mapped);
  row('rejected', r.rejected, r.rejected ? byCode(r.rejectedByReason) : '');
  row('unchanged', r.skippedUnchanged, r.skippedUnchanged ? 'already staged with the same content: not sent' : '');
  row('sent', r.sent, `in ${num(r.batches)} batch${r.batches === 1 ? '' : 'es'} (${(r.bytesSent / 1024 / 1024).toFixed(1)} MB)`);
  row('staged', r.staged);
  row('refused by staging', r.failed, r.failed ? byCode(r.failedByCode) : '');
  if (r.unconfirmed) row('unconfirmed', r.unconfirmed, 'uploads that did not finish: in_flight, sent again next run');
  if (r.unsent) row('not sent', r.unsent, 'mapped when the run stopped: sent next run');
  out.push(
    `  ${num(r.rowsRead)} rows in ${(r.durationMs / 1000).toFixed(1)} s (${num(r.recordsPerSecond)} rows/s)${r.retries !== undefined ? `, ${num(r.retries)} request retr${r.retries === 1 ? 'y' : 'ies'}` : ''}`,
  );
  out.push(
    `  ledger ${r.ledgerFile}: ${
      RECORD_STATES.filter((s) => r.ledger[s] > 0)
        .map((s) => `${s} ${num(r.ledger[s])}`)
        .join(', ') || 'empty'
    }`,
  );
  if (r.children) printChildTallies(r.children, out);
  for (const d of r.disagreements) out.push(pc.red(`  not accounted for: ${d}`));
  out.push('');
  if (r.readFailures.length > 0)
    out.push(
      pc.red(
        `Read failure: ${r.readFailures.join('; ')}. The rows before it are staged; fix the export (or accept it with --allow-truncated).`,
      ),
    );
  const refused = r.ledger.rejected + r.ledger.failed + r.ledger.invalid;
  if (r.status === 'completed' && r.complete) {
    out.push(
      pc.green('Everything that could be staged is staged.') +
        (refused
          ? ` ${num(refused)} record${refused === 1 ? ' was' : 's were'} refused, each with its reasons in the ledger (stagecoach status; fix and run again).`
          : ''),
    );
  } else if (r.status === 'completed') {
    out.push(pc.yellow('Not everything is staged yet: some records have no confirmed result. Run again to send them.'));
  } else if (r.status === 'interrupted') {
    out.push(pc.yellow('Interrupted. The ledger is consistent: run the same command again to continue.'));
  } else {
    out.push(pc.red(`Failed: ${r.error?.code}: ${r.error?.message}`));
    out.push('The ledger is consistent: run the same command again to continue once the cause is fixed.');
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The rows a run read and the rows it refused (before upload and by staging). */

/**
 * Exit code of `run`: 0 when everything that could be staged is staged (refused records are
 * data to fix, reported, not a failure of the run — unless --strict), 1 when records are left
 * without a confirmed result, a source file was cut off or held no rows (unless --allow-truncated)
 * or records were refused with --strict, 130 interrupted, else by the error.
 */
export function runExitCode(r: RunReport, strict = false, expectedRefused?: number): number {
  if (r.status === 'interrupted') return EXIT.interrupted;
  if (r.status === 'failed') return exitCodeFor(new StagecoachError(r.error?.code ?? 'INTERNAL_ERROR', r.error?.message ?? 'failed'));
  if (!r.complete) return EXIT.failed;
  if (r.readFailures.length > 0) return EXIT.failed;
  // More refused than expected: the export largely did not move, whatever else balanced.
  if (refusedShareLine(runRefused(r), expectedRefused)) return EXIT.failed;
  if (strict && r.ledger.rejected + r.ledger.failed + r.ledger.invalid > 0) return EXIT.failed;
  return EXIT.ok;
}

export function registerRunCommand(program: Command): void {
  const cmd = program
    .command('run')
    .description(
      'Run a pipeline: read, map, check, upload to staging of the current migration (created when there is none), every record in the ledger; run again to continue after any failure',
    )
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/crm.yaml')
    .option('--ledger <file>', `ledger file (default ${DEFAULT_LEDGER_FILE})`)
    .option('--corrections <path>', 'send only the rows of a corrections file or folder (repeatable)', (v: string, prev: string[] = []) => [
      ...prev,
      v,
    ])
    .option('--json', 'print the report as JSON')
    .option('--strict', 'exit 1 when any record was rejected or refused by staging')
    .option('--allow-truncated', 'accept a source file that was cut off or holds no rows (default: exit 1 and name it)')
    .option('--stage-undecided', STAGE_UNDECIDED_HELP)
    .option('--expect-refused <share>', EXPECT_REFUSED_HELP, parseExpectedRefused)
    .option('--log-level <level>', 'pino log level (default warn on a terminal, info otherwise)');
  addConnectionOptions(cmd).action(
    async (
      file: string,
      opts: ConnectionFlags & {
        ledger?: string;
        corrections?: string[];
        json?: boolean;
        strict?: boolean;
        allowTruncated?: boolean;
        stageUndecided?: boolean;
        expectRefused?: number;
        logLevel?: string;
      },
    ) => {
      const { sources: _sources, configFile: _configFile, ...connection } = resolveConnection(opts);
      const [{ runPipeline }, { runDisplay }] = await Promise.all([import('../../pipeline/runner/index.js'), import('../progress.js')]);
      const display = runDisplay({ label: file, ...(opts.logLevel ? { level: opts.logLevel } : {}) });
      const stop = new AbortController();
      const abort = new AbortController();
      const onSigint = () => {
        if (!stop.signal.aborted) {
          display.notice('Stopping: no more rows are read; uploads in flight finish and are recorded (Ctrl-C again to abort them)…');
          stop.abort();
        } else {
          display.notice('Aborting uploads in flight: their records stay in_flight and are sent again next run…');
          abort.abort();
        }
      };
      process.on('SIGINT', onSigint);
      const kill = testKillHook(process.env);
      try {
        const report = await runPipeline({
          pipelineFile: file,
          connection: { ...connection, logger: display.logger },
          ...(opts.ledger ? { ledgerFile: opts.ledger } : {}),
          ...(opts.corrections ? { corrections: opts.corrections } : {}),
          ...(opts.allowTruncated ? { allowTruncated: true } : {}),
          ...(opts.stageUndecided ? { stageUndecided: true } : {}),
          signal: abort.signal,
          stop: stop.signal,
          logger: display.logger,
          onProgress: display.onProgress,
          ...(kill ? { onBatch: kill } : {}),
        });
        display.done();
        if (opts.json) printJson(report);
        else printRunReport(report, opts.expectRefused);
        process.exitCode = runExitCode(report, opts.strict, opts.expectRefused);
      } finally {
        display.done();
        process.off('SIGINT', onSigint);
      }
    },
  );
}

function printStatus(ledgerFile: string, pipelines: PipelineStatus[], runs: RunRow[], canceled: CanceledRecords[]): void {
  if (pipelines.length === 0) {
    process.stdout.write(`The ledger ${ledgerFile} holds no pipeline yet.\n`);
    return;
  }
  for (const p of pipelines) {
    const run = p.lastRun;
    process.stdout.write(`${pc.bold(`${p.pipeline} (${p.component})`)}: ${num(p.records)} records in ${ledgerFile}\n`);
    // Records of a canceled migration are not staged (or invalid, in flight) on the platform any
    // more: they get a row of their own instead of counting under the state they had; those
    // imported in an earlier migration are live on the platform from that import, and count as
    // imported.
    const gone = canceled.filter((c) => c.pipeline === p.pipeline && c.component === p.component);
    const inCanceled = (state: string) => gone.filter((c) => c.state === state).reduce((n, c) => n + c.records, 0);
    const sum = (rows: readonly CanceledRecords[]) => rows.reduce((n, c) => n + c.records, 0);
    const liveEarlier = sum(gone.filter((c) => c.importedIn));
    const states = RECORD_STATES.map((s) => ({
      state: s as string,
      records: p.byState[s] - inCanceled(s) + (s === 'imported' ? liveEarlier : 0),
    }));
    const canceledTotal = sum(gone) - liveEarlier;
    if (canceledTotal > 0) states.push({ state: 'in a canceled migration', records: canceledTotal });
    printTable(states, [
      { header: 'State', value: (r) => r.state },
      { header: 'Records', value: (r) => num(r.records), align: 'right' },
    ]);
    for (const m of new Map(gone.map((c) => [c.migrationId, c])).values()) {
      const ofIt = gone.filter((c) => c.migrationId === m.migrationId);
      const records = sum(ofIt);
      const lost = sum(ofIt.filter((c) => !c.importedIn));
      const live = [...new Set(ofIt.flatMap((c) => (c.importedIn ? [c.importedIn] : [])))].map(
        (from) => `${num(sum(ofIt.filter((c) => c.importedIn === from)))} stay imported from migration ${from}, live on the platform`,
      );
      const held =
        live.length === 0
          ? 'the platform no longer holds them'
          : lost === 0
            ? `its staging area is gone; ${live.join('; ')}`
            : `the platform no longer holds ${num(lost)} of them; ${live.join('; ')}`;
      process.stdout.write(
        pc.yellow(
          `${num(records)} records were sent to migration ${m.migrationId}, canceled ${m.canceledAt}: ${held}; the next run stages them into a new migration.\n`,
        ),
      );
    }
    if (run)
      process.stdout.write(
        `last run ${run.id}: ${run.status}, started ${run.startedAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''}, migration ${run.migrationId ?? '(none)'}\n`,
      );
    if (p.lastBatch) {
      const b = p.lastBatch;
      process.stdout.write(
        `last batch ${b.id} (run ${b.run}): ${b.state}, ${num(b.records)} records, ${num(b.bytes)} bytes${b.error ? `, ${b.error}` : ''}\n`,
      );
    }
    const unconfirmed = p.byState.in_flight + p.byState.mapped - inCanceled('in_flight') - inCanceled('mapped');
    if (unconfirmed > 0)
      process.stdout.write(
        pc.yellow(`${num(unconfirmed)} records have no confirmed staging result: run the pipeline again to send them.\n`),
      );
    process.stdout.write('\n');
  }
  const rows = runs.map((r) => ({ r, report: (r.report ?? {}) as Partial<RunReport> }));
  printTable(rows, [
    { header: 'Run', value: (x) => x.r.id, align: 'right' },
    { header: 'Pipeline', value: (x) => x.r.pipeline },
    { header: 'Status', value: (x) => x.r.status },
    { header: 'Started', value: (x) => x.r.startedAt },
    { header: 'Migration', value: (x) => x.r.migrationId ?? '' },
    { header: 'Read', value: (x) => (x.report.rowsRead !== undefined ? num(x.report.rowsRead) : ''), align: 'right' },
    { header: 'Staged', value: (x) => (x.report.staged !== undefined ? num(x.report.staged) : ''), align: 'right' },
    { header: 'Unchanged', value: (x) => (x.report.skippedUnchanged !== undefined ? num(x.report.skippedUnchanged) : ''), align: 'right' },
    { header: 'Rejected', value: (x) => (x.report.rejected !== undefined ? num(x.report.rejected) : ''), align: 'right' },
    { header: 'Refused', value: (x) => (x.report.failed !== undefined ? num(x.report.failed) : ''), align: 'right' },
  ]);
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('What the ledger knows: per pipeline the records in each state, the last run and batch; the runs with their migration')
    .option('--ledger <file>', `ledger file (default ${DEFAULT_LEDGER_FILE})`)
    .option('--runs <n>', 'how many recent runs to list', positiveInt('--runs'), 10)
    .option('--json', 'print {ledger, pipelines, runs} as JSON')
    .action(async (opts: { ledger?: string; runs: number; json?: boolean }) => {
      const ledgerFile = existingLedgerFile(opts.ledger);
      const { openLedger } = await import('../../ledger/index.js');
      const ledger = openLedger(ledgerFile, { readonly: true });
      try {
        const pipelines = ledger.status();
        const canceled = ledger.migrationEnds.canceledRecords();
        const runs = ledger.runs().slice(-opts.runs);
        const { personalDataHeld } = await import('../../privacy/index.js');
        const { heldLines, lastDefinition } = await import('./privacy-commands.js');
        const held = [];
        for (const p of pipelines) {
          const def = await lastDefinition(ledger, p.pipeline);
          held.push(personalDataHeld(ledger, p.pipeline, def));
        }
        if (opts.json) printJson({ ledger: ledgerFile, pipelines, canceled, runs, personalData: held });
        else {
          printStatus(ledgerFile, pipelines, runs, canceled);
          const lines = held.flatMap((h) => {
            const l = heldLines(h);
            return l.length > 0 ? [`${h.pipeline}:`, ...l] : [];
          });
          if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
        }
      } finally {
        ledger.close();
      }
    });
}
