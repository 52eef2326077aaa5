/**
 * The platform half of a migration on the command line: validate, import, counts, cancel,
 * logs [--follow], migrate <pipeline> (the whole chain), report, and demo. Each command parses
 * its flags, calls src/reconcile and prints; Ctrl-C aborts cleanly (exit 130) and the ledger
 * remembers a running job, so the same command again resumes it.
 */
import type { Command } from 'commander';
import pc from 'picocolors';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { addConnectionOptions, clientFromOptions, type ConnectionFlags } from '../connection.js';
import { printJson, STAGE_UNDECIDED_HELP } from '../output.js';
import { EXPECT_REFUSED_HELP, parseExpectedRefused, refusedShareLine, runRefused } from '../refused-share.js';
import { jobDisplay } from '../job-progress.js';
import { commandLogger, runDisplay } from '../progress.js';
import { StagecoachError } from '../../contract/errors.js';
import type { StreamFormat } from '../../contract/media.js';
import type { StagecoachClient } from '../../client/index.js';
import { isCanceledActivity } from '../../contract/migration.js';
import type { Ledger } from '../../ledger/index.js';
import { DEFAULT_LEDGER_FILE, type RunRow } from '../../ledger/types.js';
import type { CorrectionsFile } from '../../reconcile/corrections.js';
import type { ReconcileResult } from '../../reconcile/reconcile.js';
import { headline, parseTolerance, type ReconciliationReport } from '../../reconcile/report-model.js';
import { EXIT } from '../run.js';
import { correctionsNotes } from '../corrections-notes.js';
import type { AcceptRule } from '../../reconcile/verify/accept.js';
import { verificationHeadline, verificationLines } from '../../reconcile/verify/render-verification.js';
import type { VerificationReport } from '../../reconcile/verify/verification-model.js';

// The ledger (SQLite) and src/reconcile (the client, undici) are imported where a command runs,
// so that `stagecoach --help` and the commands without network start without loading them.

interface CommonFlags extends ConnectionFlags {
  ledger?: string;
  json?: boolean;
  pipeline?: string;
}

const seconds = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0)
    throw new StagecoachError('CONFIG_INVALID', `${name} expects a number of seconds above 0, got ${JSON.stringify(v)}`);
  return n;
};
const tolerance = (v: string) => {
  try {
    parseTolerance(v);
    return v;
  } catch (err) {
    throw new StagecoachError('CONFIG_INVALID', `--tolerance: ${(err as Error).message}`);
  }
};

