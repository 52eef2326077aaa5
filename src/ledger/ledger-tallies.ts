/**
 * The ledger's record of what each run read from each source file, counted two ways
 * (src/pipeline/source/tally.ts): one row per run and file. The reconciliation report reads it
 * to list every file the parser and the independent count disagree on, or that was cut off.
 * Its table is created when first written, so older ledgers open unchanged.
 */
import type { Db } from './schema.js';
import type { SourceTally } from './types.js';

const DDL = `
  CREATE TABLE IF NOT EXISTS source_tallies (
    run_id INTEGER NOT NULL,
    source TEXT NOT NULL,
    file TEXT NOT NULL,
    format TEXT NOT NULL,
    tally TEXT NOT NULL,
    accepted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, source, file));
`;

/** A file's tally as a run kept it; `accepted`: the run was told to accept a cut-off file (--allow-truncated). */
export interface StoredTally {
  runId: number;
  tally: SourceTally;
  accepted: boolean;
}

/**
 * Writes the tallies of a run (replacing what the run wrote before, if anything).
 * @example recordTallies(ledger.db, run.id, tallies, { accepted: false });
 */
export function recordTallies(db: Db, runId: number, tallies: readonly SourceTally[], options: { accepted: boolean }): void {
  db.exec(DDL);
  const insert = db.prepare(
    'INSERT OR REPLACE INTO source_tallies (run_id, source, file, format, tally, accepted) VALUES (?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const t of tallies) insert.run(runId, t.source, t.file, t.format, JSON.stringify(t), options.accepted ? 1 : 0);
  })();
}

/**
 * The latest tally of each (source, file) among the given runs, in source and file order.
 * @example tallies(ledger.db, [3, 4]) // [{ runId: 4, tally: { file: 'samples/crm/bedrijven.json', … }, accepted: false }]
 */
export function tallies(db: Db, runIds: readonly number[]): StoredTally[] {
  if (runIds.length === 0) return [];
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'source_tallies'").get();
  if (!exists) return [];
  const rows = db
    .prepare(
      `SELECT run_id AS runId, tally, accepted FROM source_tallies WHERE run_id IN (${runIds.map(() => '?').join(', ')}) ORDER BY run_id, rowid`,
    )
    .all(...runIds) as { runId: number; tally: string; accepted: number }[];
  const latest = new Map<string, StoredTally>();
  for (const r of rows) {
    const tally = JSON.parse(r.tally) as SourceTally;
    latest.set(`${tally.source}\u0000${tally.file}`, { runId: r.runId, tally, accepted: r.accepted === 1 });
  }
  return [...latest.values()];
}
