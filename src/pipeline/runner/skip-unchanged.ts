/**
 * The skip-unchanged stage: a mapped record already settled in this migration with the same
 * content (staged, validated, imported) is not sent again. Records are looked up in groups, one
 * ledger read transaction each; records that pass come out in the order they went in.
 *
 * A ledger with nothing settled in the migration (a first run) cannot have a hit, so the stage
 * then passes every record straight through without a lookup. Neither can a row of a resumed
 * file past the last line the ledger holds of that file (the file is unchanged since: resume.ts
 * checked it), so those pass straight through too: a resume looks up only what it may skip.
 */
import type { Ledger, Scope } from '../../ledger/index.js';
import type { BatchItem } from '../batcher/index.js';

/** Mapped records looked up in the ledger together (one read transaction per group). */
const LOOKUP_GROUP = 500;

export interface SkipUnchangedReport {
  /** Records looked up (0 on a first run: nothing to look up against). */
  lookedUp: number;
  /** Records found settled with the same content: not sent. */
  skipped: number;
}

/** A resumed file and the last of its lines the ledger holds a record of. */
export interface LookupHorizon {
  file: string;
  line: number;
}

export class SkipUnchanged {
  readonly report: SkipUnchangedReport = { lookedUp: 0, skipped: 0 };
  private group: BatchItem[] = [];
  private readonly active: boolean;

  constructor(
    private readonly ledger: Ledger,
    private readonly scope: Scope,
    private readonly migrationNo: number,
    private readonly horizon?: LookupHorizon,
  ) {
    this.active = ledger.hasSettled(scope, migrationNo);
  }

  /**
   * Takes a record; returns the records that go on to the batcher now (none while a group fills).
   * @example for (const item of skip.take(prepareRecord(input, 'json-seq'))) batcher.add(item);
   */
  take(item: BatchItem): readonly BatchItem[] {
    if (!this.active) return [item];
    const p = item.record.provenance;
    if (this.horizon && p.line > this.horizon.line && p.file === this.horizon.file)
      return this.group.length > 0 ? [...this.flush(), item] : [item];
    if (this.group.push(item) < LOOKUP_GROUP) return NONE;
    return this.flush();
  }

  /** Looks up the records still waiting and returns those to send (the end of the input, or a stop). */
  flush(): BatchItem[] {
    if (this.group.length === 0) return [];
    const group = this.group;
    this.group = [];
    const settled = this.ledger.settledKeys(
      this.scope,
      this.migrationNo,
      group.map((i) => i.record),
    );
    this.report.lookedUp += group.length;
    this.report.skipped += settled.size;
    return settled.size === 0 ? group : group.filter((i) => !settled.has(i.record.legacyKey));
  }
}

const NONE: readonly BatchItem[] = [];
