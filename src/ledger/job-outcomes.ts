/**
 * What the platform's jobs did to a migration's records: a validation job's result (records it
 * names become `invalid`, those it no longer names `staged` again) and an import's outcome (a
 * partial import names the records it could not import: those keep state `staged` with their
 * import error attached, stage `import`; every other staged record becomes `imported`). Each is
 * one transaction, so the report never sees half of it.
 */
import { idKey } from '../contract/canonical-form.js';
import { nowValue, stateCodes, uuidValue } from './compact.js';
import type { Db } from './schema.js';
import { errorsJson } from './record-errors.js';
import { once } from './rows.js';
import type { Scopes } from './scopes.js';
import type { RecordError } from './types.js';

/** A record the import job could not import. */
export interface ImportFailure {
  referenceId: string;
  message: string;
}

/** A validation or import message may begin with its code ("UNKNOWN_CODE: …"). */
const leadingCode = (message: string): string | undefined => /^([A-Z][A-Z0-9_]{2,})\b/.exec(message)?.[1];

const STAGED = stateCodes('staged');
const INVALID = stateCodes('invalid');
const IMPORTED = stateCodes('imported');

export class JobOutcomes {
  private readonly validation = once(() => {
    // referenceIds as record_rows holds them (compact.ts), without a type: no affinity changes them.
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS wanted_errors (reference_id PRIMARY KEY, errors TEXT NOT NULL)');
    return {
      clearInvalid: this.db.prepare(
        `UPDATE record_rows SET state = ${STAGED}, errors = NULL, updated_at = ? WHERE migration = ? AND state = ${INVALID}`,
      ),
      clear: this.db.prepare('DELETE FROM temp.wanted_errors'),
      add: this.db.prepare('INSERT INTO temp.wanted_errors (reference_id, errors) VALUES (?, ?)'),
      markInvalid: this.db.prepare(
        `UPDATE record_rows SET state = ${INVALID}, errors = w.errors, updated_at = ? FROM temp.wanted_errors w WHERE w.reference_id = record_rows.reference_id AND record_rows.migration = ? AND record_rows.state IN (${STAGED}, ${INVALID})`,
      ),
    };
  });
  private readonly importAll = once(() =>
    this.db.prepare(`UPDATE record_rows SET state = ${IMPORTED}, updated_at = ? WHERE migration = ? AND state = ${STAGED}`),
  );
  private readonly importOutcome = once(() => {
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS import_failures (reference_id PRIMARY KEY, errors TEXT NOT NULL)');
    return {
      clear: this.db.prepare('DELETE FROM temp.import_failures'),
      add: this.db.prepare('INSERT OR REPLACE INTO temp.import_failures (reference_id, errors) VALUES (?, ?)'),
      markFailed: this.db.prepare(
        `UPDATE record_rows SET errors = f.errors, updated_at = ? FROM temp.import_failures f WHERE f.reference_id = record_rows.reference_id AND record_rows.migration = ? AND record_rows.state = ${STAGED}`,
      ),
      markImported: this.db.prepare(
        `UPDATE record_rows SET state = ${IMPORTED}, errors = NULL, updated_at = ? WHERE migration = ? AND state = ${STAGED} AND reference_id NOT IN (SELECT reference_id FROM temp.import_failures)`,
      ),
    };
  });

  constructor(
    private readonly db: Db,
    private readonly scopes: Scopes,
  ) {}

  /**
   * Applies a validation job's result for a migration in one transaction: the records it names
   * become `invalid` with their errors (stage `validation`); records it no longer names that were
   * `invalid` in this migration go back to `staged`.
   */
  markValidated(
    migrationId: string,
    errors: ReadonlyArray<{ referenceId: string; field: string; message: string; code?: string }>,
  ): { invalid: number; cleared: number } {
    const migration = this.scopes.migrationNo(migrationId);
    const byRef = new Map<string, RecordError[]>();
    for (const e of errors) {
      // One record however the platform writes its id (canonical-form.ts).
      const ref = idKey(e.referenceId);
      const list = byRef.get(ref) ?? [];
      list.push({ stage: 'validation', field: e.field, code: e.code ?? leadingCode(e.message) ?? e.message, message: e.message });
      byRef.set(ref, list);
    }
    const s = this.validation();
    return this.db.transaction(() => {
      const now = nowValue();
      const cleared = s.clearInvalid.run(now, migration).changes;
      s.clear.run();
      for (const [ref, list] of byRef) s.add.run(uuidValue(ref), errorsJson(list));
      const invalid = s.markInvalid.run(now, migration).changes;
      s.clear.run();
      return { invalid, cleared: Math.max(0, cleared - invalid) };
    })();
  }

  /** After a completed import: every `staged` record of the migration becomes `imported`, in one transaction. */
  markImported(migrationId: string): number {
    return this.importAll().run(nowValue(), this.scopes.migrationNo(migrationId)).changes;
  }

  /**
   * Applies a completed import's outcome to the records of the migration (`markImported` is
   * right only when nothing failed).
   * @example ledger.markImportOutcome(migrationId, result.errors.filter((e) => e.referenceId).map(…))
   */
  markImportOutcome(migrationId: string, failures: readonly ImportFailure[]): { imported: number; failed: number } {
    const migration = this.scopes.migrationNo(migrationId);
    const s = this.importOutcome();
    return this.db.transaction(() => {
      const now = nowValue();
      s.clear.run();
      for (const f of failures) {
        const error: RecordError = { stage: 'import', field: '', code: leadingCode(f.message) ?? 'IMPORT_FAILED', message: f.message };
        s.add.run(uuidValue(idKey(f.referenceId)), errorsJson([error]));
      }
      const failed = s.markFailed.run(now, migration).changes;
      const imported = s.markImported.run(now, migration).changes;
      s.clear.run();
      return { imported, failed };
    })();
  }
}
