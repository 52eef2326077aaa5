/**
 * `plan --ledger`: what a run would send after a change of mapping (or of the export), told
 * before anything is sent. Each mapped record is hashed exactly as a run hashes it (its upload
 * frame, batcher/index.ts) and compared with what the ledger holds of its legacy key, by the rule
 * of a run's skip-unchanged stage: staged (or invalid, or imported) in the migration with the same
 * hash is not sent again. So the records counted `changed`, `new` and `again` are the ones the
 * next run sends, and only those. The ledger keeps a hash of each record sent, not the record;
 * but it keeps the mappings each run used (ledger/run-mappings.ts), so an example's "before"
 * is its row mapped again the way the run that last sent it did (`addBefore`), set field by
 * field against what the mapping makes now.
 */
import { encodeRecord } from '../batcher/index.js';
import { restoreMappingSnapshot, type MappingSnapshot } from '../definition/mapping-snapshot.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import { compileMapping, type MapContext } from '../mapping/compile.js';
import { ReferenceIds } from '../mapping/reference-ids.js';
import type { FrontRow, RejectReason } from '../types.js';
import { mapAndCheck } from './row-verdict.js';

/** What the ledger holds of one legacy key (ledger/impact.ts HeldRecord). */
export interface HeldRecord {
  state: string;
  settled: boolean;
  contentHash: string | null;
  errors: ReadonlyArray<{ field: string; code: string; message: string; value?: unknown }>;
  /** The run that last wrote the record. */
  lastRun: number;
}

/** A ledger to compare with (ledger/impact.ts LedgerImpact), kept apart so `plan` loads SQLite only when asked. */
export interface HeldRecords {
  readonly migration: { id: string } | undefined;
  /** The migration of the pipeline's latest run, when the ledger knows it ended (ledger/migration-ends.ts). */
  readonly ended?: EndedMigration | undefined;
  lookup(keys: readonly string[]): Map<string, HeldRecord>;
  /** The mappings a run used, when the ledger kept them. */
  mappingsOf(runId: number): MappingSnapshot | undefined;
  /**
   * The export rows corrections replaced, as `file\u0000rowHash` (ledger/corrections.ts): a
   * run leaves such a row alone while it is unchanged, so plan does too.
   */
  correctedOrigins?(): ReadonlySet<string>;
}

/** A migration that takes no more records: completed by its import, or canceled. */
export interface EndedMigration {
  migrationId: string;
  how: 'completed' | 'canceled';
  at: string;
}

export type ImpactKind = 'changed' | 'again' | 'nowRefused';

/** One before/after pair. */
export interface ImpactExample {
  kind: ImpactKind;
  source: string;
  file: string;
  line: number;
  legacyKey: string;
  /** What the ledger knows of the record before: its state, and the reasons when it was refused (it keeps no record content). */
  before: { state: string; contentKept: false; reasons?: RejectReason[]; remapped?: Remapped };
  /** The record a run would send, or why it would now be refused. */
  after: { record?: unknown; reasons?: RejectReason[] };
}

/**
 * The row mapped again the way the run that last sent its record did (with that run's mappings,
 * from the ledger), and every field that comes out different now.
 */
export interface Remapped {
  run: number;
  record: unknown;
  changes: FieldChange[];
}

/** A field whose value a mapping change changes (absent on one side: `undefined`). */
export interface FieldChange {
  field: string;
  before?: unknown;
  after?: unknown;
}

export interface PlanImpact {
  ledger: string;
  /** The migration compared with: of the pipeline's latest run in the ledger (none: every record is new). */
  migrationId?: string;
  /**
   * The pipeline's latest run staged into this migration, and it ended: a run registers a new
   * migration and sends every mapped record into it (the records the ledger holds count `again`).
   */
  newMigration?: { after: EndedMigration };
  /** On the platform, and the mapping now makes another record: sent again. */
  changed: number;
  /** On the platform with this very content: not sent. */
  unchanged: number;
  /** Keys the ledger holds nothing of: sent. */
  new: number;
  /** Held, but not on the platform in that migration (refused, failed or unsent before): sent. */
  again: number;
  /** On the platform, and now refused before upload: not sent (the platform keeps what it has). */
  nowRefused: number;
  /** Export rows a corrections file replaced, unchanged since: the corrections stand, not sent (a run's keptCorrected). */
  keptCorrected: number;
  /** changed + new + again: what the next run sends. */
  toSend: number;
  examples: ImpactExample[];
}

/** Records looked up in the ledger together (one read transaction a group, as skip-unchanged). */
const GROUP = 500;

/**
 * Folds plan's rows into a PlanImpact; rows are taken in groups, looked up together.
 * @example const t = new ImpactTally(held, '.stagecoach/ledger.db'); for (const r of rows) t.take(r); t.finish()
 */
export class ImpactTally {
  private readonly impact: PlanImpact;
  private readonly corrected: ReadonlySet<string>;
  private group: FrontRow[] = [];
  private readonly shown: Record<ImpactKind, number> = { changed: 0, again: 0, nowRefused: 0 };
  /** Of each example (same order): the row's values when the reader kept them, and the run that last wrote it. */
  private readonly inputs: { values: Record<string, unknown> | undefined; lastRun: number }[] = [];

  constructor(
    private readonly held: HeldRecords,
    ledger: string,
    private readonly examplesPerKind = 3,
  ) {
    this.corrected = held.correctedOrigins?.() ?? new Set();
    this.impact = {
      ledger,
      ...(held.migration ? { migrationId: held.migration.id } : {}),
      ...(held.ended ? { newMigration: { after: { ...held.ended } } } : {}),
      changed: 0,
      unchanged: 0,
      new: 0,
      again: 0,
      nowRefused: 0,
      keptCorrected: 0,
      toSend: 0,
      examples: [],
    };
  }

