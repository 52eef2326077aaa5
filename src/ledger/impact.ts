/**
 * What `plan` reads of a ledger to say what a run would send (read only, never written): the
 * migration the pipeline's last run staged into, and for a group of legacy keys what the ledger
 * holds of each — its state there, the hash of the record last sent, the reasons of a refusal.
 * The same rule as a run's skip-unchanged stage (Ledger.isSettled): a record staged, invalid or
 * imported in that migration with the same content hash is not sent again. A migration the ledger
 * knows ended (completed by its import, or canceled) takes no more records: a run registers a new
 * one and sends every record into it, so nothing is compared with the ended one.
 */
import { existsSync } from 'node:fs';
import { StagecoachError } from '../contract/errors.js';
import { openLedger, type Ledger } from './ledger.js';
import type { MigrationEnd } from './migration-ends.js';
import type { Scope } from './scopes.js';
import type { MappingSnapshot, RecordError, RecordState } from './types.js';

/** One record as the ledger holds it, for the comparison with what the mapping makes now. */
export interface HeldRecord {
  state: RecordState;
  /** Staged, invalid or imported in the migration compared with: on the platform. */
  settled: boolean;
  /** Hash of the record as last sent (null for a refused row). */
  contentHash: string | null;
  /** Why the row was refused or failed, when it was. */
  errors: RecordError[];
  /** The run that last wrote the record. */
  lastRun: number;
}

const SETTLED: ReadonlySet<RecordState> = new Set(['staged', 'invalid', 'imported']);

export class LedgerImpact {
  private constructor(
    private readonly ledger: Ledger,
    private readonly scope: Scope | undefined,
    /** The migration of the pipeline's latest run that had one, and the ledger's number for it (none when it ended). */
    readonly migration: { id: string; no: number } | undefined,
    /** That migration, when the ledger knows it ended: a run starts a new one. */
    readonly ended: MigrationEnd | undefined,
  ) {}

  /**
   * Opens `file` read only for a pipeline's records of a component; compared with the migration of
   * its latest run, or with none (`newMigration`: a run would start one; or that migration ended).
   * @example const impact = LedgerImpact.open('.stagecoach/ledger.db', 'crm', 'Counterparties');
   */
  static open(file: string, pipeline: string, component: string, options: { newMigration?: boolean } = {}): LedgerImpact {
    if (!existsSync(file))
      throw new StagecoachError('CONFIG_INVALID', `--ledger ${file}: no such ledger, expected the ledger a run of ${pipeline} wrote`, {
        file,
      });
    const ledger = openLedger(file, { readonly: true });
    const scope = ledger.findScope(pipeline, component);
    // A pipeline whose runs start a new migration (target.migration: new) finds nothing of it staged.
    const last = scope === undefined || options.newMigration ? undefined : ledger.lastMigrationOf(scope);
    const ended = last ? ledger.migrationEnds.of(last.id) : undefined;
    return new LedgerImpact(ledger, scope, last?.no !== undefined && !ended ? { id: last.id, no: last.no } : undefined, ended);
  }

  /** What the ledger holds of each key (keys it holds nothing of are absent), in one read transaction. */
  lookup(keys: readonly string[]): Map<string, HeldRecord> {
    const out = new Map<string, HeldRecord>();
    if (this.scope === undefined) return out;
    for (const [key, r] of this.ledger.heldRecords(this.scope, keys))
      out.set(key, {
        state: r.state,
        settled: SETTLED.has(r.state) && this.migration !== undefined && r.migration === this.migration.no,
        contentHash: r.content_hash,
        errors: r.errors ? (JSON.parse(r.errors) as RecordError[]) : [],
        lastRun: r.last_run,
      });
    return out;
  }

  /** The export rows corrections replaced (corrections.ts): a run leaves them alone while unchanged. */
  correctedOrigins(): ReadonlySet<string> {
    return this.scope === undefined ? new Set() : this.ledger.correctedOrigins(this.scope);
  }

  /** The mappings a run used (run-mappings.ts), when the ledger kept them. */
  mappingsOf(runId: number): MappingSnapshot | undefined {
    return this.ledger.runMappings.of(runId);
  }

  close(): void {
    this.ledger.close();
  }
}
