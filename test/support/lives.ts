/**
 * The driver of the lives test (test/reliability/lives.test.ts): one seeded life of one
 * generated pipeline, driven through the real CLI against a real embedded service on loopback,
 * and after every step the same facts read from five independent sources — the ledger file
 * (SQLite, read-only), `status --json`, `plan --ledger --json` (before a run, checked again by
 * what the run sent), the reconciliation report (`report --json` and its corrections file) and
 * the platform through its own API (migration counters, staged records, a counts job, live
 * counterparties) — each compared with the model (lives-model.ts). Every disagreement is kept
 * with its step; a life stops at the first step that has one and says how to replay it.
 */
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse as parseCsv } from 'csv-parse/sync';
import type { StagecoachClient } from '../../src/client/index.js';
import { runCli, type CliResult } from './cli.js';
import { killWhen, seedIds, spawnCli } from './chaos.js';
import { demoClient } from './pipeline-run.js';
import { startTestService, tempDir, type TestService } from './service.js';
import {
  COL,
  LifeModel,
  advance,
  describeStep,
  drawLife,
  newKeyFor,
  readExportTruth,
  referenceIdOf,
  refusedEdits,
  type ExportRow,
  type PlanPrediction,
  type Step,
} from './lives-model.js';

/** The generated pipeline's referenceNamespace (generate-crm.ts writes this one). */
const NAMESPACE = '5b0c3f8e-2a4d-5e6f-8a9b-0c1d2e3f4a5b';
const PIPELINE = 'generated-crm';
/** Upload batches small and the platform a little slow, so a kill lands between batches. */
const BATCH = 20;
const WINDOW = 2;
const SLOW_STAGING = 'PUT /counterparty-management/*:latency=30-80';
/** The corrections file's columns after the export's: the error columns and the row's fingerprint. */
const TRAILING = ['error_field', 'error_code', 'error_message', 'error_stage', '_row_hash'];
const EXTRA = '_extra';

export interface LifeOptions {
  seed: number;
  persons: number;
  steps: number;
  /** The command that replays this life (printed with a failure). */
  replay: string;
}

export interface LifeOutcome {
  seed: number;
  steps: string[];
  /** Step index (0-based) and what disagreed there; empty when the life held. */
  disagreements: Array<{ step: number; what: string[] }>;
  seconds: number;
}

/** A life's failure message: seed, steps so far, what disagreed, how to replay. */
export function lifeFailure(o: LifeOutcome, replay: string): string {
  const at = o.disagreements[0]!;
  return [
    `life seed ${o.seed}: ${at.what.length} disagreement(s) after step ${at.step + 1}`,
    ...o.steps.slice(0, at.step + 1).map((s, i) => `  ${i + 1}. ${s}`),
    ...at.what.map((w) => `  ✗ ${w}`),
    `replay: ${replay}`,
  ].join('\n');
}

