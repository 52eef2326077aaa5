/**
 * The model of a migration's life (test/reliability/lives.test.ts): what must be true of one
 * pipeline's ledger, `status`, `plan --ledger`, report and platform after each step of a seeded
 * life, derived only from the generator's truth (which rows carry which planted defect) and the
 * steps taken (which rows were corrected, which keys changed, which mapping is in force, which
 * migration is open, what was imported where). It never reads stagecoach's own code or output:
 * the driver (lives.ts) compares what stagecoach says with what this model expects.
 *
 * The rules it encodes are the documented ones (docs/reconciliation.md, docs/pipelines.md,
 * docs/ledger.md), including the corrections rule of issue 28: a record corrected from a
 * corrections file stays corrected until a newer version of its own row arrives; a plain run of
 * the unchanged export never reverts it, and a correction that changes a key counts its row once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { v5 as uuidv5 } from 'uuid';

// ---------------------------------------------------------------------------------------------
// Seeded choices

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export class LifeRng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  float(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.float() * list.length)]!;
  }
}

// ---------------------------------------------------------------------------------------------
// The export's truth

/** The planted defect kinds of generate-crm.ts a person row can carry. */
export type DefectKind =
  | 'missing-surname'
  | 'impossible-date'
  | 'unknown-nationality'
  | 'duplicate-klantnr'
  | 'partner-missing'
  | 'wrong-column-count'
  | 'bad-postcode'
  | 'invalid-email';

export interface ExportRow {
  /** Physical line in klanten.csv (the header is line 1; the generated export has one line per row). */
  line: number;
  /** The cells as the export holds them. */
  cells: string[];
  /** The klantnr as written (for a planted duplicate: the earlier row's). */
  key: string;
  defect: DefectKind | undefined;
  /** The house number has a lower-case letter: the mapping change (houseNumber upper-cased) changes this record. */
  houseNumberChanges: boolean;
}

export interface ExportTruth {
  rows: ExportRow[];
  namespace: string;
}

/** Column indexes of klanten.csv (PERSON_COLUMNS of generate-crm.ts). */
export const COL = {
  klantnr: 0,
  achternaam: 4,
  geboortedatum: 6,
  nationaliteit: 7,
  huisnummer: 9,
  postcode: 10,
  land: 12,
  email: 14,
  partner: 17,
};

/**
 * Reads the generated klanten.csv (UTF-8, `;`, no quoted cells: the generator quotes only
 * cells holding `;`, a quote or a line break, which a generated export without
 * `--every-defect-once` does not have) and its defects.json.
 */
export function readExportTruth(dir: string, namespace: string): ExportTruth {
  const defects = JSON.parse(readFileSync(join(dir, 'defects.json'), 'utf8')) as Array<{ kind: DefectKind; file: string; line: number }>;
  const byLine = new Map(defects.filter((d) => d.file === 'klanten.csv').map((d) => [d.line, d.kind]));
  const lines = readFileSync(join(dir, 'klanten.csv'), 'utf8').split('\r\n');
  const rows: ExportRow[] = [];
  for (let i = 1; i < lines.length; i++) {
    const text = lines[i]!;
    if (text === '') continue;
    if (text.includes('"')) throw new Error(`klanten.csv:${i + 1} has a quoted cell; the lives model reads unquoted exports only`);
    const cells = text.split(';');
    rows.push({
      line: i + 1,
      cells,
      key: cells[COL.klantnr]!,
      defect: byLine.get(i + 1),
      houseNumberChanges: /[a-z]/.test(cells[COL.huisnummer] ?? ''),
    });
  }
  return { rows, namespace };
}

/** The referenceId the platform holds a person under (uuidv5 of `crm-klant:<klantnr>`, docs/mappings.md). */
export function referenceIdOf(truth: ExportTruth, key: string): string {
  return uuidv5(`crm-klant:${key}`, truth.namespace);
}

// ---------------------------------------------------------------------------------------------
// Steps

export type StepKind =
  | 'run'
  | 'run-killed'
  | 'migrate'
  | 'migrate-drop-invalid'
  | 'corrections-run'
  | 'corrections-migrate'
  | 'mapping-change'
  | 'cancel'
  | 'new-migration'
  | 'purge';

export interface Step {
  kind: StepKind;
  /** run-killed: kill once this many upload batches of the run are done. */
  killAfterBatches?: number;
  /** corrections: which refused rows to fix (by export line), which duplicates get a new key, an extra column. */
  fix?: { lines: number[]; newKeys: number[]; extraColumn: boolean; edits?: PersonEdits };
}

