/**
 * `verify`: proves the data landed, field by field. The ledger's imported records of the
 * migration go into a scratch SQLite file, keyed by referenceId; then, in one pass, the legacy
 * export is read again with the mappings of the run that sent each record (`run_mappings`),
 * each record rebuilt is checked to be the very record sent (its frame hashes to the ledger's
 * content hash), and the platform's live counterparties are streamed beside it (resumed with
 * continue-from after a cut, by the client), kept a little ahead of the export. Each record is
 * compared field by field (staged-to-streamed.ts says how) as soon as both its sides are there;
 * whichever side comes first waits in a bounded map (pending-pairs.ts). The ledger keeps no
 * values for this: docs/privacy.md.
 *
 * Memory stays bounded in the records: the ledger's side lives in the scratch file (owner-only,
 * in a temporary folder removed at the end), at most `pendingBound` records wait in memory for
 * their other side (the overflow goes to the scratch file), the export is read as a run reads it,
 * and only counts and the first records of each finding are kept in memory.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StagecoachClient } from '../../client/index.js';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { Ledger } from '../../ledger/index.js';
import { frontRowContentHash, frontRowRecord } from '../../pipeline/checks/plan-impact.js';
import { restoreMappingSnapshot, takeMappingSnapshot, type MappingSnapshot } from '../../pipeline/definition/mapping-snapshot.js';
import type { PipelineDefinition } from '../../pipeline/definition/load-pipeline.js';
import { readPipelineBatches } from '../../pipeline/read-pipeline.js';
import { SEND_FORMAT } from '../../pipeline/runner/send.js';
import type { FrontRow } from '../../pipeline/types.js';
import type { Redactor, ValuesMode } from '../../privacy/index.js';
import { pipelinesOf } from '../ledger-facts.js';
import { loadDefinitions, reportRedactor, sourcePath } from '../reconcile.js';
import { correctionsFormatOf } from '../../pipeline/checks/corrections.js';
import { acceptedBy, type AcceptRule } from './accept.js';
import { PendingPairs } from './pending-pairs.js';
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

/**
 * Records that may wait in memory for their other side, both sides together (about 2 kB each).
 * The stream is pulled up to half of it ahead of the export: more than the few thousand records
 * by which the platform's import order strays from the export's (docs/performance.md).
 */
export const PENDING_BOUND = 20_000;

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
  /** Records that may wait in memory for their other side (default PENDING_BOUND); the rest wait in the scratch file. */
  pendingBound?: number;
  /** Told at the end how many records each side had to put in the scratch file (for tests). */
  onSpilled?: (spilled: { live: number; expected: number }) => void;
}

/** Outcome codes of a sent record in the scratch file. */
const UNSEEN = 0;
const IDENTICAL = 1;
const ACCEPTED = 2;
const DIFFERS = 3;
const CHANGED_SINCE_SENT = 4;
const NOW_REFUSED = 5;
/** Rebuilt as sent, waiting for the platform's record (still so at the end: the platform does not hold it). */
const REBUILT = 6;

/** A live counterparty as streamed (the shape staged-to-streamed.ts compares against). */
type LiveRecord = Record<string, unknown> & { referenceId: string; sequenceNumber?: number };

/**
 * Verifies what the platform holds of a migration against what was sent.
 * @example const v = await verifyMigration({ ledger, migrationId, client, definitions, redactor }); if (!v.passed) process.exitCode = 1;
 */
