/**
 * The ledger's small numbers: a scope (one pipeline's records for one component; records are
 * keyed within it) and a platform migration (records carry its number, not the UUID).
 */
import { assertWritable, type Db } from './schema.js';
import { once } from './rows.js';

/** Identifies one pipeline's records for one component (records are keyed within it). */
export interface Scope {
  id: number;
  pipeline: string;
  component: string;
}

export class Scopes {
  private readonly insertScope = once(() =>
    this.db.prepare('INSERT INTO scopes (pipeline, component) VALUES (?, ?) ON CONFLICT (pipeline, component) DO NOTHING'),
  );
  private readonly scopeId = once(() =>
    this.db.prepare<[string, string], { id: number }>('SELECT id FROM scopes WHERE pipeline = ? AND component = ?'),
  );
  private readonly insertMigration = once(() =>
    this.db.prepare('INSERT INTO migrations (reference_id) VALUES (?) ON CONFLICT (reference_id) DO NOTHING'),
  );
  private readonly migrationId = once(() => this.db.prepare<[string], { id: number }>('SELECT id FROM migrations WHERE reference_id = ?'));

  constructor(
    private readonly db: Db,
    private readonly file: string,
  ) {}

  /** The scope of a pipeline's records for a component (created on first use). */
  scope(pipeline: string, component: string): Scope {
    assertWritable(this.db, this.file);
    this.insertScope().run(pipeline, component);
    return { id: this.scopeId().get(pipeline, component)!.id, pipeline, component };
  }

  /** The scope's number when the ledger has it (read only: nothing is created). */
  find(pipeline: string, component: string): number | undefined {
    return this.scopeId().get(pipeline, component)?.id;
  }

  /** The ledger's small number for a platform migration (created on first use). */
  migrationNo(referenceId: string): number {
    assertWritable(this.db, this.file);
    this.insertMigration().run(referenceId);
    return this.migrationId().get(referenceId)!.id;
  }

  /** The migration's number when the ledger has it (read only: nothing is created). */
  findMigration(referenceId: string): number | undefined {
    return this.migrationId().get(referenceId)?.id;
  }
}