/** Ctrl-C aborts the signal once; a second Ctrl-C leaves at once (the ledger is consistent at every write). */
async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onSigint = () => {
    if (ac.signal.aborted) process.exit(EXIT.interrupted);
    process.stderr.write('\ninterrupted; stopping (a running job keeps running on the service and is resumed next time)\n');
    ac.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    return await work(ac.signal);
  } catch (err) {
    if (ac.signal.aborted && !(err instanceof StagecoachError && err.code === 'ABORTED'))
      throw new StagecoachError('ABORTED', 'Interrupted', {}, { cause: err });
    throw err;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function withLedgerOption(command: Command): Command {
  return command.option('--ledger <file>', `ledger file (default ${DEFAULT_LEDGER_FILE})`);
}

/** The ledger's latest run attached to a migration; of one pipeline (its name or its file) when given. */
function latestRunWithMigration(ledger: Ledger, pipeline: string | undefined): RunRow | undefined {
  const same = (a: string, b: string) => relative(process.cwd(), a) === relative(process.cwd(), b);
  return ledger
    .runs()
    .filter((r) => r.migrationId && (!pipeline || r.pipeline === pipeline || same(r.pipelineFile, pipeline)))
    .at(-1);
}

/** The migration of the pipeline's latest run in the ledger (of any pipeline when none is named): `report` and `verify`. */
function ledgerMigrationOf(ledger: Ledger, pipeline: string | undefined): string {
  const last = latestRunWithMigration(ledger, pipeline);
  if (!last)
    throw new StagecoachError(
      'CONFIG_INVALID',
      pipeline
        ? `The ledger ${ledger.file} has no run of ${pipeline} attached to a migration`
        : `The ledger ${ledger.file} has no run attached to a migration yet; run a pipeline first`,
    );
  return last.migrationId!;
}

/**
 * The migration a step command works on: the argument; else the ledger's latest migration (of
 * `--pipeline` when given), which is what `run`/`migrate` last worked on here even once the
 * platform no longer calls it active; else the tenant's current one. Says which on stderr.
 */
async function migrationOf(
  client: StagecoachClient,
  ledger: Ledger | undefined,
  given: string | undefined,
  pipeline: string | undefined,
  signal: AbortSignal,
): Promise<string> {
  if (given) return given;
  const say = (text: string) => process.stderr.write(`${text}\n`);
  const run = ledger && latestRunWithMigration(ledger, pipeline);
  if (run) {
    say(`migration ${run.migrationId} (the latest in the ledger ${ledger.file}: run ${run.id} of ${run.pipeline})`);
    return run.migrationId!;
  }
  if (pipeline)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `No migration given and the ledger ${ledger?.file ?? DEFAULT_LEDGER_FILE} has no run of ${pipeline} attached to a migration; pass the migration reference id`,
    );
  const current = await client.migrations.current({ signal });
  if (!current)
    throw new StagecoachError(
      'MIGRATION_NOT_ACTIVE',
      `No migration given, the ledger ${ledger?.file ?? DEFAULT_LEDGER_FILE} has no run attached to a migration, and the tenant has no active migration; pass the migration reference id`,
    );
  say(`migration ${current.referenceId} (the tenant's current one; the ledger has none)`);
  return current.referenceId;
}

/** A corrections file's line: where it is, or why it could not be written (the export moved since the run). */
function correctionsLine(c: CorrectionsFile): string {
  if (c.unreadable)
    return `  corrections: ${pc.yellow('not written')} for ${c.source}: ${c.unreadable} (${c.rows} refused row(s), kept in the ledger and the report; \`stagecoach report\` run again where the export is writes them)`;
  return `  corrections: ${relative(process.cwd(), c.file) || c.file}  (${c.rows} refused row(s) of ${c.source} with their errors)`;
}

/** `[migration]` and `--pipeline` of the step commands: which migration when none is given. */
function withMigrationArgument(command: Command): Command {
  return command
    .argument('[migration]', "migration reference id (default: the ledger's latest migration, else the tenant's current one)")
    .option('--pipeline <name|file>', 'without a migration id: the latest migration of this pipeline in the ledger');
}