/**
 * What a person does to a corrections file besides fixing rows (issue 40): rows added — one
 * holding the key of a record that is not refused, one with a key nobody has —, a fixed row
 * copied below itself, unfixed rows deleted. The added and copied rows must be refused against
 * the ledger and counted, never sent; deleted rows leave their records refused.
 */
export interface PersonEdits {
  /** A key of a staged or imported record, whose export row is added (surname changed). */
  addLive: string | undefined;
  /** A row added with a key no row has. */
  addNew: boolean;
  /** The export line of a fixed row copied (an edited copy: refused as a repeat). */
  copyLine: number | undefined;
  /** Export lines of unfixed rows deleted from the file. */
  dropLines: number[];
}

/** How many rows of a corrections step stagecoach must refuse against the ledger. */
export function refusedEdits(e: PersonEdits | undefined): number {
  return e ? (e.addLive !== undefined ? 1 : 0) + (e.addNew ? 1 : 0) + (e.copyLine !== undefined ? 1 : 0) : 0;
}

/** One line per step, for the failure message and the replay. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'run-killed':
      return `run, SIGKILLed after ${step.killAfterBatches} batch(es), then run again`;
    case 'corrections-run':
    case 'corrections-migrate': {
      const f = step.fix!;
      const how = step.kind === 'corrections-run' ? 'run --corrections' : 'migrate --corrections';
      const e = f.edits;
      const edits = e
        ? `${e.addLive !== undefined ? `, a row added with live key ${e.addLive}` : ''}${e.addNew ? ', a row added with a new key' : ''}${e.copyLine !== undefined ? `, line ${e.copyLine} copied` : ''}${e.dropLines.length > 0 ? `, lines [${e.dropLines.join(', ')}] deleted` : ''}`
        : '';
      return `report --out, fix lines [${f.lines.join(', ')}], new keys for duplicate lines [${f.newKeys.join(', ')}]${f.extraColumn ? ', an extra column' : ''}${edits}, ${how}`;
    }
    case 'mapping-change':
      return 'mapping change (houseNumber upper-cased, or back), plan --ledger, run';
    case 'new-migration':
      return 'target.migration: new, run';
    default:
      return step.kind;
  }
}

// ---------------------------------------------------------------------------------------------
// The model's state

export type RecordState = 'rejected' | 'staged' | 'imported';
export type MigrationActivity = 'Active' | 'Completed' | 'Canceled';

export interface ModelMigration {
  /** 1, 2, … in the order the life made them; the platform's id once the driver learns it. */
  n: number;
  id: string | undefined;
  activity: MigrationActivity;
}

export interface KeyedRecord {
  state: RecordState;
  /** The migration it was last sent to (a keyed reject keeps the one it had, if any). */
  migration: number | undefined;
  /** What was sent: the row's version and the mapping that mapped it (unchanged = same signature). */
  signature: string | undefined;
}

/** What a row is now: refused, or a record under a key. */
export interface RowFate {
  row: ExportRow;
  /** Fixed by a correction (stays fixed: a plain run never reverts it). */
  corrected: boolean;
  /** The key it holds after a correction gave it a new one. */
  newKey: string | undefined;
  /** Mapped under this key (undefined: refused). */
  key: string | undefined;
  /** Signature of the correction's content, when corrected. */
  correctedSignature: string | undefined;
}

export interface PlanPrediction {
  new: number;
  changedOrAgain: number;
  unchanged: number;
  toSend: number;
}

export class LifeModel {
  readonly fates: RowFate[];
  readonly records = new Map<string, KeyedRecord>();
  readonly migrations: ModelMigration[] = [];
  /** Keys ever imported: live on the platform from then on. */
  readonly live = new Set<string>();
  /** The mapping in force: false = as generated, true = houseNumber upper-cased. */
  upperHouseNumber = false;
  /** Purged at least once (the corrections files of before are gone). */
  purged = false;

  constructor(readonly truth: ExportTruth) {
    this.fates = truth.rows.map((row) => ({
      row,
      corrected: false,
      newKey: undefined,
      key: row.defect ? undefined : row.key,
      correctedSignature: undefined,
    }));
  }

  get current(): ModelMigration | undefined {
    return this.migrations.at(-1);
  }
  /** The migration a run attaches to, if one is open. */
  get open(): ModelMigration | undefined {
    const m = this.current;
    return m?.activity === 'Active' ? m : undefined;
  }

  /** A row mapped from the export as it is now (a corrected row is not read from the export again). */
  private exportSignature(row: ExportRow): string {
    return `export|${this.upperHouseNumber && row.houseNumberChanges ? 'upper' : 'asis'}`;
  }

  /** The rows a plain run maps from the export: the clean ones (corrected rows stay as corrected). */
  private exportMapped(): Array<{ fate: RowFate; key: string; signature: string }> {
    return this.fates.filter((f) => !f.row.defect).map((f) => ({ fate: f, key: f.row.key, signature: this.exportSignature(f.row) }));
  }

