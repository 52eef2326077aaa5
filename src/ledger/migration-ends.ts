/**
 * How the ledger knows a migration ended: canceled on the platform (by `stagecoach cancel`), or
 * completed by its import (`migrate`, `import`). A canceled migration's staging area is gone, yet
 * its records keep the state they had (`staged`, `invalid`, …) because that is what happened to
 * them; `status` must not present them as staged on the platform. A record imported in an earlier
 * migration and sent again into one that was canceled is still live on the platform from that
 * import (the ledger keeps it in `earlier_imports`, src/ledger/schema.ts). An ended migration
 * takes no more records: the next run registers a new one and sends everything into it, which
 * `plan --ledger` must predict. The cancels are kept in the table `canceled_migrations`.
 */
import type { Db } from './schema.js';
import type { LedgerJobs } from './jobs.js';
import { once } from './rows.js';

/** How a migration ended, as the ledger knows it. */
export interface MigrationEnd {
  migrationId: string;
  how: 'completed' | 'canceled';
  at: string;
}

export interface CanceledRecords {
  pipeline: string;
  component: string;
  migrationId: string;
  canceledAt: string;
  state: string;
  records: number;
  /**
   * The migration these records were imported in before they were sent into the canceled one:
   * the platform still holds them, live, from that import. Absent: the platform holds nothing of them.
   */
  importedIn?: string;
}

const CANCELED_RECORDS = `SELECT s.pipeline, s.component, m.reference_id AS migrationId, c.canceled_at AS canceledAt, r.state, count(*) AS records,
      em.reference_id AS importedIn
    FROM canceled_migrations c
    JOIN migrations m ON m.reference_id = c.reference_id
    JOIN records r ON r.migration = m.id
    JOIN scopes s ON s.id = r.scope
    LEFT JOIN earlier_imports e ON e.scope = r.scope AND e.keyed = r.keyed AND e.legacy_key = r.legacy_key
    LEFT JOIN migrations em ON em.id = e.migration
  GROUP BY s.pipeline, s.component, m.reference_id, r.state, importedIn
  ORDER BY s.pipeline, s.component, c.canceled_at, r.state, importedIn`;

export class MigrationEnds {
  private readonly insert = once(() =>
    this.db.prepare('INSERT OR IGNORE INTO canceled_migrations (reference_id, canceled_at) VALUES (?, ?)'),
  );
  private readonly canceledAt = once(() =>
    this.db.prepare<[string], string>('SELECT canceled_at FROM canceled_migrations WHERE reference_id = ?').pluck(),
  );
  private readonly canceled = once(() => this.db.prepare<[], CanceledRecords & { importedIn: string | null }>(CANCELED_RECORDS));

  constructor(
    private readonly db: Db,
    private readonly jobs: LedgerJobs,
  ) {}

  /** Records that the platform canceled the migration (idempotent: the first time stays). */
  recordCanceled(migrationId: string, at = new Date().toISOString()): void {
    this.insert().run(migrationId, at);
  }

  /**
   * Whether the ledger knows the migration ended: canceled (`stagecoach cancel`), or completed (its
   * import job finished). Works on a read-only ledger.
   * @example ledger.migrationEnds.of('a82df1e0-…') // { migrationId: 'a82df1e0-…', how: 'completed', at: '2026-11-25T06:44:10.471Z' }
   */
  of(migrationId: string): MigrationEnd | undefined {
    const canceled = this.canceledAt().get(migrationId);
    if (canceled) return { migrationId, how: 'canceled', at: canceled };
    const at = this.jobs.importFinishedAt(migrationId);
    return at ? { migrationId, how: 'completed', at } : undefined;
  }

  /**
   * The ledger's records that belong to a canceled migration, per pipeline, component, migration,
   * state and earlier import. Works on a read-only ledger.
   */
  canceledRecords(): CanceledRecords[] {
    return this.canceled()
      .all()
      .map(({ importedIn, ...r }) => (importedIn ? { ...r, importedIn } : r));
  }
}