  take(r: FrontRow): void {
    const p = r.row.provenance;
    if (this.corrected.size > 0 && this.corrected.has(`${p.file}\u0000${p.hash}`)) {
      this.impact.keptCorrected++;
      return;
    }
    // A duplicate's key belongs to the row that holds it; a row without a key is no record of the ledger's.
    if (r.legacyKey === undefined || (r.kind === 'rejected' && r.reasons.some((x) => x.code === 'DUPLICATE_LEGACY_KEY'))) return;
    if (this.group.push(r) >= GROUP) this.flush();
  }

  finish(): PlanImpact {
    this.flush();
    const i = this.impact;
    i.toSend = i.changed + i.new + i.again;
    return i;
  }

  /**
   * Gives each `changed` example its "before": its row mapped again with the mappings of the run
   * that last sent it, and the fields that differ. An example whose row values a worker did not
   * keep, or whose run's mappings the ledger does not hold (older ledgers), keeps only its state.
   */
  async addBefore(def: PipelineDefinition): Promise<void> {
    const ids = new ReferenceIds(def.target.referenceNamespace);
    const ctx: MapContext = { reasons: null, refs: [], key: '' };
    for (const [n, x] of this.impact.examples.entries()) {
      const { values, lastRun } = this.inputs[n]!;
      // A source with child sources (or one): its row alone, without its children, would make a wrong "before".
      if (def.sources.some((c) => c.name === x.source && c.child) || def.sources.some((c) => c.child?.of === x.source)) continue;
      const snapshot = x.kind === 'changed' && values ? this.held.mappingsOf(lastRun) : undefined;
      if (!snapshot || !values) continue;
      const restored = await restoreMappingSnapshot(snapshot, new Set(def.sources.filter((c) => c.child).map((c) => c.name)));
      try {
        const m = restored.mappings.get(x.source);
        if (!m) continue;
        const mapping = await compileMapping(m.spec, m.path, ids);
        const v = mapAndCheck(
          mapping,
          { source: x.source, values, provenance: { file: x.file, line: x.line, byteOffset: 0, hash: '' } },
          ctx,
        );
        const record = v.kind === 'checked' ? (v.check.ok ? v.check.record : undefined) : undefined;
        if (record === undefined) continue;
        x.before.remapped = { run: lastRun, record, changes: fieldChanges(record, x.after.record) };
      } finally {
        await restored.close();
      }
    }
  }

  private flush(): void {
    if (this.group.length === 0) return;
    const group = this.group;
    this.group = [];
    const held = this.held.lookup(group.map((r) => r.legacyKey!));
    const i = this.impact;
    for (const r of group) {
      const h = held.get(r.legacyKey!);
      if (r.kind === 'rejected') {
        if (h?.settled) {
          i.nowRefused++;
          this.example('nowRefused', r, h, { reasons: r.reasons });
        }
        continue;
      }
      if (!h) {
        i.new++;
        continue;
      }
      if (!h.settled) {
        i.again++;
        this.example('again', r, h);
        continue;
      }
      if (frontRowContentHash(r) === h.contentHash) i.unchanged++;
      else {
        i.changed++;
        this.example('changed', r, h);
      }
    }
  }

  private example(kind: ImpactKind, r: FrontRow, h: HeldRecord, after?: ImpactExample['after']): void {
    // Into a new migration every record goes: one held in the ended one is no example of anything.
    if (this.shown[kind] >= this.examplesPerKind || this.impact.newMigration) return;
    this.shown[kind]++;
    const p = r.row.provenance;
    this.inputs.push({ values: 'values' in r.row ? r.row.values : undefined, lastRun: h.lastRun });
    this.impact.examples.push({
      kind,
      source: r.row.source,
      file: p.file,
      line: p.line,
      legacyKey: r.legacyKey!,
      before: { state: h.state, contentKept: false, ...(h.errors.length > 0 ? { reasons: h.errors.map((e) => ({ ...e })) } : {}) },
      after: after ?? { record: frontRowRecord(r) },
    });
  }
}

/** The hash a run would give the record (its upload frame's). */
export function frontRowContentHash(r: Extract<FrontRow, { kind: 'mapped' }>): string | undefined {
  if (r.encoded) return r.encoded.contentHash;
  return r.record ? encodeRecord(r.record, 'json-seq').contentHash : undefined;
}

/** The record of a mapped row, from its upload frame when a worker framed it (`\x1e{…}\n`). */
export function frontRowRecord(r: FrontRow): unknown {
  if (r.kind !== 'mapped') return undefined;
  if (r.record) return r.record;
  if (!r.encoded) return undefined;
  const text = typeof r.encoded.frame === 'string' ? r.encoded.frame : r.encoded.frame.toString('utf8');
  return JSON.parse(text.replace(/^\x1e/, ''));
}

/**
 * The fields (as the contract names them: `addresses[0].postalCode`) whose values differ between two records.
 * @example fieldChanges({ surnamePrefix: 'van' }, { surnamePrefix: 'VAN' }) // [{ field: 'surnamePrefix', before: 'van', after: 'VAN' }]
 */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const a = leaves(before);
  const b = leaves(after);
  const out: FieldChange[] = [];
  for (const field of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(field);
    const y = b.get(field);
    if (JSON.stringify(x) !== JSON.stringify(y))
      out.push({ field, ...(x !== undefined ? { before: x } : {}), ...(y !== undefined ? { after: y } : {}) });
  }
  return out;
}

function leaves(value: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(value)) value.forEach((v, i) => leaves(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) leaves(v, path ? `${path}.${k}` : k, out);
  else if (value !== undefined) out.set(path, value);
  return out;
}