async function withClientAndLedger<T>(
  opts: CommonFlags,
  work: (client: StagecoachClient, ledger: Ledger, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const client = await clientFromOptions(opts);
  const { openLedger } = await import('../../ledger/index.js');
  const ledger = openLedger(opts.ledger ?? DEFAULT_LEDGER_FILE);
  try {
    return await interruptible((signal) => work(client, ledger, signal));
  } finally {
    ledger.close();
    await client.close();
  }
}

function printReportSummary(result: ReconcileResult): void {
  const r: ReconciliationReport = result.report;
  const t = r.totals;
  const head = headline(r);
  const lines = [
    // Balanced says every row is accounted for; with nothing imported yet, that comes first.
    head.state === 'pending'
      ? `${pc.bold('Reconciliation')} (tolerance ${r.tolerance}): ${pc.yellow(head.title.toLowerCase())}: ${head.text}`
      : `${pc.bold('Reconciliation')} ${r.balanced ? pc.green('balanced') : pc.red('NOT BALANCED')} (tolerance ${r.tolerance})`,
    `  source rows ${t.sourceRows} → mapped ${t.mapped} → accepted by staging ${t.staged} → valid ${t.valid} → imported ${t.imported}; unaccounted ${t.unaccounted}`,
  ];
  for (const p of r.problems) lines.push(`  ${pc.red('!')} ${p}`);
  const rel = (f: string) => relative(process.cwd(), f) || f;
  lines.push(`  report: ${rel(result.files.html)} (also .md, .json)`);
  for (const c of result.corrections) lines.push(correctionsLine(c));
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Repeatable option values, in order. */
const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The accept rules of --accept and --accept-file (docs/reconciliation.md). */
async function acceptRules(opts: { accept?: string[]; acceptFile?: string }): Promise<AcceptRule[]> {
  const { parseAcceptRules, readAcceptFile } = await import('../../reconcile/verify/accept.js');
  return [...(opts.acceptFile ? readAcceptFile(opts.acceptFile) : []), ...parseAcceptRules(opts.accept ?? [])];
}

function printVerification(v: VerificationReport): void {
  const head = verificationHeadline(v);
  process.stdout.write(`${v.passed ? pc.green(head) : pc.red(head)}\n${verificationLines(v).join('\n')}\n`);
}

export function registerMigrateCommands(program: Command): void {
  registerJobCommands(program);
  registerVerify(program);
  registerCancel(program);
  registerLogs(program);
  registerMigrate(program);
  registerReport(program);
  registerDemo(program);
}

function registerJobCommands(program: Command): void {
  const jobs = [
    {
      name: 'validate',
      describe:
        'Validate the staged data of a migration; refused records become invalid in the ledger, traced to their source rows (exit 1 when not valid)',
    },
    {
      name: 'import',
      describe: 'Import the staged data of a migration (only after a passing validation); records become imported in the ledger',
    },
    { name: 'counts', describe: 'Run a counts job: staged against imported, per entity type' },
  ] as const;
  for (const job of jobs) {
    const cmd = withMigrationArgument(program.command(job.name).description(job.describe));
    addConnectionOptions(withLedgerOption(cmd))
      .option(
        '--deadline <seconds>',
        'longest wait for the job (it keeps running on the service; run again to resume)',
        seconds('--deadline'),
      )
      .option('--json', 'print the job result as JSON')
      .action(async (given: string | undefined, opts: CommonFlags & { deadline?: number }) => {
        await withClientAndLedger(opts, async (client, ledger, signal) => {
          const migrationId = await migrationOf(client, ledger, given, opts.pipeline, signal);
          const { validateStep, importStep, countsStep } = await import('../../reconcile/chain.js');
          const display = jobDisplay({ migrations: client.migrations, json: opts.json });
          const step = { signal, onEvent: display.onEvent, ...(opts.deadline ? { jobDeadlineMs: opts.deadline * 1000 } : {}) };
          if (job.name === 'validate') {
            const v = await validateStep(client, ledger, migrationId, step).finally(display.done);
            if (opts.json) printJson(v);
            else {
              process.stdout.write(
                `${v.isValid ? pc.green('valid') : pc.red('not valid')}: ${v.errors.length} error(s) on ${new Set(v.errors.map((e) => e.referenceId)).size} record(s)\n`,
              );
              const recs = new Map(ledger.recordsByReferenceIds(v.errors.map((e) => e.referenceId)).map((r) => [r.referenceId, r]));
              for (const e of v.errors.slice(0, 20)) {
                const r = recs.get(e.referenceId);
                process.stdout.write(
                  `  ${r ? pc.cyan(`${r.provenance.file}:${r.provenance.line}`) : e.referenceId}  ${e.field}: ${e.message}\n`,
                );
              }
              if (v.errors.length > 20) process.stdout.write(`  … and ${v.errors.length - 20} more (stagecoach report writes them all)\n`);
            }
            if (!v.isValid) process.exitCode = EXIT.failed;
          } else if (job.name === 'import') {
            const r = await importStep(client, ledger, migrationId, step).finally(display.done);
            if (opts.json) printJson(r);
            else {
              process.stdout.write(
                `import ${r.status}: ${r.numberOfImportedEntities} of ${r.numberOfStagedEntities} staged entities imported\n`,
              );
              for (const e of r.errors) process.stdout.write(`  ${pc.red(e.component)}: ${e.message}\n`);
            }
            if (r.errors.length > 0) process.exitCode = EXIT.failed;
          } else {
            const r = await countsStep(client, ledger, migrationId, step).finally(display.done);
            if (opts.json) printJson(r);
            else {
              for (const t of r.counts) {
                process.stdout.write(`${pc.bold(t.type)}\n`);
                const imported = new Map(t.importedRows.map((row) => [row[0], row[1]]));
                for (const row of t.stagedRows)
                  process.stdout.write(
                    `  ${String(row[0]).padEnd(16)} staged ${String(row[1]).padStart(8)}   imported ${String(imported.get(row[0]) ?? '0').padStart(8)}\n`,
                  );
              }
            }
          }
        });
      });
  }
}

function registerCancel(program: Command): void {
  const cmd = withMigrationArgument(
    program.command('cancel').description('Cancel a migration (final: it cannot be reactivated, no job can run on it any more)'),
  );
  addConnectionOptions(withLedgerOption(cmd))
    .option('--json', 'print the migration as JSON')
    .action(async (given: string | undefined, opts: CommonFlags) => {
      const client = await clientFromOptions(opts);
      // Only when it exists: cancel must not leave a new empty ledger behind.
      const ledgerFile = opts.ledger ?? DEFAULT_LEDGER_FILE;
      const ledgerModule = existsSync(ledgerFile) ? await import('../../ledger/index.js') : undefined;
      const ledger = ledgerModule?.openLedger(ledgerFile);
      try {
        await interruptible(async (signal) => {
          const migrationId = await migrationOf(client, ledger, given, opts.pipeline, signal);
          const m = (await client.migrations.cancel(migrationId, { signal })) ?? (await client.migrations.get(migrationId, { signal }));
          // So that `status` and the report no longer present its records as staged.
          const canceled = isCanceledActivity(m.activity);
          if (ledger && canceled) ledger.migrationEnds.recordCanceled(migrationId);
          if (opts.json) printJson(m);
          else if (canceled) process.stdout.write(`migration ${migrationId} canceled (activity ${m.activity})\n`);
          if (!canceled) {
            // The platform took the request but does not show the migration canceled: the ledger
            // keeps its records as they were rather than guess, and says so.
            process.stderr.write(
              `stagecoach: the platform accepted the cancel of migration ${migrationId} but reports its activity as ${JSON.stringify(m.activity ?? null)}, expected Canceled; the ledger still counts it as not canceled: check it with \`stagecoach status\` and cancel again once the platform shows it canceled\n`,
            );
            process.exitCode = EXIT.failed;
          }
        });
      } finally {
        ledger?.close();
        await client.close();
      }
    });
}

function registerLogs(program: Command): void {
  const list = (v: string, prev: string[] = []) => [
    ...prev,
    ...v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ];
  const cmd = withMigrationArgument(
    program
      .command('logs')
      .description(
        'Print the migration log (the ledger keeps where it stopped, not the entries); --follow keeps waiting for new entries and resumes where it stopped, without gaps',
      ),
  );
  addConnectionOptions(withLedgerOption(cmd))
    .option('-f, --follow', 'keep following until Ctrl-C')
    .option('--from-start', 'print the whole log from its first entry (e.g. of a finished migration whose log was already read)')
    .option('--format <format>', 'stream format: json-seq or jsonl', 'json-seq')
    .option('--level <levels>', 'only these log levels (comma-separated: DEBUG, INFO, WARN, ERROR)', list)
    .option('--component <names>', 'only these components (comma-separated)', list)
    .option('--action <names>', 'only these actions (comma-separated)', list)
    .option('--after <timestamp>', 'only entries after this time')
    .option('--before <timestamp>', 'only entries before this time')
    .option('--continue-from <n>', 'start at this sequence number instead of where the ledger stopped', (v) => {
      const n = Number(v);
      // 0 is a position too: a platform may count its entries from 0.
      if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n))
        throw new StagecoachError('CONFIG_INVALID', `--continue-from expects a whole number from 0, got ${JSON.stringify(v)}`);
      return n;
    })
    .option('--json', 'print one entry a line as JSON')
    .action(
      async (
        given: string | undefined,
        opts: CommonFlags & {
          follow?: boolean;
          format: string;
          level?: string[];
          component?: string[];
          action?: string[];
          after?: string;
          before?: string;
          continueFrom?: number;
          fromStart?: boolean;
        },
      ) => {
        if (opts.fromStart && opts.continueFrom)
          throw new StagecoachError('CONFIG_INVALID', '--from-start and --continue-from both say where to start: give one');
        if (opts.format !== 'json-seq' && opts.format !== 'jsonl')
          throw new StagecoachError('CONFIG_INVALID', `--format expects json-seq or jsonl, got ${JSON.stringify(opts.format)}`);
        await withClientAndLedger(opts, async (client, ledger, signal) => {
          const migrationId = await migrationOf(client, ledger, given, opts.pipeline, signal);
          const continueFrom = opts.continueFrom;
          const query = {
            ...(opts.level ? { LogLevels: opts.level } : {}),
            ...(opts.component ? { Components: opts.component } : {}),
            ...(opts.action ? { Actions: opts.action } : {}),
            ...(opts.after ? { After: opts.after } : {}),
            ...(opts.before ? { Before: opts.before } : {}),
          };
          const colour = (level: string) =>
            level === 'ERROR' ? pc.red : level === 'WARN' ? pc.yellow : level === 'DEBUG' ? pc.dim : (s: string) => s;
          const { followLogs } = await import('../../reconcile/logs-follow.js');
          const out = await followLogs(client.migrations, ledger, migrationId, {
            follow: opts.follow === true,
            signal,
            format: opts.format as StreamFormat,
            query,
            ...(continueFrom !== undefined ? { continueFrom } : {}),
            ...(opts.fromStart ? { fromStart: true } : {}),
            onEntry: (e) => {
              if (opts.json) process.stdout.write(`${JSON.stringify(e)}\n`);
              else
                process.stdout.write(
                  `${String(e.sequenceNumber).padStart(6)}  ${e.timestamp}  ${colour(e.logLevel)(e.logLevel.padEnd(5))}  ${e.component}  ${e.action}  ${e.message}\n`,
                );
            },
          });
          if (opts.json) return;
          const entries = `${out.received} entr${out.received === 1 ? 'y' : 'ies'}`;
          if (opts.fromStart) process.stderr.write(`${entries} from the start\n`);
          else if (continueFrom !== undefined) process.stderr.write(`${entries} from ${continueFrom} on\n`);
          else
            process.stderr.write(
              `${out.received} new entr${out.received === 1 ? 'y' : 'ies'}; next read continues from ${out.continueFrom ?? 'the start'}${
                out.received === 0 && out.continueFrom !== undefined ? ' (--from-start prints the whole log)' : ''
              }\n`,
            );
        }).catch((err) => {
          // Ctrl-C is how --follow ends: not a failure
          if (opts.follow && err instanceof StagecoachError && err.code === 'ABORTED') return;
          throw err;
        });
      },
    );
}

