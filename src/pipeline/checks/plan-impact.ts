/**
 * `plan --ledger`: what a run would send after a change of mapping (or of the export), told
 * before anything is sent. Each mapped record is hashed exactly as a run hashes it (its upload
 * frame, batcher/index.ts) and compared with what the ledger holds of its legacy key, by the rule
 * of a run's skip-unchanged stage: staged (or invalid, or imported) in the migration with the same
 * hash is not sent again. So the records counted `changed`, `new` and `again` are the ones the
 * next run sends, and only those. The ledger keeps a hash of each record sent, not the record:
 * an example shows the record as it would be sent, and says what the ledger knows of before.
 */
import { encodeRecord } from '../batcher/index.js';
import type { FrontRow, RejectReason } from '../types.js';

/** What the ledger holds of one legacy key (ledger/ledger-impact.ts HeldRecord). */
export interface HeldRecord {
  state: string;
  settled: boolean;
  contentHash: string | null;
  errors: ReadonlyArray<{ field: string; code: string; message: string; value?: unknown }>;
}

/** A ledger to compare with (ledger/ledger-impact.ts LedgerImpact), kept apart so `plan` loads SQLite only when asked. */
export interface HeldRecords {
  readonly migration: { id: string } | undefined;
  lookup(keys: readonly string[]): Map<string, HeldRecord>;
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
  before: { state: string; contentKept: false; reasons?: RejectReason[] };
  /** The record a run would send, or why it would now be refused. */
  after: { record?: unknown; reasons?: RejectReason[] };
}

export interface PlanImpact {
  ledger: string;
  /** The migration compared with: of the pipeline's latest run in the ledger (none: every record is new). */
  migrationId?: string;
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
  private group: FrontRow[] = [];
  private readonly shown: Record<ImpactKind, number> = { changed: 0, again: 0, nowRefused: 0 };

  constructor(
    private readonly held: HeldRecords,
    ledger: string,
    private readonly examplesPerKind = 3,
  ) {
    this.impact = {
      ledger,
      ...(held.migration ? { migrationId: held.migration.id } : {}),
      changed: 0,
      unchanged: 0,
      new: 0,
      again: 0,
      nowRefused: 0,
      toSend: 0,
      examples: [],
    };
  }

  take(r: FrontRow): void {
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
      if (contentHash(r) === h.contentHash) i.unchanged++;
      else {
        i.changed++;
        this.example('changed', r, h);
      }
    }
  }

  private example(kind: ImpactKind, r: FrontRow, h: HeldRecord, after?: ImpactExample['after']): void {
    if (this.shown[kind] >= this.examplesPerKind) return;
    this.shown[kind]++;
    const p = r.row.provenance;
    this.impact.examples.push({
      kind,
      source: r.row.source,
      file: p.file,
      line: p.line,
      legacyKey: r.legacyKey!,
      before: { state: h.state, contentKept: false, ...(h.errors.length > 0 ? { reasons: h.errors.map((e) => ({ ...e })) } : {}) },
      after: after ?? { record: recordOf(r) },
    });
  }
}

/** The hash a run would give the record (its upload frame's). */
function contentHash(r: Extract<FrontRow, { kind: 'mapped' }>): string | undefined {
  if (r.encoded) return r.encoded.contentHash;
  return r.record ? encodeRecord(r.record, 'json-seq').contentHash : undefined;
}

/** The record of a mapped row, from its upload frame when a worker framed it (`\x1e{…}\n`). */
function recordOf(r: FrontRow): unknown {
  if (r.kind !== 'mapped') return undefined;
  if (r.record) return r.record;
  if (!r.encoded) return undefined;
  const text = typeof r.encoded.frame === 'string' ? r.encoded.frame : r.encoded.frame.toString('utf8');
  return JSON.parse(text.replace(/^\x1e/, ''));
}
