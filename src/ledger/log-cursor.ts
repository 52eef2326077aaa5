/**
 * Where reading a migration's log continues: the ledger keeps the stream position (the next
 * `sequenceNumber`, `log_cursor`), never the log's text. The log is the platform's; a copy in
 * the ledger grew it by about 5 KB a record (543 MB for 100,000 persons with many refusals)
 * while nothing read it back: the reconciliation takes per-record outcomes from the jobs'
 * results, and `stagecoach logs` reads the entries from the platform again.
 *
 * Ledgers made before this keep their `migration_logs` table as it is; nothing reads or adds
 * to it (docs/ledger.md says how to drop it).
 */
import type { Db } from './schema.js';
import { once } from './rows.js';

export class LogCursors {
  private readonly get = once(() =>
    this.db.prepare<[string], number>('SELECT continue_from FROM log_cursor WHERE migration_id = ?').pluck(),
  );
  private readonly move = once(() =>
    this.db.prepare(
      'INSERT INTO log_cursor (migration_id, continue_from) VALUES (?, ?) ON CONFLICT (migration_id) DO UPDATE SET continue_from = MAX(continue_from, excluded.continue_from)',
    ),
  );

  constructor(private readonly db: Db) {}

  /** Where the next read of the migration's log starts (undefined: the beginning). */
  at(migrationId: string): number | undefined {
    return this.get().get(migrationId);
  }

  /** Moves the migration's log cursor forward (never back), durable when it returns. */
  moveTo(migrationId: string, continueFrom: number): void {
    this.move().run(migrationId, continueFrom);
  }
}