function registerMigrate(program: Command): void {
  const cmd = program
    .command('migrate')
    .description(
      'Run a pipeline through the whole chain: stage → validate → import → verify → counts → report (exit 1 when refused by validation, when verification finds a difference or when the report does not balance)',
    )
    .argument('<pipeline>', 'pipeline file, e.g. pipelines/crm.yaml');
  addConnectionOptions(withLedgerOption(cmd))
    .option(
      '--corrections <path>',
      'stage only the rows of a corrections file or folder (repeatable; as run --corrections), then validate and import',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      '--drop-invalid',
      'delete records refused by validation from staging, validate again and import the rest (they stay invalid in the report and the corrections file)',
    )
    .option(
      '--tolerance <n|%>',
      'records the report may leave unaccounted: a count (3) or a share of the source rows (0.5%)',
      tolerance,
      '0',
    )
    .option('--out <dir>', 'folder of the report (default ./.stagecoach/reports/run-<id>)')
    .option('--allow-truncated', 'accept a source file that was cut off or holds no rows (default: exit 1, named in the report)')
    .option('--stage-undecided', STAGE_UNDECIDED_HELP)
    .option('--expect-refused <share>', EXPECT_REFUSED_HELP, parseExpectedRefused)
    .option(
      '--deadline <seconds>',
      'longest wait for each job (it keeps running on the service; run again to resume)',
      seconds('--deadline'),
    )
    .option('--json', 'print {run, chain, report, files} as JSON')
    .option(
      '--reveal',
      "show personal values in the report in the clear (a local working copy; default: the pipeline's privacy.reportValues)",
    )
    .option('--log-level <level>', 'pino log level of the run on stderr (default warn on a terminal, info otherwise)')
    .option('--no-verify', 'skip verifying, field by field, what the platform holds once the import is done')
    .option('--accept <rule>', 'a known platform normalisation verification accepts, e.g. surname:truncate=30 (repeatable)', collect)
    .option('--accept-file <file>', 'accept rules, one a line (docs/reconciliation.md)')
    .action(
      async (
        file: string,
        opts: CommonFlags & {
          verify: boolean;
          accept?: string[];
          acceptFile?: string;
          corrections?: string[];
          dropInvalid?: boolean;
          tolerance: string;
          out?: string;
          deadline?: number;
          reveal?: boolean;
          logLevel?: string;
          allowTruncated?: boolean;
          stageUndecided?: boolean;
          expectRefused?: number;
        },
      ) => {
        const accept = await acceptRules(opts);
        const client = await clientFromOptions(opts);
        const { migrate } = await import('../../reconcile/migrate.js');
        const display = jobDisplay({
          migrations: client.migrations,
          json: opts.json,
          ...(opts.logLevel ? { logger: commandLogger('migrate', opts.logLevel) } : {}),
        });
        // Staging first (seconds to minutes for a big export), then the jobs: the run's line
        // gives way to the jobs' when the first job event comes.
        const staging = runDisplay({ label: file, command: 'migrate', ...(opts.logLevel ? { level: opts.logLevel } : {}) });
        const onEvent: typeof display.onEvent = (e) => {
          staging.done();
          display.onEvent(e);
        };
        try {
          const result = await interruptible((signal) =>
            migrate({
              pipelineFile: file,
              client,
              signal,
              tolerance: opts.tolerance,
              onEvent,
              onProgress: staging.onProgress,
              logger: staging.logger,
              ...(opts.reveal ? { values: 'revealed' as const } : {}),
              ...(opts.ledger ? { ledgerFile: opts.ledger } : {}),
              ...(opts.corrections ? { corrections: opts.corrections } : {}),
              ...(opts.dropInvalid ? { dropInvalid: true } : {}),
              ...(opts.allowTruncated ? { allowTruncated: true } : {}),
              ...(opts.stageUndecided ? { stageUndecided: true } : {}),
              ...(opts.out ? { outDir: opts.out } : {}),
              ...(opts.deadline ? { jobDeadlineMs: opts.deadline * 1000 } : {}),
              verify: opts.verify,
              accept,
            }),
          ).finally(() => {
            staging.done();
            display.done();
          });
          const moved = refusedShareLine(runRefused(result.run), opts.expectRefused);
          if (opts.json) {
            printJson({
              run: result.run,
              chain: result.chain,
              report: result.reconcile.report,
              files: result.reconcile.files,
              corrections: result.reconcile.corrections,
            });
          } else {
            const r = result.run;
            process.stdout.write(
              `${pc.bold(`Run ${r.runId}`)} of ${r.pipeline} into migration ${r.migrationId}: ${r.rowsRead} rows read, ${r.staged} staged, ${r.skippedUnchanged} unchanged, ${r.rejected} rejected, ${r.failed} refused by staging\n`,
            );
            if (moved) process.stdout.write(`${pc.red(moved)}\n`);
            for (const note of correctionsNotes(r)) process.stdout.write(`  ${note}\n`);
            for (const f of r.readFailures ?? [])
              process.stdout.write(`${pc.red('read failure')} ${f} (accept it with --allow-truncated)\n`);
            if (!r.complete)
              process.stdout.write(
                `${pc.yellow('staging is not complete')} (records left in flight or unsent): run migrate again before validating\n`,
              );
            if (result.chain?.status === 'validation-failed') {
              const v = result.chain.validation;
              process.stdout.write(
                `${pc.red('validation refused')} ${new Set(v.errors.map((e) => e.referenceId)).size} record(s): import waits; fix them in the corrections file and run migrate --corrections <file>, or use --drop-invalid\n`,
              );
            } else if (result.chain) {
              const i = result.chain.import;
              process.stdout.write(
                `import ${i.status}: ${i.numberOfImportedEntities} of ${i.numberOfStagedEntities} staged entities imported${i.errors.length ? `, ${i.errors.length} error(s)` : ''}\n`,
              );
            }
            if (result.verification) printVerification(result.verification);
            printReportSummary(result.reconcile);
          }
          // More refused than expected: the export largely did not move, however the rest balanced.
          process.exitCode = moved ? EXIT.failed : result.exitCode;
        } finally {
          await client.close();
        }
      },
    );
}

