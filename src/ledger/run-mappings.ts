/**
 * The mappings each run used (src/pipeline/definition/mapping-snapshot.ts): one row per run, its
 * snapshot as JSON. `plan --ledger` maps a row the way the run that last sent its record did, to
 * show what a changed mapping changes. Rules only, never legacy data; a few kilobytes per run.
 */
import type { Db } from './schema.js';
import { once } from './rows.js';
import type { MappingSnapshot } from './types.js';

export class RunMappings {
  private readonly put = once(() => this.db.prepare('INSERT OR REPLACE INTO run_mappings (run, snapshot) VALUES (?, ?)'));
  private readonly get = once(() => this.db.prepare<[number], string>('SELECT snapshot FROM run_mappings WHERE run = ?').pluck());

  constructor(private readonly db: Db) {}

  /** Keeps the mappings a run uses. */
  record(runId: number, snapshot: MappingSnapshot): void {
    this.put().run(runId, JSON.stringify(snapshot));
  }

  /** The mappings a run used, when the ledger kept them (runs before the table have none). */
  of(runId: number): MappingSnapshot | undefined {
    const json = this.get().get(runId);
    return json === undefined ? undefined : (JSON.parse(json) as MappingSnapshot);
  }
}
