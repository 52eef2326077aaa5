/**
 * Says which legacy row a `RELATION_TARGET_MISSING` from validation points at. The job's result
 * names only the record and the field (`relations.0.to`), and the platform's log only the
 * target's UUID: useless to someone holding a legacy export. While the record is still staged,
 * its `relations[i].to` is the target's referenceId; the ledger maps that back to the target's
 * legacy key, row and fate (refused before upload, by staging, by validation …), which is what
 * the person fixing the export needs: the record's own key and row, the target's, and what to do.
 */
import type { Ledger, RecordRow } from '../ledger/index.js';

/** Staged records looked up at once (each is one GET). */
const LOOKUPS_AT_ONCE = 8;

/** A validation error as the chain hands it to the ledger. */
export interface ValidationFinding {
  referenceId: string;
  field: string;
  message: string;
  code?: string;
}

export interface StagedLookup {
  getStaged(migrationId: string, referenceId: string, opts?: { signal?: AbortSignal }): Promise<unknown>;
}

const RELATION_FIELD = /^relations\.(\d+)\.to$/;

const isRelationMiss = (e: ValidationFinding) => (e.code ?? e.message.trim()) === 'RELATION_TARGET_MISSING' && RELATION_FIELD.test(e.field);

const where = (r: RecordRow) => `${r.provenance.file}:${r.provenance.line}`;
const keyOf = (r: RecordRow) => r.legacyKey ?? where(r);

/** Why the platform does not hold the target, from the target's record in the ledger. */
function fate(target: RecordRow, migrationId: string, removed: ReadonlySet<string>): string {
  const code = target.errors[0]?.code;
  const because = code ? ` (${code})` : '';
  switch (target.state) {
    case 'rejected':
      return `refused before upload${because}`;
    case 'failed':
      return `refused by staging${because}`;
    case 'invalid':
      return `refused by validation${because}${target.referenceId && removed.has(target.referenceId) ? ' and removed from staging' : ''}`;
    case 'mapped':
    case 'in_flight':
      return 'not staged yet (its upload did not complete; run the pipeline again)';
    default:
      return target.migrationId && target.migrationId !== migrationId
        ? `${target.state} in another migration (${target.migrationId})`
        : `${target.state} in the ledger, yet not on the platform`;
  }
}

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

/**
 * Rewrites each `RELATION_TARGET_MISSING` of a validation into a message that names the record's
 * row and key, the target's key and row and why the platform lacks it, and what to do; other
 * errors pass unchanged. Call it while the records are still staged (before any removal).
 * @example const findings = await explainRelationTargets(client.migrations, ledger, id, v.errors);
 *   // 'record 1003 (people.csv:4): relations.0.to (GUARANTOR) points at legacy key 2001
 *   //  (orgs.json:7), refused by validation (UNKNOWN_CODE) and removed from staging'
 */
export async function explainRelationTargets(
  api: StagedLookup,
  ledger: Ledger,
  migrationId: string,
  errors: readonly ValidationFinding[],
  options: { signal?: AbortSignal } = {},
): Promise<ValidationFinding[]> {
  const misses = errors.filter(isRelationMiss);
  if (misses.length === 0) return [...errors];
  const staged = new Map<string, Array<{ type?: unknown; to?: unknown }>>();
  await inBatches([...new Set(misses.map((e) => e.referenceId))], LOOKUPS_AT_ONCE, async (ref) => {
    const record = (await api.getStaged(migrationId, ref, options.signal ? { signal: options.signal } : {})) as
      | { relations?: Array<{ type?: unknown; to?: unknown }> }
      | undefined;
    if (Array.isArray(record?.relations)) staged.set(ref, record.relations);
  });
  const targetOf = (e: ValidationFinding) => {
    const rel = staged.get(e.referenceId)?.[Number(RELATION_FIELD.exec(e.field)![1])];
    return { to: typeof rel?.to === 'string' ? rel.to : undefined, type: typeof rel?.type === 'string' ? rel.type : undefined };
  };
  const wanted = new Set<string>(misses.map((e) => e.referenceId));
  for (const e of misses) {
    const { to } = targetOf(e);
    if (to) wanted.add(to);
  }
  const known = new Map(ledger.recordsByReferenceIds(wanted).map((r) => [r.referenceId!, r]));
  const removed = new Set(ledger.removals.active(migrationId).keys());

  return errors.map((e) => {
    if (!isRelationMiss(e)) return e;
    const self = known.get(e.referenceId);
    const who = self ? `record ${keyOf(self)} (${where(self)})` : `record ${e.referenceId}`;
    const { to, type } = targetOf(e);
    const relation = `${e.field}${type ? ` (${type})` : ''}`;
    const target = to ? known.get(to) : undefined;
    const what = !to
      ? `${relation} points at a counterparty the platform does not hold (the staged record could not be read to say which)`
      : target
        ? `${relation} points at legacy key ${keyOf(target)} (${where(target)}), ${fate(target, migrationId, removed)}`
        : `${relation} points at referenceId ${to}, which no row of the pipelines in this ledger holds`;
    const todo = target
      ? 'fix that row first (it is in the corrections file with its own error), or correct or empty this key'
      : 'correct the key this row points at, or empty it';
    return { ...e, code: 'RELATION_TARGET_MISSING', message: `${who}: ${what} — ${todo}` };
  });
}