function registerVerify(program: Command): void {
  const cmd = program
    .command('verify')
    .description(
      "Prove the data landed: compare every imported record's fields with what the platform holds now, and write the report with a Verification section (exit 1 when anything differs)",
    )
    .argument('[pipeline]', 'pipeline name or file: verify the migration of its latest run (default: the latest run of any pipeline)');
  addConnectionOptions(withLedgerOption(cmd))
    .option('--migration <id>', 'verify this migration')
    .option('--accept <rule>', 'a known platform normalisation to accept, e.g. surname:truncate=30 (repeatable)', collect)
    .option('--accept-file <file>', 'accept rules, one a line (docs/reconciliation.md)')
    .option('--tolerance <n|%>', 'records the report may leave unaccounted (as report)', tolerance, '0')
    .option('--out <dir>', 'folder of the report (default ./.stagecoach/reports/run-<id>)')
    .option('--json', 'print the verification as JSON')
    .option('--reveal', 'show personal values in the clear (a local working copy; default masked)')
    .action(
      async (
        pipeline: string | undefined,
        opts: CommonFlags & {
          migration?: string;
          accept?: string[];
          acceptFile?: string;
          tolerance: string;
          out?: string;
          reveal?: boolean;
        },
      ) => {
        const accept = await acceptRules(opts);
        const [{ openLedger }, { reconcile }, { verify }] = await Promise.all([
          import('../../ledger/index.js'),
          import('../../reconcile/reconcile.js'),
          import('../../reconcile/verify/index.js'),
        ]);
        const ledger = openLedger(opts.ledger ?? DEFAULT_LEDGER_FILE);
        const client = await clientFromOptions(opts);
        try {
          const migrationId = opts.migration ?? ledgerMigrationOf(ledger, pipeline);
          const values = opts.reveal ? { values: 'revealed' as const } : {};
          const verification = await interruptible((signal) => verify({ ledger, migrationId, client, accept, signal, ...values }));
          const result = await interruptible((signal) =>
            reconcile({
              ledger,
              migrationId,
              client,
              tolerance: opts.tolerance,
              signal,
              verification,
              ...values,
              ...(opts.out ? { outDir: opts.out } : {}),
            }),
          );
          if (opts.json) printJson(verification);
          else {
            printVerification(verification);
            const rel = (f: string) => relative(process.cwd(), f) || f;
            process.stdout.write(`  report: ${rel(result.files.html)} (also .md, .json)\n`);
          }
          // The proof needs no export, the corrections files do: say which could not be written.
          for (const c of result.corrections) if (c.unreadable) process.stderr.write(`${correctionsLine(c)}\n`);
          process.exitCode = verification.passed ? EXIT.ok : EXIT.failed;
        } finally {
          ledger.close();
          await client.close();
        }
      },
    );
}

