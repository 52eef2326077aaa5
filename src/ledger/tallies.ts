/**
 * The ledger's record of what each run read from each source file, counted two ways
 * (src/pipeline/source/tally.ts): one row per run and file. The reconciliation report reads it
 * to list every file the parser and the independent count disagree on, or that was cut off.
 */
import type { Db } from './schema.js';
import { once } from './rows.js';
import type { SourceTally } from './types.js';

/** A file's tally as a run kept it; `accepted`: the run was told to accept a cut-off file (--allow-truncated). */
export interface StoredTally {
  runId: number;
  tally: SourceTally;
  accepted: boolean;
}

export class Tallies {
  private readonly put = once(() =>
    this.db.prepare('INSERT OR REPLACE INTO source_tallies (run_id, source, file, format, tally, accepted) VALUES (?, ?, ?, ?, ?, ?)'),
  );
  private readonly ofRun = once(() =>
    this.db.prepare<[number], { tally: string; accepted: number }>(
      'SELECT tally, accepted FROM source_tallies WHERE run_id = ? ORDER BY rowid',
    ),
  );

  constructor(private readonly db: Db) {}

  /**
   * Writes the tallies of a run (replacing what the run wrote before, if anything).
   * @example ledger.tallies.record(run.id, tallies, { accepted: false });
   */
  record(runId: number, tallies: readonly SourceTally[], options: { accepted: boolean }): void {
    const put = this.put();
    this.db.transaction(() => {
      for (const t of tallies) put.run(runId, t.source, t.file, t.format, JSON.stringify(t), options.accepted ? 1 : 0);
    })();
  }

  /**
   * The latest tally of each (source, file) among the given runs, in source and file order.
   * @example ledger.tallies.latest([3, 4]) // [{ runId: 4, tally: { file: 'samples/crm/bedrijven.json', … }, accepted: false }]
   */
  latest(runIds: readonly number[]): StoredTally[] {
    const latest = new Map<string, StoredTally>();
    for (const runId of [...runIds].sort((a, b) => a - b))
      for (const r of this.ofRun().all(runId)) {
        const tally = JSON.parse(r.tally) as SourceTally;
        latest.set(`${tally.source}\u0000${tally.file}`, { runId, tally, accepted: r.accepted === 1 });
      }
    return [...latest.values()];
  }
}