  private classify(key: string, signature: string, open: ModelMigration | undefined): 'new' | 'unchanged' | 'changed' | 'again' {
    const rec = this.records.get(key);
    if (!rec) return 'new';
    const settled = open && rec.migration === open.n && rec.state !== 'rejected';
    if (settled && rec.signature === signature) return 'unchanged';
    return settled ? 'changed' : 'again';
  }

  /** What `plan --ledger` must say a plain run would send now. */
  planPrediction(): PlanPrediction {
    const p = { new: 0, changedOrAgain: 0, unchanged: 0, toSend: 0 };
    for (const m of this.exportMapped()) {
      const c = this.classify(m.key, m.signature, this.open);
      if (c === 'new') p.new++;
      else if (c === 'unchanged') p.unchanged++;
      else p.changedOrAgain++;
    }
    p.toSend = p.new + p.changedOrAgain;
    return p;
  }

  /** Opens a migration when none is open; returns the one records go to. */
  private attach(): ModelMigration {
    const open = this.open;
    if (open) return open;
    const m: ModelMigration = { n: this.migrations.length + 1, id: undefined, activity: 'Active' };
    this.migrations.push(m);
    return m;
  }

  /** A plain `run` that completed (a killed run resumed ends the same): returns how many records it sent. */
  applyRun(): number {
    const sends = this.exportMapped().filter((m) => this.classify(m.key, m.signature, this.open) !== 'unchanged');
    const m = this.attach();
    for (const s of sends) this.records.set(s.key, { state: 'staged', migration: m.n, signature: s.signature });
    // Refused rows with a key of their own are rejected under it (a corrected row is not reverted).
    for (const f of this.fates) {
      if (!f.row.defect || f.corrected || f.row.defect === 'duplicate-klantnr' || f.row.defect === 'wrong-column-count') continue;
      const rec = this.records.get(f.row.key);
      this.records.set(f.row.key, { state: 'rejected', migration: rec?.migration, signature: undefined });
    }
    return sends.length;
  }

  /** validate (nothing refused: the generated persons are distinct) and import: the open migration completes. */
  applyImport(): void {
    const m = this.open;
    if (!m) return;
    for (const [key, rec] of this.records) {
      if (rec.migration === m.n && rec.state === 'staged') {
        rec.state = 'imported';
        this.live.add(key);
      }
    }
    m.activity = 'Completed';
  }

  /**
   * A corrections run: the rows fixed are mapped and sent (a duplicate given a new key under it);
   * the rows handed back unedited stay refused. Returns how many records it sent.
   */
  applyCorrections(fix: NonNullable<Step['fix']>): number {
    const m = this.attach();
    let sent = 0;
    for (const f of this.fates) {
      const fixed = fix.lines.includes(f.row.line) || fix.newKeys.includes(f.row.line);
      if (!fixed || f.corrected || !f.row.defect) continue;
      f.corrected = true;
      if (f.row.defect === 'duplicate-klantnr') f.newKey = newKeyFor(f.row);
      f.key = f.newKey ?? f.row.key;
      f.correctedSignature = `corrected|${this.upperHouseNumber && f.row.houseNumberChanges ? 'upper' : 'asis'}`;
      this.records.set(f.key, { state: 'staged', migration: m.n, signature: f.correctedSignature });
      sent++;
    }
    return sent;
  }

  applyCancel(): void {
    const m = this.open;
    if (m) m.activity = 'Canceled';
  }

  /** The rows refused now (what the next corrections file must hold). */
  refusedRows(): ExportRow[] {
    return this.fates.filter((f) => f.row.defect && !f.corrected).map((f) => f.row);
  }

  /** The ledger's records per state as the model has them. */
  expectedByState(): Record<string, number> {
    const by: Record<string, number> = { mapped: 0, rejected: 0, in_flight: 0, staged: 0, failed: 0, invalid: 0, imported: 0 };
    for (const rec of this.records.values()) if (rec.state !== 'rejected') by[rec.state]!++;
    by.rejected = this.refusedRows().length;
    return by;
  }

  /**
   * Whether the report of the current migration must balance: true when every row that maps has
   * its record in that migration (the others are refused, and counted so); undefined when some
   * record is in another migration (kept corrected from an earlier import, or left in a canceled
   * one and not sent again), where the documentation does not say how one migration's report
   * accounts for them.
   */
  reportBalances(): boolean | undefined {
    const cur = this.current;
    if (!cur) return undefined;
    for (const f of this.fates) {
      if (f.key === undefined) continue;
      const rec = this.records.get(f.key);
      if (rec?.migration !== cur.n || rec.state === 'rejected') return undefined;
    }
    return true;
  }

