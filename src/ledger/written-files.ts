/**
 * What personal data stagecoach keeps on this machine, as the ledger knows it: the files it
 * wrote that hold legacy rows (corrections files, reports written with values revealed), and
 * the refused rows' values and messages in the records' errors. `purge` and the retention
 * settings remove them (src/privacy/retention.ts); counts, codes, file:line and legacy keys stay.
 */
import type { Db } from './schema.js';
import { once } from './rows.js';

export type WrittenFileKind = 'corrections' | 'report';

export interface WrittenFile {
  path: string;
  kind: WrittenFileKind;
  pipeline: string;
  migrationId?: string;
  rows: number;
  writtenAt: string;
}

const HELD = `SELECT path, kind, pipeline, migration_id AS migrationId, rows, written_at AS writtenAt FROM written_files WHERE removed_at IS NULL`;
const WITH_VALUES = `FROM records r JOIN scopes s ON s.id = r.scope WHERE s.pipeline = ? AND r.errors LIKE '%"value"%'`;

type HeldRow = WrittenFile & { migrationId: string | null };

export class WrittenFiles {
  private readonly put = once(() =>
    this.db.prepare(
      'INSERT OR REPLACE INTO written_files (path, kind, pipeline, migration_id, rows, written_at, removed_at) VALUES (?, ?, ?, ?, ?, ?, NULL)',
    ),
  );
  private readonly heldAll = once(() => this.db.prepare<[], HeldRow>(`${HELD} ORDER BY written_at, path`));
  private readonly heldOf = once(() => this.db.prepare<[string], HeldRow>(`${HELD} AND pipeline = ? ORDER BY written_at, path`));
  private readonly removed = once(() => this.db.prepare('UPDATE written_files SET removed_at = ? WHERE path = ?'));
  private readonly countWithValues = once(() => this.db.prepare<[string], number>(`SELECT count(*) ${WITH_VALUES}`).pluck());
  private readonly withValues = once(() =>
    this.db.prepare<[string], { id: number; errors: string }>(`SELECT r.rowid AS id, r.errors ${WITH_VALUES}`),
  );
  private readonly rewrite = once(() => this.db.prepare('UPDATE record_rows SET errors = ? WHERE rowid = ?'));

  constructor(private readonly db: Db) {}

  /**
   * Notes a file written with personal data (written again: its row is replaced, and it is held again).
   * @example ledger.writtenFiles.record({ path, kind: 'corrections', pipeline: 'crm', migrationId, rows: 8 });
   */
  record(file: Omit<WrittenFile, 'writtenAt'> & { writtenAt?: string }): void {
    this.put().run(file.path, file.kind, file.pipeline, file.migrationId ?? null, file.rows, file.writtenAt ?? new Date().toISOString());
  }

  /** The files still held (not removed), of one pipeline or all. */
  held(pipeline?: string): WrittenFile[] {
    const rows = pipeline ? this.heldOf().all(pipeline) : this.heldAll().all();
    return rows.map(({ migrationId, ...r }) => ({ ...r, ...(migrationId ? { migrationId } : {}) }));
  }

  /** Notes that a file was removed (or found gone). */
  markRemoved(path: string): void {
    this.removed().run(new Date().toISOString(), path);
  }

  /** Records of a pipeline whose errors still hold the offending values. */
  recordsWithValues(pipeline: string): number {
    return this.countWithValues().get(pipeline) ?? 0;
  }

  /**
   * Rewrites the errors of a pipeline's records without their values, messages through `redact`
   * (codes, fields and stages stay). Returns how many records changed.
   */
  scrubRecordValues(pipeline: string, redact: (message: string, field: string, value: unknown, code: string) => string): number {
    const rows = this.withValues().all(pipeline);
    const update = this.rewrite();
    this.db.transaction(() => {
      for (const r of rows) {
        const errors = (JSON.parse(r.errors) as Array<{ field: string; code: string; message: string; value?: unknown }>).map(
          ({ value, ...e }) => ({ ...e, message: redact(e.message, e.field, value, e.code) }),
        );
        update.run(JSON.stringify(errors), r.id);
      }
    })();
    return rows.length;
  }
}
