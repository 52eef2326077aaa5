/**
 * `verify`: proves the data landed, field by field. The platform's live counterparties are
 * streamed (resumed with continue-from after a cut, by the client) into a scratch SQLite file;
 * the ledger's imported records of the migration are set beside them by referenceId; and each
 * record as it was sent is rebuilt by reading the legacy export again with the mappings of the
 * run that sent it (`run_mappings`), checked to be the very record sent (its frame hashes to the
 * ledger's content hash), and compared field by field with what the platform holds
 * (staged-to-streamed.ts says how). The ledger keeps no values for this: docs/privacy.md.
 *
 * Memory stays flat in the records: both sides live in the scratch file (owner-only, in a
 * temporary folder removed at the end), the export is read as a run reads it, and only counts
 * and the first records of each finding are kept in memory.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StagecoachClient } from '../../client/index.js';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { ImportedRef, Ledger } from '../../ledger/index.js';
import { frontRowContentHash, frontRowRecord } from '../../pipeline/checks/plan-impact.js';
import { restoreMappingSnapshot, takeMappingSnapshot, type MappingSnapshot } from '../../pipeline/definition/mapping-snapshot.js';
import type { PipelineDefinition } from '../../pipeline/definition/load-pipeline.js';
import { readPipelineBatches } from '../../pipeline/read-pipeline.js';
import { SEND_FORMAT } from '../../pipeline/runner/send.js';
import type { Redactor, ValuesMode } from '../../privacy/index.js';
import { pipelinesOf } from '../ledger-facts.js';
import { loadDefinitions, reportRedactor, sourcePath } from '../reconcile.js';
import { correctionsFormatOf } from '../../pipeline/checks/corrections.js';
import { acceptedBy, type AcceptRule } from './accept.js';
import { checkFields } from './staged-to-streamed.js';
import {
  RECORDS_LISTED,
  type FieldDifferenceExample,
  type FieldDifferences,
  type StrayCounterparty,
  type VerificationReport,
  type VerifiedRecordRef,
} from './verification-model.js';

export { parseAcceptRules, readAcceptFile, type AcceptRule } from './accept.js';
export type { VerificationReport } from './verification-model.js';
export { verificationHeadline, verificationLines } from './render-verification.js';

export interface VerifyOptions {
  ledger: Ledger;
  migrationId: string;
  client: Pick<StagecoachClient, 'counterparties'>;
  /** The pipelines of the migration, loaded (verify/reconcile load them from the runs' pipeline files). */
  definitions: PipelineDefinition[];
  /** How values are shown in the findings (the report's redactor). */
  redactor: Redactor;
  accept?: readonly AcceptRule[];
  signal?: AbortSignal;
  /** Called every 10,000 counterparties streamed and records compared. */
  onProgress?: (p: { phase: 'stream' | 'compare'; done: number }) => void;
}

/** Outcome codes of a sent record in the scratch file. */
const UNSEEN = 0;
const IDENTICAL = 1;
const ACCEPTED = 2;
const DIFFERS = 3;
const CHANGED_SINCE_SENT = 4;
const NOW_REFUSED = 5;

const ROWS_PER_TRANSACTION = 2000;

/**
 * Verifies what the platform holds of a migration against what was sent.
 * @example const v = await verifyMigration({ ledger, migrationId, client, definitions, redactor }); if (!v.passed) process.exitCode = 1;
 */