  /** Keys staged (or imported) in a migration: what the platform lists as staged there. */
  keysIn(n: number, states: readonly RecordState[] = ['staged', 'imported']): string[] {
    return [...this.records].filter(([, r]) => r.migration === n && states.includes(r.state)).map(([k]) => k);
  }
}

/** The key a correction gives a planted duplicate: its own, unused anywhere in the export. */
export function newKeyFor(row: ExportRow): string {
  return String(900_000 + row.line);
}

/**
 * Draws a life: `length` steps valid for the state the model will be in, seeded. The model is
 * advanced by the driver (not here), so the draw only needs to know what each step requires:
 * a kill needs a run that sends, a cancel an open migration.
 */
export function drawLife(seed: number, length: number, truth: ExportTruth): Step[] {
  const rng = new LifeRng(seed ^ 0x5eed);
  const shadow = new LifeModel(truth);
  const steps: Step[] = [];
  const weighted: Array<[StepKind, number]> = [
    ['run', 3],
    ['run-killed', 3],
    ['migrate', 2],
    ['migrate-drop-invalid', 1],
    ['corrections-run', 3],
    ['corrections-migrate', 2],
    ['mapping-change', 2],
    ['cancel', 2],
    ['new-migration', 1],
    ['purge', 1],
  ];
  const total = weighted.reduce((n, [, w]) => n + w, 0);
  for (let i = 0; i < length; i++) {
    let kind: StepKind;
    if (i === 0) kind = rng.pick(['run', 'run-killed'] as const);
    else {
      let x = rng.float() * total;
      kind = weighted.find(([, w]) => (x -= w) < 0)![0];
    }
    if (kind === 'cancel' && !shadow.open) kind = 'run';
    if (kind === 'run-killed' && shadow.planPrediction().toSend < 60) kind = 'run';
    const step: Step = { kind };
    if (kind === 'run-killed') step.killAfterBatches = rng.int(1, 3);
    if (kind === 'corrections-run' || kind === 'corrections-migrate') {
      const refused = shadow.refusedRows();
      const fixable = refused.filter((r) => r.defect !== 'duplicate-klantnr');
      const dups = refused.filter((r) => r.defect === 'duplicate-klantnr');
      const lines = fixable.filter(() => rng.chance(0.6)).map((r) => r.line);
      const newKeys = dups.filter(() => rng.chance(0.5)).map((r) => r.line);
      const liveKeys = [...shadow.records]
        .filter(([k, r]) => r.state !== 'rejected' && truth.rows.some((x) => x.key === k && !x.defect))
        .map(([k]) => k);
      const fixed = [...lines, ...newKeys];
      step.fix = {
        lines,
        newKeys,
        extraColumn: rng.chance(0.3),
        edits: {
          addLive: liveKeys.length > 0 && rng.chance(0.4) ? rng.pick(liveKeys) : undefined,
          addNew: rng.chance(0.3),
          copyLine: fixed.length > 0 && rng.chance(0.3) ? rng.pick(fixed) : undefined,
          dropLines: refused.filter((r) => !fixed.includes(r.line) && rng.chance(0.3)).map((r) => r.line),
        },
      };
    }
    steps.push(step);
    advance(shadow, step);
  }
  return steps;
}

/** Moves the model over a step that went as documented. */
export function advance(model: LifeModel, step: Step): void {
  switch (step.kind) {
    case 'run':
    case 'run-killed':
      model.applyRun();
      break;
    case 'migrate':
    case 'migrate-drop-invalid':
      // After an import, migrate resumes that migration's chain (re-reports it), it stages nothing
      // into a new one (docs/reconciliation.md, "Resuming, never starting twice"); `run` does.
      if (model.current?.activity === 'Completed') break;
      model.applyRun();
      model.applyImport();
      break;
    case 'corrections-run':
    case 'corrections-migrate':
      // Nothing refused: the report writes no corrections file, and the driver hands nothing back
      // (runs no command), so no migration is opened or imported.
      if (model.refusedRows().length === 0) break;
      model.applyCorrections(step.fix!);
      if (step.kind === 'corrections-run') break;
      model.applyImport();
      break;
    case 'mapping-change':
      model.upperHouseNumber = !model.upperHouseNumber;
      model.applyRun();
      break;
    case 'cancel':
      model.applyCancel();
      break;
    case 'new-migration':
      // Refused while a migration is open (MIGRATION_ALREADY_ACTIVE): nothing changes; else a run into a new one.
      if (!model.open) model.applyRun();
      break;
    case 'purge':
      if (model.current?.activity === 'Completed') model.purged = true;
      break;
  }
}