export async function verifyMigration(options: VerifyOptions): Promise<VerificationReport> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'stagecoach-verify-'));
  const db = new Database(join(dir, 'verify.db'));
  try {
    // A scratch file: nothing to recover after a crash, so no journal, and all of it one
    // transaction (nothing to roll back). 32 MiB of cache (bounded, whatever the records) keeps
    // the sent table's pages in memory at the sizes measured; beyond, SQLite spills pages to the file.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -32768');
    db.exec(`
      CREATE TABLE sent (reference_id TEXT PRIMARY KEY, pipeline TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL,
        legacy_key TEXT NOT NULL, content_hash TEXT, run INTEGER, migration_id TEXT NOT NULL,
        outcome INTEGER NOT NULL DEFAULT ${UNSEEN}, held INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
      CREATE TABLE unexplained (reference_id TEXT PRIMARY KEY, seq INTEGER) WITHOUT ROWID;
    `);
    db.exec('BEGIN');
    const pipelines = options.definitions.map((d) => d.name);
    const imported = loadSent(db, options.ledger, pipelines);
    const tally = new Tally(options.redactor, options.accept ?? []);
    const matcher = new Matcher(db, options, tally, options.pendingBound ?? PENDING_BOUND);
    try {
      for (const def of options.definitions) await compareRows(db, def, options, matcher);
      await matcher.drain();
    } finally {
      await matcher.close();
    }
    options.onSpilled?.({ ...matcher.pairs.spilled });
    const report = findings(db, options, {
      streamed: matcher.streamed,
      resumes: matcher.resumes,
      firstSeq: matcher.firstSeq,
      imported,
      tally,
      pipelines,
      started,
    });
    db.exec('COMMIT');
    return report;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
  for (const pipeline of pipelines) {
    for (const r of ledger.liveImportsOf(pipeline)) {
      insert.run(r.referenceId, pipeline, r.file, r.line, r.legacyKey, r.contentHash, r.run, r.migrationId);
      n++;
    }
  }
  return n;
}

/**
 * Sets each live counterparty beside the record rebuilt for it, as either comes: the export's
 * rows are handed in by `compareRead`, the live records are pulled from the stream to stay
 * `lead` records ahead of them (the platform's import order is close to the export's, so most
 * records find their other side waiting, in memory). A record's state is its row in `sent`:
 * `outcome` (UNSEEN until its legacy row is judged; REBUILT while its rebuilt record waits in the
 * scratch file) and `held` (the platform streamed it). A live record is looked up in `sent` only
 * when it is compared, or when nothing came for it by the end: two statements a record.
 */
class Matcher {
  streamed = 0;
  resumes = 0;
  /** The lowest sequence number of a live record that an import explains (older unexplained ones pre-exist the migration). */
  firstSeq: number | null = null;
  readonly pairs: PendingPairs<LiveRecord, StagedCounterparty>;
  private compared = 0;
  /** Legacy rows judged: the stream is kept `lead` records ahead of them. */
  private judged = 0;
  private readonly lead: number;
  private readonly feed: AsyncGenerator<LiveRecord, void, undefined>;
  private ended = false;
  private readonly getSent;
  private readonly getRef;
  private readonly setOutcome;
  private readonly settle;
  private readonly hold;
  private readonly addUnexplained;

  constructor(
    db: Database.Database,
    private readonly options: VerifyOptions,
    private readonly tally: Tally,
    bound: number,
  ) {
    this.getSent = db.prepare<[string], { file: string; content_hash: string | null; run: number | null; outcome: number }>(
      'SELECT file, content_hash, run, outcome FROM sent WHERE reference_id = ?',
    );
    this.getRef = db.prepare<[string], { pipeline: string; file: string; line: number; legacy_key: string; migration_id: string }>(
      'SELECT pipeline, file, line, legacy_key, migration_id FROM sent WHERE reference_id = ?',
    );
    this.setOutcome = db.prepare<[number, string]>('UPDATE sent SET outcome = ? WHERE reference_id = ?');
    this.settle = db.prepare<[number, string]>('UPDATE sent SET outcome = ?, held = 1 WHERE reference_id = ?');
    this.hold = db.prepare<[string], { outcome: number }>('UPDATE sent SET held = 1 WHERE reference_id = ? RETURNING outcome');
    this.addUnexplained = db.prepare<[string, number | null]>('INSERT OR REPLACE INTO unexplained (reference_id, seq) VALUES (?, ?)');
    // A rebuilt record put in the scratch file is marked, so that its legacy row counts as judged.
    this.pairs = new PendingPairs(db, bound, (side, id) => {
      if (side === 'expected') this.setOutcome.run(REBUILT, id);
    });
    this.lead = Math.max(1, Math.floor(bound / 2));
    this.feed = options.client.counterparties.stream({
      format: 'jsonl',
      onResume: () => this.resumes++,
      ...(options.signal ? { signal: options.signal } : {}),
    }) as AsyncGenerator<LiveRecord, void, undefined>;
  }