function registerReport(program: Command): void {
  const cmd = program
    .command('report')
    .description(
      'Write the reconciliation report of a migration (Markdown, HTML, JSON) and the corrections files, from the ledger and the platform (exit 1 when it does not balance)',
    )
    .argument('[pipeline]', 'pipeline name or file: report on the migration of its latest run (default: the latest run of any pipeline)');
  addConnectionOptions(withLedgerOption(cmd))
    .option('--migration <id>', 'report on this migration')
    .option(
      '--tolerance <n|%>',
      'records the report may leave unaccounted: a count (3) or a share of the source rows (0.5%)',
      tolerance,
      '0',
    )
    .option('--out <dir>', 'folder of the report (default ./.stagecoach/reports/run-<id>)')
    .option('--offline', 'do not ask the platform for the migration object (use only what the ledger holds)')
    .option('--json', 'print the report as JSON')
    .option(
      '--reveal',
      "show personal values in the report in the clear (a local working copy; default: the pipeline's privacy.reportValues)",
    )
    .action(
      async (
        pipeline: string | undefined,
        opts: CommonFlags & { migration?: string; tolerance: string; out?: string; offline?: boolean; reveal?: boolean },
      ) => {
        const [{ openLedger }, { reconcile }] = await Promise.all([
          import('../../ledger/index.js'),
          import('../../reconcile/reconcile.js'),
        ]);
        const ledger = openLedger(opts.ledger ?? DEFAULT_LEDGER_FILE);
        const client = opts.offline ? undefined : await clientFromOptions(opts);
        try {
          const migrationId = opts.migration ?? ledgerMigrationOf(ledger, pipeline);
          const result = await interruptible((signal) =>
            reconcile({
              ledger,
              migrationId,
              tolerance: opts.tolerance,
              signal,
              ...(client ? { client } : {}),
              ...(opts.out ? { outDir: opts.out } : {}),
              ...(opts.reveal ? { values: 'revealed' as const } : {}),
            }),
          );
          if (opts.json) printJson(result.report);
          else printReportSummary(result);
          process.exitCode = result.report.balanced ? EXIT.ok : EXIT.failed;
        } finally {
          ledger.close();
          await client?.close();
        }
      },
    );
}

