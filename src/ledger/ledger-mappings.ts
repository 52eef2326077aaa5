/**
 * The mappings each run used (src/pipeline/definition/mapping-snapshot.ts): one row per run, its
 * snapshot as JSON. `plan --ledger` maps a row the way the run that last sent its record did, to
 * show what a changed mapping changes. Rules only, never legacy data; a few kilobytes per run.
 * The table is created when first written, so older ledgers open unchanged.
 */
import type { Db } from './schema.js';

const DDL = `
  CREATE TABLE IF NOT EXISTS run_mappings (
    run INTEGER PRIMARY KEY,
    snapshot TEXT NOT NULL);
`;

/** Keeps the mappings a run uses. */
export function recordRunMappings(db: Db, runId: number, snapshot: unknown): void {
  db.exec(DDL);
  db.prepare('INSERT OR REPLACE INTO run_mappings (run, snapshot) VALUES (?, ?)').run(runId, JSON.stringify(snapshot));
}

/** The mappings a run used, when the ledger kept them (runs before this table have none). */
export function runMappings(db: Db, runId: number): unknown {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_mappings'").get();
  if (!exists) return undefined;
  const row = db.prepare<[number], { snapshot: string }>('SELECT snapshot FROM run_mappings WHERE run = ?').get(runId);
  return row ? (JSON.parse(row.snapshot) as unknown) : undefined;
}