  /**
   * A legacy row, mapped and checked as a run would: judged when the ledger says its record was
   * sent from this file by a run of `runs` and it is not judged yet (so a row refused once and
   * re-staged from a corrections file is judged by its corrected version).
   */
  rowRead(row: FrontRow, runs: ReadonlySet<number | null>): void {
    const id = row.referenceId;
    if (id === undefined) return;
    const s = this.getSent.get(id);
    if (!s || s.outcome !== UNSEEN || s.file !== row.row.provenance.file || !runs.has(s.run)) return;
    if (this.pairs.hasInMemory('expected', id)) return;
    this.judged++;
    if (row.kind === 'rejected') {
      this.setOutcome.run(NOW_REFUSED, id);
      return;
    }
    if (frontRowContentHash(row) !== s.content_hash) {
      this.setOutcome.run(CHANGED_SINCE_SENT, id);
      return;
    }
    const record = frontRowRecord(row) as StagedCounterparty;
    const live = this.pairs.take('live', id);
    if (!live) {
      this.pairs.put('expected', id, record);
      return;
    }
    this.explain(live.sequenceNumber ?? null);
    this.settle.run(this.compare(id, record, live), id);
  }

  /** Pulls live records until the stream is `lead` records ahead of the legacy rows judged. */
  async keepAhead(): Promise<void> {
    while (!this.ended && this.streamed < this.judged + this.lead) await this.pull();
  }

  /**
   * The rest of the stream; then each live record nothing came for is marked held (its legacy row
   * was refused, changed, or not found), or kept as unexplained when no import explains it.
   */
  async drain(): Promise<void> {
    while (!this.ended) await this.pull();
    for (const [id, cp] of this.pairs.remaining('live')) {
      const seq = cp.sequenceNumber ?? null;
      if (this.hold.get(id)) this.explain(seq);
      else this.addUnexplained.run(id, seq);
    }
  }

  async close(): Promise<void> {
    if (!this.ended) await this.feed.return();
  }

  private async pull(): Promise<void> {
    const next = await this.feed.next();
    if (next.done) {
      this.ended = true;
      return;
    }
    this.arrive(next.value);
    if (++this.streamed % 10_000 === 0) this.options.onProgress?.({ phase: 'stream', done: this.streamed });
  }

  /** A live record: compared when its rebuilt record waits, else set down to wait for it. */
  private arrive(cp: LiveRecord): void {
    const id = cp.referenceId;
    const waiting = this.pairs.take('expected', id);
    if (!waiting) {
      this.pairs.put('live', id, cp);
      return;
    }
    this.explain(cp.sequenceNumber ?? null);
    this.settle.run(this.compare(id, waiting, cp), id);
  }

  private explain(seq: number | null): void {
    if (seq !== null && (this.firstSeq === null || seq < this.firstSeq)) this.firstSeq = seq;
  }

  private compare(id: string, record: StagedCounterparty, live: LiveRecord): number {
    const outcome = this.tally.take(record, live, () => this.refOf(id));
    if (++this.compared % 10_000 === 0) this.options.onProgress?.({ phase: 'compare', done: this.compared });
    return outcome;
  }