export async function verifyMigration(options: VerifyOptions): Promise<VerificationReport> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'stagecoach-verify-'));
  const db = new Database(join(dir, 'verify.db'));
  try {
    // A scratch file: nothing to recover after a crash, so no journal.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    // Both sides are looked up together by referenceId in the order the export holds them. The
    // live records stay in a rowid table, in the order streamed (the platform's import order,
    // close to the export's), so their pages are read nearly in order through the small
    // referenceId index; a table keyed by the random referenceIds would be read at random.
    // 32 MiB of cache (bounded, whatever the records) keeps the indexes' pages in memory.
    db.pragma('cache_size = -32768');
    db.exec(`
      CREATE TABLE live (reference_id TEXT PRIMARY KEY, seq INTEGER, data TEXT NOT NULL);
      CREATE TABLE sent (reference_id TEXT PRIMARY KEY, pipeline TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL,
        legacy_key TEXT NOT NULL, content_hash TEXT, run INTEGER, migration_id TEXT NOT NULL,
        outcome INTEGER NOT NULL DEFAULT ${UNSEEN}) WITHOUT ROWID;
    `);
    const { streamed, resumes } = await streamLive(db, options);
    const pipelines = options.definitions.map((d) => d.name);
    const imported = loadSent(db, options.ledger, pipelines);
    const tally = new Tally(options.redactor, options.accept ?? []);
    for (const def of options.definitions) await compareRows(db, def, options, tally);
    return findings(db, options, { streamed, resumes, imported, tally, pipelines, started });
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function streamLive(db: Database.Database, options: VerifyOptions): Promise<{ streamed: number; resumes: number }> {
  const insert = db.prepare('INSERT OR REPLACE INTO live (reference_id, seq, data) VALUES (?, ?, ?)');
  const flush = db.transaction((rows: Array<[string, number | null, string]>) => {
    for (const r of rows) insert.run(...r);
  });
  let pending: Array<[string, number | null, string]> = [];
  let streamed = 0;
  let resumes = 0;
  const stream = options.client.counterparties.stream({
    format: 'jsonl',
    onResume: () => resumes++,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  for await (const cp of stream) {
    pending.push([cp.referenceId, cp.sequenceNumber ?? null, JSON.stringify(cp)]);
    if (pending.length >= ROWS_PER_TRANSACTION) {
      flush(pending);
      pending = [];
    }
    if (++streamed % 10_000 === 0) options.onProgress?.({ phase: 'stream', done: streamed });
  }
  flush(pending);
  return { streamed, resumes };
}

/**
 * The records the ledger says the platform holds from an import of the migration's pipelines,
 * in this migration or an earlier one of the same pipeline (a corrections run after a completed
 * migration imports into a new one; the records it did not re-send stay live from the first),
 * into the scratch file in referenceId order (the table's key, so each insert appends); returns
 * how many.
 */
function loadSent(db: Database.Database, ledger: Ledger, pipelines: readonly string[]): number {
  const insert = db.prepare(
    'INSERT OR REPLACE INTO sent (reference_id, pipeline, file, line, legacy_key, content_hash, run, migration_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let n = 0;
  let pending: ImportedRef[] = [];
  let pipeline = '';
  const flush = db.transaction((rows: ImportedRef[]) => {
    for (const r of rows) insert.run(r.referenceId, pipeline, r.file, r.line, r.legacyKey, r.contentHash, r.run, r.migrationId);
  });
  for (pipeline of pipelines) {
    for (const r of ledger.liveImportsOf(pipeline)) {
      pending.push(r);
      n++;
      if (pending.length >= ROWS_PER_TRANSACTION) {
        flush(pending);
        pending = [];
      }
    }
    flush(pending);
    pending = [];
  }
  return n;
}

/**
 * The runs that sent the pipeline's records, grouped by the mappings they used: the pipeline as
 * each group's mappings define it (the mappings on disk when the ledger kept none for the run, or
 * they are the ones on disk now), so each record is rebuilt with the mappings of the run that
 * sent it, and the export is read once per distinct set of mappings, not once per run.
 */
async function byRunMappings(
  db: Database.Database,
  def: PipelineDefinition,
  ledger: Ledger,
): Promise<Array<{ def: PipelineDefinition; runs: Set<number | null>; close(): Promise<void> }>> {
  const runs = db
    .prepare<[string], { run: number | null }>('SELECT DISTINCT run FROM sent WHERE pipeline = ?')
    .all(def.name)
    .map((r) => r.run);
  const onDisk = JSON.stringify(await takeMappingSnapshot(def));
  const groups = new Map<string, { snapshot: MappingSnapshot | undefined; runs: Set<number | null> }>();
  for (const run of runs) {
    const snapshot = run === null ? undefined : ledger.runMappings.of(run);
    const key = snapshot ? JSON.stringify(snapshot) : onDisk;
    const g = groups.get(key) ?? { snapshot: key === onDisk ? undefined : snapshot, runs: new Set() };
    g.runs.add(run);
    groups.set(key, g);
  }
  const out: Array<{ def: PipelineDefinition; runs: Set<number | null>; close(): Promise<void> }> = [];
  for (const { snapshot, runs: groupRuns } of groups.values()) {
    if (!snapshot) {
      out.push({ def, runs: groupRuns, close: async () => undefined });
      continue;
    }
    const restored = await restoreMappingSnapshot(snapshot);
    const sources = def.sources.map((s) => {
      const m = restored.mappings.get(s.name);
      return m ? { ...s, mappingFile: { ...s.mappingFile, path: m.path, spec: m.spec } } : s;
    });
    out.push({ def: { ...def, sources }, runs: groupRuns, close: restored.close });
  }
  return out;
}

/**
 * Compares the pipeline's records as the export (then the corrections files that re-staged some)
 * rebuilds them, once per set of mappings that sent them. A row counts only where the ledger says
 * its record was sent from (same file) and by a run of the group, so a row refused once and
 * re-staged from a corrections file is judged by its corrected version.
 */
async function compareRows(db: Database.Database, pipeline: PipelineDefinition, options: VerifyOptions, tally: Tally): Promise<void> {
  for (const { def, runs, close } of await byRunMappings(db, pipeline, options.ledger)) {
    try {
      await compareRead(db, def, runs, options, tally, {});
      const files = db
        .prepare<[string, number], { file: string; run: number | null }>(
          'SELECT DISTINCT file, run FROM sent WHERE pipeline = ? AND outcome = ?',
        )
        .all(def.name, UNSEEN)
        .filter((r) => runs.has(r.run))
        .map((r) => r.file);
      const corrections: string[] = [];
      for (const f of new Set(files)) if (await correctionsFormatOf(sourcePath(f, def))) corrections.push(sourcePath(f, def));
      // One file at a time: read together, a later corrections file's row of a key an earlier one
      // also holds (the row refused again there, then fixed) would be refused as a duplicate key.
      for (const file of corrections) await compareRead(db, def, runs, options, tally, { corrections: [file] });
    } finally {
      await close();
    }
  }
}

async function compareRead(
  db: Database.Database,
  def: PipelineDefinition,
  runs: ReadonlySet<number | null>,
  options: VerifyOptions,
  tally: Tally,
  read: { corrections?: string[] },
): Promise<void> {
  // Both sides of a referenceId in one lookup (data null: the platform does not hold it).
  const getBoth = db.prepare<
    [string],
    {
      pipeline: string;
      file: string;
      line: number;
      legacy_key: string;
      content_hash: string | null;
      run: number | null;
      migration_id: string;
      outcome: number;
      data: string | null;
    }
  >(
    'SELECT s.pipeline, s.file, s.line, s.legacy_key, s.content_hash, s.run, s.migration_id, s.outcome, l.data FROM sent s LEFT JOIN live l USING (reference_id) WHERE s.reference_id = ?',
  );
  const setOutcome = db.prepare('UPDATE sent SET outcome = ? WHERE reference_id = ?');
  let compared = 0;
  for await (const rows of readPipelineBatches(def, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...read,
    hashRows: false,
    parallel: { workers: def.concurrency.workers, encode: SEND_FORMAT },
  })) {
    db.transaction(() => {
      for (const row of rows) {
        if (row.referenceId === undefined) continue;
        const s = getBoth.get(row.referenceId);
        if (!s || s.outcome !== UNSEEN || s.file !== row.row.provenance.file || !runs.has(s.run)) continue;
        if (row.kind === 'rejected') {
          setOutcome.run(NOW_REFUSED, row.referenceId);
          continue;
        }
        if (frontRowContentHash(row) !== s.content_hash) {
          setOutcome.run(CHANGED_SINCE_SENT, row.referenceId);
          continue;
        }
        if (s.data === null) continue; // not held: found below
        const record = frontRowRecord(row) as StagedCounterparty;
        const ref: VerifiedRecordRef = {
          pipeline: s.pipeline,
          file: s.file,
          line: s.line,
          legacyKey: s.legacy_key,
          referenceId: row.referenceId,
          ...(s.migration_id !== options.migrationId ? { importedIn: s.migration_id } : {}),
        };
        setOutcome.run(tally.take(record, JSON.parse(s.data) as Record<string, unknown>, ref), row.referenceId);
        if (++compared % 10_000 === 0) options.onProgress?.({ phase: 'compare', done: compared });
      }
    })();
  }
}

/** Counts per field and the first records of each, values shown as the redactor says. */
class Tally {
  readonly fields = new Map<string, FieldDifferences>();
  readonly notShown: Record<string, number> = {};

  constructor(
    private readonly redactor: Redactor,
    private readonly accept: readonly AcceptRule[],
  ) {}

  take(sent: StagedCounterparty, held: Record<string, unknown>, ref: VerifiedRecordRef): number {
    let outcome = IDENTICAL;
    for (const c of checkFields(sent, held)) {
      if (c.verdict === 'same') continue;
      if (c.verdict === 'notShown') {
        this.notShown[c.field] = (this.notShown[c.field] ?? 0) + 1;
        continue;
      }
      let f = this.fields.get(c.field);
      if (!f) this.fields.set(c.field, (f = { field: c.field, differing: 0, accepted: 0, records: [] }));
      const rule = acceptedBy(this.accept, c.field, c.sent, c.held);
      if (rule) f.accepted++;
      else f.differing++;
      outcome = rule ? Math.max(outcome, ACCEPTED) : DIFFERS;
      if (f.records.length < RECORDS_LISTED) {
        const example: FieldDifferenceExample = {
          ...ref,
          legacyKey: this.redactor.legacyKey(ref.legacyKey),
          sent: this.shown(c.field, c.sent),
          held: this.shown(c.field, c.held),
          ...(rule ? { acceptedBy: rule.text } : {}),
        };
        f.records.push(example);
      }
    }
    return outcome;
  }

  /** `"Vermeul***" (31 chars)`, `2 items […]`, `nothing`. */
  private shown(field: string, value: unknown): string {
    if (value === undefined || value === null) return 'nothing';
    if (typeof value === 'string') return `"${this.redactor.value(field, value)}" (${[...value].length} chars)`;
    if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? '' : 's'} ${this.redactor.value(field, value)}`;
    return this.redactor.value(field, value);
  }
}

function findings(
  db: Database.Database,
  options: VerifyOptions,
  t: { streamed: number; resumes: number; imported: number; tally: Tally; pipelines: string[]; started: number },
): VerificationReport {
  const { redactor } = options;
  type SentRow = {
    reference_id: string;
    pipeline: string;
    file: string;
    line: number;
    legacy_key: string;
    migration_id: string;
    outcome: number;
  };
  const refOf = (r: SentRow): VerifiedRecordRef => ({
    pipeline: r.pipeline,
    file: r.file,
    line: r.line,
    legacyKey: redactor.legacyKey(r.legacy_key),
    referenceId: r.reference_id,
    ...(r.migration_id !== options.migrationId ? { importedIn: r.migration_id } : {}),
  });
  const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  const notHeldSql = 'FROM sent s WHERE NOT EXISTS (SELECT 1 FROM live l WHERE l.reference_id = s.reference_id)';
  const notHeld = {
    total: count(`SELECT count(*) AS n ${notHeldSql}`),
    records: db.prepare<[number], SentRow>(`SELECT * ${notHeldSql} ORDER BY pipeline, file, line LIMIT ?`).all(RECORDS_LISTED).map(refOf),
  };
  const unverifiableSql = `FROM sent s WHERE s.outcome IN (${UNSEEN}, ${CHANGED_SINCE_SENT}, ${NOW_REFUSED}) AND EXISTS (SELECT 1 FROM live l WHERE l.reference_id = s.reference_id)`;
  const notVerifiable = {
    total: count(`SELECT count(*) AS n ${unverifiableSql}`),
    records: db
      .prepare<[number], SentRow>(`SELECT * ${unverifiableSql} ORDER BY pipeline, file, line LIMIT ?`)
      .all(RECORDS_LISTED)
      .map((r) => ({
        ...refOf(r),
        why:
          r.outcome === CHANGED_SINCE_SENT
            ? 'the legacy row maps to another record than the one sent (the export or the mapping changed since)'
            : r.outcome === NOW_REFUSED
              ? r.migration_id === options.migrationId
                ? 'the legacy row is refused before upload now (the export changed since)'
                : 'the legacy row the ledger now points to is refused before upload (the earlier import was sent from a corrections file, or the export changed since)'
              : 'its legacy row is no longer where it was sent from (the export or corrections file moved, or changed)',
      })),
  };
  const byOutcome = (o: number) => count(`SELECT count(*) AS n FROM sent WHERE outcome = ${o}`);
  const identical = byOutcome(IDENTICAL);
  const identicalAfterAccepted = byOutcome(ACCEPTED);
  const differing = byOutcome(DIFFERS);
  const fromEarlier = (db.prepare('SELECT count(*) AS n FROM sent WHERE migration_id <> ?').get(options.migrationId) as { n: number }).n;

  // Strays: live counterparties no live import of the pipelines, in any of their migrations, explains.
  const firstSeq = (db.prepare('SELECT min(l.seq) AS s FROM live l JOIN sent USING (reference_id)').get() as { s: number | null }).s;
  const unexplained = db
    .prepare<[], { reference_id: string; seq: number | null }>(
      'SELECT reference_id, seq FROM live l WHERE NOT EXISTS (SELECT 1 FROM sent s WHERE s.reference_id = l.reference_id) ORDER BY seq',
    )
    .all();
  const known = new Map(options.ledger.recordsByReferenceIds(unexplained.map((u) => u.reference_id)).map((r) => [r.referenceId!, r]));
  const strays: VerificationReport['strays'] = { total: 0, earlierMigration: 0, unknown: 0, records: [] };
  let preExisting = 0;
  let otherPipelines = 0;
  for (const u of unexplained) {
    const k = known.get(u.reference_id);
    // Imported by another pipeline of this ledger, in a migration of its own: explained by the
    // ledger, and verified by verifying that pipeline's migration, not here.
    if (k && k.state === 'imported' && !t.pipelines.includes(k.pipeline)) {
      otherPipelines++;
      continue;
    }
    if (!k && firstSeq !== null && u.seq !== null && u.seq < firstSeq) {
      preExisting++;
      continue;
    }
    strays.total++;
    if (k) strays.earlierMigration++;
    else strays.unknown++;
    if (strays.records.length >= RECORDS_LISTED) continue;
    const stray: StrayCounterparty = k
      ? {
          referenceId: u.reference_id,
          sequenceNumber: u.seq ?? undefined,
          origin: 'earlier-migration',
          pipeline: k.pipeline,
          legacyKey: redactor.legacyKey(k.legacyKey ?? ''),
          file: k.provenance.file,
          line: k.provenance.line,
          ...(k.migrationId ? { migrationId: k.migrationId } : {}),
          state: k.state,
        }
      : { referenceId: u.reference_id, sequenceNumber: u.seq ?? undefined, origin: 'unknown' };
    strays.records.push(stray);
  }

  const fields = [...t.tally.fields.values()].sort(
    (a, b) => b.differing - a.differing || b.accepted - a.accepted || a.field.localeCompare(b.field),
  );
  for (const f of fields) f.records.sort((a, b) => Number(a.acceptedBy !== undefined) - Number(b.acceptedBy !== undefined));
  const problems: string[] = [];
  const s = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  if (differing > 0)
    problems.push(
      `${s(differing, 'record')} the platform holds otherwise than sent (${fields
        .filter((f) => f.differing > 0)
        .map((f) => `${f.field}: ${f.differing}`)
        .join(', ')})`,
    );
  if (notHeld.total > 0) problems.push(`${s(notHeld.total, 'imported record')} the platform does not hold`);
  if (strays.total > 0)
    problems.push(
      `${s(strays.total, 'live counterparty', 'live counterparties')} no live import of the pipelines explains (${strays.earlierMigration} known to the ledger in another state, ${strays.unknown} unknown)`,
    );
  if (notVerifiable.total > 0)
    problems.push(`${s(notVerifiable.total, 'record')} could not be rebuilt from the export as sent: not verified`);
  return {
    migrationId: options.migrationId,
    pipelines: t.pipelines,
    streamed: t.streamed,
    resumes: t.resumes,
    imported: t.imported,
    importedEarlier: fromEarlier,
    identical,
    identicalAfterAccepted,
    differing,
    notHeld,
    notVerifiable,
    fields,
    notShown: t.tally.notShown,
    strays,
    preExisting,
    otherPipelines,
    accept: (options.accept ?? []).map((r) => r.text),
    passed: problems.length === 0,
    problems,
    seconds: Math.round((Date.now() - t.started) / 100) / 10,
  };
}

export interface VerifyForReportOptions {
  ledger: Ledger;
  migrationId: string;
  client: Pick<StagecoachClient, 'counterparties'>;
  accept?: readonly AcceptRule[];
  /** How values are shown (default: the pipelines' setting, else masked), as in the report. */
  values?: ValuesMode;
  signal?: AbortSignal;
  onProgress?: VerifyOptions['onProgress'];
}

/**
 * Verifies every pipeline of the migration (their definitions from their latest runs' pipeline
 * files), values shown as the reconciliation report shows them: what `verify` and `migrate` run.
 * @example const v = await verify({ ledger, migrationId, client }); await reconcile({ ledger, migrationId, client, verification: v });
 */
export async function verify(options: VerifyForReportOptions): Promise<VerificationReport> {
  const { ledger, migrationId } = options;
  const definitions = await loadDefinitions(ledger, pipelinesOf(ledger, migrationId));
  const redactor = reportRedactor(options.values ? { values: options.values } : {}, definitions, ledger.file, migrationId);
  return verifyMigration({
    ledger,
    migrationId,
    client: options.client,
    definitions,
    redactor,
    ...(options.accept ? { accept: options.accept } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}