function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'Start the embedded service in this process and run the sample pipelines through the whole chain: stage, validate, import, counts, report (no setting needed; starts afresh each time)',
    )
    .option('--out <dir>', 'folder of the report (default ./.stagecoach/reports/demo)')
    .option('--json', 'print the report as JSON')
    .option('--expect-refused <share>', EXPECT_REFUSED_HELP, parseExpectedRefused)
    .action(async (opts: { out?: string; json?: boolean; expectRefused?: number }) => {
      // Loaded on use: the demo embeds the service, which no other command needs at start-up.
      const { runDemo } = await import('../../reconcile/demo.js');
      const result = await interruptible((signal) =>
        runDemo({
          signal,
          ...(opts.out ? { outDir: opts.out } : {}),
          onStep: (t) => !opts.json && process.stderr.write(`${pc.dim('›')} ${t}\n`),
        }),
      );
      const totals = result.reconcile.report.totals;
      const moved = refusedShareLine({ rows: totals.sourceRows, refused: totals.sourceRows - totals.imported }, opts.expectRefused);
      if (opts.json) {
        printJson(result.reconcile.report);
        if (moved) process.exitCode = EXIT.failed;
        return;
      }
      const t = totals;
      const v = result.reconcile.report.verification;
      const rel = (f: string) => relative(process.cwd(), f) || f;
      const lines = [
        pc.bold('stagecoach demo: the sample CRM export through the whole migration chain'),
        ...(moved ? [pc.red(`  ${moved}`)] : []),
        `  ${t.sourceRows} legacy rows read, ${t.mapped} mapped, ${t.sourceRows - t.mapped} rejected before upload`,
        `  ${t.staged} staged, ${t.staged - t.valid} refused by validation (removed from staging), ${t.imported} imported`,
        `  reconciliation: ${result.reconcile.report.balanced ? pc.green('balanced') : pc.red('NOT BALANCED')}, ${t.unaccounted} unaccounted`,
        ...(v ? [`  verification: ${v.passed ? pc.green(verificationHeadline(v)) : pc.red(verificationHeadline(v))}`] : []),
        `  report:      ${rel(result.reconcile.files.html)}  (and report.md, report.json)`,
        ...result.reconcile.corrections.map(correctionsLine),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      process.exitCode = result.reconcile.report.balanced && v?.passed !== false && !moved ? EXIT.ok : EXIT.failed;
    });
}