  /** Where a record came from, for the examples of a difference (looked up only then). */
  private refOf(id: string): VerifiedRecordRef {
    const s = this.getRef.get(id)!;
    return {
      pipeline: s.pipeline,
      file: s.file,
      line: s.line,
      legacyKey: s.legacy_key,
      referenceId: id,
      ...(s.migration_id !== this.options.migrationId ? { importedIn: s.migration_id } : {}),
    };
  }
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
 * rebuilds them, once per set of mappings that sent them.
 */
async function compareRows(db: Database.Database, pipeline: PipelineDefinition, options: VerifyOptions, matcher: Matcher): Promise<void> {
  for (const { def, runs, close } of await byRunMappings(db, pipeline, options.ledger)) {
    try {
      await compareRead(def, runs, options, matcher, {});
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
      for (const file of corrections) await compareRead(def, runs, options, matcher, { corrections: [file] });
    } finally {
      await close();
    }
  }
}

/**
 * Threads verify keeps busy beside reading the export: this one, which parses and checks the
 * stream too. As for `run`, `concurrency.workers: auto` gives readers only the cores left.
 */
const VERIFY_BUSY_THREADS = 1;

async function compareRead(
  def: PipelineDefinition,
  runs: ReadonlySet<number | null>,
  options: VerifyOptions,
  matcher: Matcher,
  read: { corrections?: string[] },
): Promise<void> {
  for await (const rows of readPipelineBatches(def, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...read,
    hashRows: false,
    parallel: { workers: def.concurrency.workers, busyThreads: VERIFY_BUSY_THREADS, encode: SEND_FORMAT },
  })) {
    for (const row of rows) matcher.rowRead(row, runs);
    await matcher.keepAhead();
  }
}

/**
 * Keeps a field's example among the RECORDS_LISTED listed: those with the lowest referenceIds, so
 * which records a report lists does not depend on the order they were compared in (which the
 * pending bound and the threads' timing change). `make` runs only for a record that is listed.
 */
function listExample(records: FieldDifferenceExample[], referenceId: string, make: () => FieldDifferenceExample): void {
  if (records.length < RECORDS_LISTED) {
    records.push(make());
    return;
  }
  let highest = 0;
  for (let i = 1; i < records.length; i++) if (records[i]!.referenceId > records[highest]!.referenceId) highest = i;
  if (referenceId < records[highest]!.referenceId) records[highest] = make();
}

/** Counts per field and some records of each, values shown as the redactor says. */
class Tally {
  readonly fields = new Map<string, FieldDifferences>();
  readonly notShown: Record<string, number> = {};

  constructor(
    private readonly redactor: Redactor,
    private readonly accept: readonly AcceptRule[],
  ) {}

  /** The outcome of one record; `refOf` says where it came from, asked only for an example. */
  take(sent: StagedCounterparty, held: Record<string, unknown>, refOf: () => VerifiedRecordRef): number {
    let outcome = IDENTICAL;
    let ref: VerifiedRecordRef | undefined;
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
      listExample(f.records, sent.referenceId, () => {
        ref ??= refOf();
        return {
          ...ref,
          legacyKey: this.redactor.legacyKey(ref.legacyKey),
          sent: this.shown(c.field, c.sent),
          held: this.shown(c.field, c.held),
          ...(rule ? { acceptedBy: rule.text } : {}),
        };
      });
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
  t: {
    streamed: number;
    resumes: number;
    firstSeq: number | null;
    imported: number;
    tally: Tally;
    pipelines: string[];
    started: number;
  },
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
  const notHeldSql = 'FROM sent s WHERE held = 0';
  const notHeld = {
    total: count(`SELECT count(*) AS n ${notHeldSql}`),
    records: db.prepare<[number], SentRow>(`SELECT * ${notHeldSql} ORDER BY pipeline, file, line LIMIT ?`).all(RECORDS_LISTED).map(refOf),
  };
  const unverifiableSql = `FROM sent s WHERE s.outcome IN (${UNSEEN}, ${CHANGED_SINCE_SENT}, ${NOW_REFUSED}) AND held = 1`;
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
  const firstSeq = t.firstSeq;
  const unexplained = db
    .prepare<[], { reference_id: string; seq: number | null }>('SELECT reference_id, seq FROM unexplained ORDER BY seq')
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
  // Differing before accepted, then in export order, whatever order the records were compared in.
  for (const f of fields)
    f.records.sort(
      (a, b) =>
        Number(a.acceptedBy !== undefined) - Number(b.acceptedBy !== undefined) ||
        a.pipeline.localeCompare(b.pipeline) ||
        a.file.localeCompare(b.file) ||
        a.line - b.line,
    );
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

export interface VerifyForReportOptions extends Pick<VerifyOptions, 'pendingBound' | 'onSpilled'> {
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
    ...(options.pendingBound !== undefined ? { pendingBound: options.pendingBound } : {}),
    ...(options.onSpilled ? { onSpilled: options.onSpilled } : {}),
  });
}