/** Runs one life to its end or to its first step with a disagreement. */
export async function liveLife(opts: LifeOptions): Promise<LifeOutcome> {
  const started = performance.now();
  const dir = tempDir('stagecoach-life-');
  const service = await startTestService({ faults: SLOW_STAGING });
  try {
    const gen = await runCli([
      'generate-samples',
      '--persons',
      String(opts.persons),
      '--organisations',
      '0',
      '--seed',
      String(opts.seed),
      '--defects-per-10k',
      '500',
      '--out',
      dir,
    ]);
    if (gen.code !== 0) throw new Error(`generate-samples failed: ${gen.stderr}`);
    appendFileSync(join(dir, 'pipeline.yaml'), `batching: { records: ${BATCH}, bytes: 4194304 }\nconcurrency: { inFlight: ${WINDOW} }\n`);
    const truth = readExportTruth(dir, NAMESPACE);
    const steps = drawLife(opts.seed, opts.steps, truth);
    const life = new Life(dir, service, new LifeModel(truth));
    await life.init();
    const outcome: LifeOutcome = { seed: opts.seed, steps: steps.map(describeStep), disagreements: [], seconds: 0 };
    for (let i = 0; i < steps.length; i++) {
      let what: string[];
      try {
        what = await life.step(i, steps[i]!);
      } catch (err) {
        what = [`the step threw: ${(err as Error).stack ?? String(err)}`];
      }
      if (what.length > 0) {
        outcome.disagreements.push({ step: i, what });
        break;
      }
    }
    return { ...outcome, seconds: Math.round((performance.now() - started) / 100) / 10 };
  } finally {
    await service.dispose();
    // STAGECOACH_LIVES_KEEP=1 keeps the life's folder (export, ledger, reports, corrections) to look at.
    if (process.env.STAGECOACH_LIVES_KEEP === '1') process.stdout.write(`[lives] seed ${opts.seed}: kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

interface CorrectionsRow {
  /** Cells before the export's columns (`_origin`, `_source`), as written. */
  leading: string[];
  /** The export's cells (a row refused for its width has the cells it has). */
  cells: string[];
  /** `_extra` (what did not fit the export's columns, when the file has it), the error columns and the row's fingerprint. */
  trailing: string[];
  /** The export's columns as the file holds them (a short row padded to the header, `_extra` saying so). */
  written: string[];
  /** The export row it was refused as, in the model. */
  row: ExportRow | undefined;
}

interface LedgerRecord {
  keyed: number;
  key: string;
  state: string;
  migration: string | null;
}

class Life {
  private readonly ledger: string;
  private readonly client: StagecoachClient;
  private seeds = new Set<string>();
  /** What went wrong in the current step. */
  private wrong: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly service: TestService,
    private readonly model: LifeModel,
  ) {
    this.ledger = join(dir, 'ledger.db');
    this.client = demoClient(service.url);
  }

  async init(): Promise<void> {
    this.seeds = await seedIds(this.client);
  }

  private get common(): string[] {
    return ['--ledger', this.ledger, '--base-url', this.service.url];
  }

  private cli(args: string[]): Promise<CliResult> {
    return runCli(args, { cwd: this.dir });
  }

  /** Records a disagreement when `actual` is not `expected` (compared as JSON). */
  private same(what: string, actual: unknown, expected: unknown): void {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    if (a !== e) this.wrong.push(`${what}: expected ${e}, got ${a}`);
  }

  private exit(what: string, res: CliResult, expected: number): void {
    if (res.code !== expected)
      this.wrong.push(
        `${what} exited ${res.code} (expected ${expected}): ${(
          res.stderr
            .split('\n')
            .filter((l) => !l.startsWith('{'))
            .join(' ') || res.stdout
        ).slice(0, 600)}`,
      );
  }

  private json<T>(what: string, res: CliResult): T | undefined {
    try {
      return JSON.parse(res.stdout) as T;
    } catch {
      this.wrong.push(`${what} printed no JSON (exit ${res.code}): ${res.stderr.slice(0, 300)}`);
      return undefined;
    }
  }

  async step(index: number, step: Step): Promise<string[]> {
    this.wrong = [];
    await this.act(index, step);
    advance(this.model, step);
    if (this.wrong.length === 0) await this.check(index);
    return this.wrong;
  }

  // -------------------------------------------------------------------------------------------
  // Acting

  private async act(index: number, step: Step): Promise<void> {
    switch (step.kind) {
      case 'run':
        return this.plainRun('run');
      case 'run-killed':
        return this.killedRun(step.killAfterBatches!);
      case 'migrate':
        return this.plainRun('migrate');
      case 'migrate-drop-invalid':
        return this.plainRun('migrate', ['--drop-invalid']);
      case 'mapping-change': {
        const file = join(this.dir, 'mappings', 'crm-persons.yaml');
        const text = readFileSync(file, 'utf8');
        const from = this.model.upperHouseNumber ? '[collapse-spaces, upper] }' : '[collapse-spaces] }';
        const to = this.model.upperHouseNumber ? '[collapse-spaces] }' : '[collapse-spaces, upper] }';
        const line = /^(\s*houseNumber: \{ column: huisnummer, transforms: )(.*)$/m;
        if (line.exec(text)?.[2] !== from) throw new Error(`the mapping's houseNumber line is not as expected: ${line.exec(text)?.[0]}`);
        writeFileSync(file, text.replace(line, `$1${to}`));
        // plan --ledger must see the change before the run sends it (the model flips after the step).
        this.model.upperHouseNumber = !this.model.upperHouseNumber;
        try {
          return await this.plainRun('run');
        } finally {
          this.model.upperHouseNumber = !this.model.upperHouseNumber;
        }
      }
      case 'corrections-run':
      case 'corrections-migrate':
        return this.corrections(index, step);
      case 'cancel': {
        const res = await this.cli(['cancel', ...this.common]);
        return this.exit('cancel', res, 0);
      }
      case 'new-migration': {
        const file = join(this.dir, 'pipeline.yaml');
        const text = readFileSync(file, 'utf8');
        writeFileSync(file, text.replace(/^target:\n/m, 'target:\n  migration: new\n'));
        try {
          if (this.model.open) {
            const res = await this.cli(['run', 'pipeline.yaml', '--json', '--expect-refused', '100%', ...this.common]);
            this.exit('run with target.migration: new while a migration is active', res, 1);
            if (!/MIGRATION_ALREADY_ACTIVE|still Active/.test(res.stdout + res.stderr))
              this.wrong.push(`run with target.migration: new while a migration is active did not say why: ${res.stderr.slice(0, 300)}`);
            return;
          }
          return await this.plainRun('run');
        } finally {
          writeFileSync(file, text);
        }
      }
      case 'purge': {
        const res = await this.cli(['purge', PIPELINE, '--ledger', this.ledger]);
        return this.exit('purge', res, this.model.current?.activity === 'Completed' ? 0 : 2);
      }
    }
  }

  /** plan --ledger, then the run (or migrate): the prediction must be what the model says and what the run then sends. */
  private async plainRun(command: 'run' | 'migrate', extra: string[] = []): Promise<void> {
    if (command === 'migrate' && this.model.current?.activity === 'Completed') return this.migrateAgain(extra);
    const predicted = await this.checkPlan();
    const args =
      command === 'run'
        ? ['run', 'pipeline.yaml', '--json']
        : ['migrate', 'pipeline.yaml', '--json', '--expect-refused', '100%', '--out', join(this.dir, 'migrate-report')];
    const res = await this.cli([...args, ...extra, ...this.common]);
    this.exit(command, res, 0);
    const out = this.json<{ sent?: number; run?: { sent: number } }>(command, res);
    if (out && predicted)
      this.same(`${command} sent (plan --ledger predicted ${predicted.toSend})`, out.run?.sent ?? out.sent, predicted.toSend);
  }

  /** `migrate` once the latest migration was imported: it re-reports that migration and starts no run. */
  private async migrateAgain(extra: string[]): Promise<void> {
    const runs = this.lastRunId();
    const res = await this.cli([
      'migrate',
      'pipeline.yaml',
      '--json',
      '--expect-refused',
      '100%',
      '--out',
      join(this.dir, 'migrate-report'),
      ...extra,
      ...this.common,
    ]);
    this.exit('migrate after the import', res, this.model.reportBalances() ? 0 : res.code === 1 ? 1 : 0);
    this.same('runs in the ledger after a migrate of an imported migration (none new)', this.lastRunId(), runs);
  }

  /** `run`, SIGKILLed once `batches` upload batches of it are done, then `run` again to the end. */
  private async killedRun(batches: number): Promise<void> {
    await this.checkPlan();
    const run = spawnCli(['run', 'pipeline.yaml', '--expect-refused', '100%', ...this.common], { cwd: this.dir });
    const runsBefore = this.lastRunId();
    await killWhen(run, () => this.doneBatches(runsBefore) >= batches);
    const res = await this.cli(['run', 'pipeline.yaml', '--json', '--expect-refused', '100%', ...this.common]);
    this.exit('run after the kill', res, 0);
    const integrity = this.readLedger((db) => (db.pragma('integrity_check') as Array<{ integrity_check: string }>)[0]?.integrity_check);
    this.same('ledger integrity after the kill and the run again', integrity, 'ok');
  }

  private lastRunId(): number {
    if (!existsSync(this.ledger)) return 0;
    return this.readLedger((db) => (db.prepare('SELECT max(id) AS id FROM runs').get() as { id: number | null }).id ?? 0);
  }

  private doneBatches(afterRun: number): number {
    if (!existsSync(this.ledger)) return 0;
    return this.readLedger(
      (db) => (db.prepare("SELECT count(*) AS n FROM batches WHERE run > ? AND state = 'done'").get(afterRun) as { n: number }).n,
    );
  }

  /** `plan --ledger --json` against the model's prediction; returns what plan said a run would send. */
  private async checkPlan(): Promise<PlanPrediction | undefined> {
    if (!existsSync(this.ledger)) return this.model.planPrediction();
    const res = await this.cli(['plan', 'pipeline.yaml', '--ledger', this.ledger, '--json']);
    this.exit('plan --ledger', res, 0);
    const plan = this.json<{ impact?: { new: number; changed: number; again: number; unchanged: number; toSend: number } }>(
      'plan --ledger',
      res,
    );
    if (!plan) return undefined;
    const expected = this.model.planPrediction();
    if (!plan.impact) {
      this.wrong.push('plan --ledger printed no impact');
      return undefined;
    }
    const i = plan.impact;
    this.same(
      'plan --ledger impact (new, changed+again, unchanged, toSend)',
      [i.new, i.changed + i.again, i.unchanged, i.toSend],
      [expected.new, expected.changedOrAgain, expected.unchanged, expected.toSend],
    );
    return { new: i.new, changedOrAgain: i.changed + i.again, unchanged: i.unchanged, toSend: i.toSend };
  }

  /** report --out, the corrections file edited as the step says, handed back with run/migrate --corrections. */
  private async corrections(index: number, step: Step): Promise<void> {
    const out = join(this.dir, `corrections-${index + 1}`);
    const rep = await this.cli(['report', '--out', out, '--json', ...this.common]);
    if (rep.code === 2 || rep.code === null) return this.exit('report --out before the corrections', rep, 0);
    const file = join(out, 'klanten.corrections.csv');
    if (!existsSync(file)) {
      if (this.model.refusedRows().length > 0)
        this.wrong.push(`report --out wrote no ${file} with ${this.model.refusedRows().length} row(s) refused`);
      step.fix = { lines: [], newKeys: [], extraColumn: false };
      return;
    }
    const parsed = this.readCorrections(file);
    if (!parsed) return;
    const fix = step.fix!;
    // Fixes for rows the file does not hold (the model said refused, stagecoach did not) are dropped: that disagreement is already recorded.
    fix.lines = fix.lines.filter((l) => parsed.rows.some((r) => r.row?.line === l));
    fix.newKeys = fix.newKeys.filter((l) => parsed.rows.some((r) => r.row?.line === l));
    const lines = [[...parsed.header, ...(fix.extraColumn ? ['opmerking'] : [])]];
    const hasExtra = parsed.header.includes(EXTRA);
    const edits = fix.edits;
    if (edits) {
      // Edits of rows the file does not hold are dropped, like the fixes above.
      if (edits.copyLine !== undefined && !fix.lines.includes(edits.copyLine) && !fix.newKeys.includes(edits.copyLine))
        edits.copyLine = undefined;
      edits.dropLines = edits.dropLines.filter((l) => parsed.rows.some((r) => r.row?.line === l));
    }
    for (const r of parsed.rows) {
      if (r.row && edits?.dropLines.includes(r.row.line)) continue;
      // As written (a short row padded, `_extra` saying so); a fixed row holds the export's columns
      // exactly, and `_extra` emptied.
      let cells = [...r.written];
      const trailing = [...r.trailing];
      if (r.row && (fix.lines.includes(r.row.line) || fix.newKeys.includes(r.row.line))) {
        cells = [...r.cells];
        repair(cells, r.row);
        if (hasExtra) trailing[0] = '';
      }
      lines.push([...r.leading, ...cells, ...trailing, ...(fix.extraColumn ? ['nagekeken'] : [])]);
      // A fixed row copied below itself, the copy edited again: one record, two rows.
      if (r.row && edits?.copyLine === r.row.line) {
        const copy = [...cells];
        copy[COL.achternaam] = 'Kopie';
        lines.push([...r.leading, ...copy, ...trailing, ...(fix.extraColumn ? ['nagekeken'] : [])]);
      }
    }
    // Rows added by hand at the bottom: no _origin, no errors, no fingerprint.
    const blankLead = parsed.header.slice(0, parsed.header.indexOf('klantnr')).map(() => '');
    const blankTrail = parsed.header.slice(parsed.header.length - TRAILING.length - (hasExtra ? 1 : 0)).map(() => '');
    const addRow = (cells: string[]) => lines.push([...blankLead, ...cells, ...blankTrail, ...(fix.extraColumn ? [''] : [])]);
    if (edits?.addLive !== undefined) {
      const row = this.model.truth.rows.find((x) => x.key === edits.addLive && !x.defect)!;
      const cells = [...row.cells];
      cells[COL.achternaam] = 'Toegevoegd';
      addRow(cells);
    }
    if (edits?.addNew) {
      const cells = [...this.model.truth.rows.find((x) => !x.defect)!.cells];
      cells[COL.klantnr] = '990001';
      cells[COL.achternaam] = 'Nieuw';
      addRow(cells);
    }
    const fixed = join(this.dir, `fixed-${index + 1}.csv`);
    writeFileSync(fixed, `\uFEFF${lines.map((l) => l.map(csvCell).join(';')).join('\r\n')}\r\n`);
    const expectedSent = this.shadowSent(step);
    const command = step.kind === 'corrections-run' ? 'run' : 'migrate';
    const args =
      command === 'run'
        ? ['run', 'pipeline.yaml', '--json', '--expect-refused', '100%', '--corrections', fixed]
        : [
            'migrate',
            'pipeline.yaml',
            '--json',
            '--expect-refused',
            '100%',
            '--corrections',
            fixed,
            '--out',
            join(this.dir, 'migrate-report'),
          ];
    const res = await this.cli([...args, ...this.common]);
    this.exit(`${command} --corrections`, res, 0);
    type Out = { sent?: number; corrections?: { refused?: unknown[] } };
    const o = this.json<Out & { run?: Out }>(`${command} --corrections`, res);
    if (o) {
      this.same(`${command} --corrections sent`, o.run?.sent ?? o.sent, expectedSent);
      this.same(
        `${command} --corrections: rows refused against the ledger (added, copied)`,
        (o.run ?? o).corrections?.refused?.length ?? 0,
        refusedEdits(edits),
      );
    }
  }

  /** How many records the corrections step will send, by the model (a copy, not advanced). */
  private shadowSent(step: Step): number {
    return step.fix!.lines.length + step.fix!.newKeys.length;
  }

  /**
   * A corrections file, each row matched to the export row it was refused as (by its cells);
   * records a disagreement when the rows are not the model's refused rows. Columns before the
   * export's (`_origin`, `_source`) are kept as they are, like the error columns after them.
   */
  private readCorrections(file: string): { header: string[]; rows: CorrectionsRow[] } | undefined {
    const records = parseCsv(readFileSync(file), { delimiter: ';', bom: true, relax_column_count: true }) as string[][];
    const header = records[0]!;
    const lead = header.indexOf('klantnr');
    if (lead < 0) {
      this.wrong.push(`${file} has no klantnr column: ${header.join(';')}`);
      return undefined;
    }
    this.same(
      `${file}: columns before the export's are _-columns`,
      header.slice(0, lead).filter((h) => !h.startsWith('_')),
      [],
    );
    this.same(`${file}: columns after the export's`, header.slice(header.length - TRAILING.length), TRAILING);
    // `_extra`, right before the error columns, holds what of a row did not fit the export's columns.
    const end =
      header[header.length - TRAILING.length - 1] === EXTRA ? header.length - TRAILING.length - 1 : header.length - TRAILING.length;
    this.same(`${file}: the export's columns`, header.slice(lead, end).length, this.model.truth.rows[0]!.cells.length);
    const refused = this.model.refusedRows();
    const rows = records.slice(1).map((fields): CorrectionsRow => {
      const tail = fields.length - TRAILING.length - (end < header.length - TRAILING.length ? 1 : 0);
      const written = fields.slice(lead, tail);
      // A row with a cell too few is padded to the header, `_extra` saying `17 of 18 cells: 1 missing`.
      const width = /^(\d+) of \d+ cells/.exec(end < header.length - TRAILING.length ? (fields[tail] ?? '') : '');
      const cells = width ? written.slice(0, Number(width[1])) : written;
      const row = refused.find((r) => r.cells.length === cells.length && r.cells.every((c, i) => c === cells[i]));
      return { leading: fields.slice(0, lead), cells, trailing: fields.slice(tail), written, row };
    });
    const unmatched = rows
      .filter((r) => !r.row)
      .map((r) => `${r.leading.join(';')}|${r.cells.slice(0, 2).join(';')}… (${r.cells.length} cells)`);
    if (unmatched.length > 0)
      this.wrong.push(
        `${file} holds ${unmatched.length} row(s) that are not refused in the model (or not as the export has them): ${unmatched.join(', ')}`,
      );
    this.same(
      `${file}: the refused rows (export lines)`,
      rows
        .map((r) => r.row?.line)
        .filter((l) => l !== undefined)
        .sort((a, b) => a - b),
      refused.map((r) => r.line),
    );
    return { header, rows };
  }

  // -------------------------------------------------------------------------------------------
  // Checking

  private readLedger<T>(read: (db: Database.Database) => T): T {
    const db = new Database(this.ledger, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      return read(db);
    } finally {
      db.close();
    }
  }

  /** Learns the platform's ids of the model's migrations from the ledger's runs, in order. */
  private learnMigrationIds(): void {
    const ids = this.readLedger((db) =>
      (
        db
          .prepare(
            'SELECT migration_id AS id, min(id) AS first FROM runs WHERE migration_id IS NOT NULL GROUP BY migration_id ORDER BY first',
          )
          .all() as Array<{
          id: string;
        }>
      ).map((r) => r.id),
    );
    this.same("migrations the ledger's runs went into (how many)", ids.length, this.model.migrations.length);
    ids.forEach((id, i) => {
      const m = this.model.migrations[i];
      if (m) m.id ??= id;
    });
  }

  private async check(index: number): Promise<void> {
    const m = this.model;
    this.learnMigrationIds();
    const idOf = (n: number | undefined) => (n === undefined ? null : (m.migrations[n - 1]?.id ?? null));
    const expectedByState = m.expectedByState();

    // 1. The ledger, read directly.
    const records = this.readLedger(
      (db) =>
        db
          .prepare(
            `SELECT r.keyed, r.legacy_key AS key, r.state, m.reference_id AS migration
               FROM records r JOIN scopes s ON s.id = r.scope LEFT JOIN migrations m ON m.id = r.migration
              WHERE s.pipeline = ?`,
          )
          .all(PIPELINE) as LedgerRecord[],
    );
    const byState: Record<string, number> = { mapped: 0, rejected: 0, in_flight: 0, staged: 0, failed: 0, invalid: 0, imported: 0 };
    for (const r of records) byState[r.state] = (byState[r.state] ?? 0) + 1;
    this.same('ledger records by state', byState, expectedByState);
    const keyed = new Map(records.filter((r) => r.keyed === 1).map((r) => [r.key, r]));
    const wrongKeys: string[] = [];
    for (const [key, rec] of m.records) {
      const l = keyed.get(key);
      const want = rec.state === 'rejected' ? 'rejected' : `${rec.state} in ${idOf(rec.migration)}`;
      const got = !l ? 'absent' : l.state === 'rejected' ? 'rejected' : `${l.state} in ${l.migration}`;
      if (want !== got) wrongKeys.push(`${key}: ${got}, expected ${want}`);
    }
    for (const [key, l] of keyed) if (!m.records.has(key)) wrongKeys.push(`${key}: ${l.state}, expected absent`);
    if (wrongKeys.length > 0)
      this.wrong.push(`ledger records not as the model has them (${wrongKeys.length}): ${wrongKeys.slice(0, 8).join('; ')}`);

    // 2. status --json (the CLI's account of the same ledger), and the words of `status` on canceled migrations.
    const st = await this.cli(['status', '--json', '--ledger', this.ledger]);
    this.exit('status --json', st, 0);
    const status = this.json<{
      pipelines: Array<{ pipeline: string; byState: Record<string, number> }>;
      canceled: Array<{ pipeline: string; migrationId: string; state: string; records: number }>;
    }>('status --json', st);
    if (status) {
      this.same('status --json byState', status.pipelines.find((p) => p.pipeline === PIPELINE)?.byState, expectedByState);
      for (const mig of m.migrations.filter((x) => x.activity === 'Canceled')) {
        const held = status.canceled.filter((c) => c.migrationId === mig.id && c.state !== 'rejected').reduce((n, c) => n + c.records, 0);
        this.same(`status --json: records in canceled migration ${mig.id}`, held, m.keysIn(mig.n).length);
      }
    }
    const canceled = m.migrations.filter((x) => x.activity === 'Canceled');
    const stText = canceled.length > 0 ? await this.cli(['status', '--ledger', this.ledger]) : undefined;
    for (const mig of stText ? canceled : []) {
      const line = stText!.stdout.split('\n').find((l) => l.includes(`${mig.id}`) && /canceled/.test(l));
      const claim =
        line && /(\d[\d,]*) records? (?:were|was) sent to migration \S+, canceled [^:]*: the platform no longer holds them/.exec(line);
      if (claim) {
        // Records imported in another migration are live: "no longer holds them" is true only of the others.
        const notLive = m.keysIn(mig.n).filter((k) => !m.live.has(k)).length;
        this.same(
          `status: records of canceled migration ${mig.id} it says the platform no longer holds`,
          Number(claim[1]!.replace(/,/g, '')),
          notLive,
        );
      }
    }

    // 3. The platform, through its own API.
    const live = new Set<string>();
    for await (const cp of this.client.counterparties.stream({ format: 'jsonl' }))
      if (!this.seeds.has(cp.referenceId)) live.add(cp.referenceId);
    const refIds = (keys: Iterable<string>) => [...keys].map((k) => referenceIdOf(m.truth, k)).sort();
    this.same('live counterparties on the platform (referenceIds, sorted)', [...live].sort(), refIds(m.live));
    for (const mig of m.migrations) {
      if (!mig.id) continue;
      const got = await this.client.migrations.get(mig.id);
      this.same(`migration ${mig.n} (${mig.id}) activity`, got.activity, mig.activity);
      if (mig !== m.current || mig.activity === 'Canceled') continue;
      this.same(`migration ${mig.id} numberOfStagedEntities`, got.numberOfStagedEntities, m.keysIn(mig.n).length);
      this.same(`migration ${mig.id} numberOfImportedEntities`, got.numberOfImportedEntities, m.keysIn(mig.n, ['imported']).length);
      const staged: string[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = await this.client.migrations.listStaged(mig.id, { offset, limit: 100 });
        for (const item of page.items) staged.push(String(item.referenceId));
        if (offset + 100 >= page.total) break;
      }
      this.same(`migration ${mig.id}: staged records on the platform`, staged.sort(), refIds(m.keysIn(mig.n)));
      // The platform counts a migration once its import has completed.
      if (mig.activity !== 'Completed') continue;
      const job = await this.client.jobs.counts(mig.id);
      const result = await this.client.jobs.waitFor(job, { deadlineMs: 60_000 });
      const counts = { staged: 0, imported: 0 };
      if (result.jobType === 'Counts')
        for (const table of result.counts.filter((t) => t.type === 'TotalEntity')) {
          for (const row of table.stagedRows) counts.staged += Number(row[1]);
          for (const row of table.importedRows) counts.imported += Number(row[1]);
        }
      this.same(`migration ${mig.id}: counts job (staged, imported)`, counts, {
        staged: m.keysIn(mig.n).length,
        imported: m.keysIn(mig.n, ['imported']).length,
      });
    }

    // 4. The reconciliation report of the latest migration, and its corrections file.
    const cur = m.current;
    if (cur && cur.activity !== 'Canceled') {
      const out = join(this.dir, `report-${index + 1}`);
      const rep = await this.cli(['report', '--out', out, '--json', ...this.common]);
      if (m.reportBalances()) this.exit('report', rep, 0);
      else if (rep.code !== 0 && rep.code !== 1) this.exit('report', rep, 1);
      const report = this.json<{
        balanced: boolean;
        run: { migrationId: string };
        totals: { sourceRows: number; imported: number };
        problems: string[];
      }>('report --json', rep);
      if (report) {
        this.same('report: migration', report.run.migrationId, cur.id);
        if (m.reportBalances()) this.same('report: balanced (problems)', [report.balanced, report.problems], [true, []]);
        this.same('report: source rows (the export has)', report.totals.sourceRows, m.truth.rows.length);
        this.same('report: imported', report.totals.imported, m.keysIn(cur.n, ['imported']).length);
      }
      // 5. verify: a verdict word only when true for everything the ledger holds; "0 of 0" is
      // nothing to verify yet (issue 40).
      const v = await this.cli(['verify', '--out', join(this.dir, `verify-${index + 1}`), ...this.common]);
      this.exit('verify', v, 0);
      const head = v.stdout.split('\n')[0] ?? '';
      const n = m.live.size;
      this.same(
        'verify: headline',
        head.replace(/\(migration \S+\)/, '(migration …)'),
        n === 0
          ? `Nothing to verify yet: no record of ${PIPELINE} is imported (migration …)`
          : `Verified: ${n.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} imported records identical on the platform (100%)`,
      );
      const file = join(out, 'klanten.corrections.csv');
      if (existsSync(file)) this.readCorrections(file);
      else
        this.same(
          'report: a corrections file for the refused rows',
          'none',
          m.refusedRows().length > 0 ? 'klanten.corrections.csv' : 'none',
        );
    }
  }
}

/** Fixes a refused row's cells as an engineer would: the value its defect broke, or a new key for a duplicate. */
function repair(cells: string[], row: ExportRow): void {
  switch (row.defect) {
    case 'missing-surname':
      cells[COL.achternaam] = 'Hersteld';
      break;
    case 'impossible-date':
      cells[COL.geboortedatum] = '28-02-1980';
      break;
    case 'unknown-nationality':
      cells[COL.nationaliteit] = 'NL';
      break;
    case 'partner-missing':
      cells[COL.partner] = '';
      break;
    case 'wrong-column-count':
      while (cells.length <= COL.partner) cells.push('');
      break;
    case 'bad-postcode':
      cells[COL.postcode] = '1234 AB';
      break;
    case 'invalid-email':
      cells[COL.email] = '';
      break;
    case 'duplicate-klantnr':
      cells[COL.klantnr] = newKeyFor(row);
      break;
    default:
      break;
  }
}

function csvCell(v: string): string {
  return /[;"\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}
