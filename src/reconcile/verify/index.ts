/**
 * `verify`: proves the data landed. Two passes, the second only when the first leaves records:
 *
 * 1. The proof (no export read): the platform's live counterparties streamed (resumed with
 *    continue-from after a cut, by the client) are paired by referenceId with the ledger's live
 *    imports of the migration's pipelines (one sequential read of the ledger, in the order the
 *    records were staged, kept a little ahead of the stream). A live record that, written back the
 *    way staging takes it, hashes to the content hash the ledger kept of the frame sent holds
 *    every field exactly as sent (HashProof, staged-to-streamed.ts): identical. Imports the
 *    platform does not hold, and live records no import explains, are found here.
 * 2. The comparison, for the records the proof left (their referenceIds in a scratch table): three
 *    sides of each set side by side (the Matcher), the ledger's import, the legacy export read
 *    again with the mappings of the run that sent it (`run_mappings`), the record rebuilt checked
 *    to be the very record sent (its frame hashes to the ledger's content hash), and the live
 *    record streamed again; then field by field (staged-to-streamed.ts says how). The rows, the
 *    ledger's records and the live records of proven records are dropped as they come.
 *
 * A record proven by hash is identical even when its legacy row changed or left the export since:
 * verify proves the platform holds what was sent (what the export says now is `plan`'s business).
 * The ledger keeps no values for this: docs/privacy.md.
 *
 * Memory stays bounded in the records: at most `pendingBound` records wait in memory for their
 * other sides (the overflow goes to a scratch file, owner-only, in a temporary folder removed at
 * the end), the export is read as a run reads it, and only counts and the first records of each
 * finding are kept in memory.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StagecoachClient, UncheckedCounterparty } from '../../client/index.js';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { ImportedRef, Ledger } from '../../ledger/index.js';
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
import { PendingRecords } from './pending-records.js';
import { addedFields, checkFields, HashProof } from './staged-to-streamed.js';
import { FormsTally, ID_IN_OTHER_FORM } from './platform-forms.js';
import { idKey } from '../../contract/canonical-form.js';
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
 * Records that may wait in memory for their other sides (a streamed or rebuilt person is about
 * 2 kB there, a ledger's record a few hundred bytes). In the proof the ledger is read a quarter
 * of it ahead of the stream, in the comparison the ledger and the stream each a quarter ahead of
 * the export: more than the few thousand records by which the platform's import order strays
 * from the staging order (docs/performance.md), with room left for that disorder.
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
  /** Called every 10,000 counterparties streamed and records paired in the proof pass. */
  onProgress?: (p: { phase: 'stream' | 'compare'; done: number }) => void;
  /** Records that may wait in memory for their other sides (default PENDING_BOUND); the rest wait in the scratch file. */
  pendingBound?: number;
  /** Told at the end how many records had to wait in the scratch file (for tests). */
  onSpilled?: (spilled: number) => void;
}

/** Outcome codes of a sent record (the proof settles IDENTICAL; the comparison any). */
const UNSEEN = 0;
const IDENTICAL = 1;
const ACCEPTED = 2;
const DIFFERS = 3;
const CHANGED_SINCE_SENT = 4;
const NOW_REFUSED = 5;
/** Rebuilt as sent, waiting for the platform's record (still so at the end: the platform does not hold it). */
const REBUILT = 6;
/** Every field as sent, but the platform holds values the record was not sent with (platform-forms.ts): not identical. */
const ADDED = 7;

/** A live counterparty as streamed (the shape staged-to-streamed.ts compares against). */
type LiveRecord = UncheckedCounterparty;

/** The ledger's import of a record (with the pipeline it belongs to). */
type SentRecord = ImportedRef;

/** A legacy row read before the ledger's record of it came: judged when that comes. */
interface EarlyRow {
  file: string;
  /** The index of the pass's runs (Matcher.passRuns). */
  pass: number;
  refused: boolean;
  contentHash?: string;
  record?: StagedCounterparty;
}

/** What the comparison knows of a record whose sides have not all come (each part absent until its side comes). */
interface Pending {
  /** The ledger's import of it; false: the ledger's record of it is no live import (its legacy row is not judged, its live record is a stray). */
  sent?: SentRecord | false;
  outcome: number;
  /** Rebuilt as sent (outcome REBUILT), waiting for the live record. */
  record?: StagedCounterparty;
  /** Streamed, waiting for the ledger's record or the rebuilt one. */
  live?: LiveRecord;
  /** The live record came and was compared, or waits here. */
  held?: true;
  /** Legacy rows read before the ledger's record came, in the order read. */
  early?: EarlyRow[];
}

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
    // transaction (nothing to roll back). Only the overflow of the pending records, the live
    // records no import explains and the referenceIds the proof left go there.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec('CREATE TABLE unexplained (reference_id TEXT PRIMARY KEY, seq INTEGER) WITHOUT ROWID');
    db.exec('CREATE TABLE unproven (reference_id TEXT PRIMARY KEY) WITHOUT ROWID');
    db.exec('BEGIN');
    const pipelines = options.definitions.map((d) => d.name);
    const bound = options.pendingBound ?? PENDING_BOUND;
    const tally = new Tally(options.redactor, options.accept ?? []);
    const verdicts = new Verdicts(db, options.migrationId);
    const proof = new ProofPass(db, options, tally, verdicts, bound, pipelines);
    try {
      await proof.run();
    } finally {
      await proof.close();
    }
    let spilled = proof.pending.spilled;
    let resumes = proof.resumes;
    const unproven = [...proof.unproven.values()].reduce((a, b) => a + b, 0);
    if (unproven > 0) {
      const matcher = new Matcher(db, options, tally, verdicts, bound, unprovenIds(db, unproven));
      try {
        for (const def of options.definitions) if (proof.unproven.has(def.name)) await compareRows(def, options, matcher);
        matcher.ledgerEnd();
        await matcher.drain();
      } finally {
        await matcher.close();
      }
      matcher.finish();
      spilled += matcher.pending.spilled;
      resumes += matcher.resumes;
    }
    options.onSpilled?.(spilled);
    const counts = {
      streamed: proof.streamed,
      resumes,
      imported: proof.imported,
      importedEarlier: proof.importedEarlier,
      proven: proof.proven,
      compared: unproven,
    };
    const report = findings(db, options, verdicts, { tally, pipelines, started, counts });
    db.exec('COMMIT');
    return report;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The proof's leftovers held in memory up to this many (else looked up in the scratch table). */
const UNPROVEN_IN_MEMORY = 50_000;

/** Whether a referenceId is among those the proof left. */
function unprovenIds(db: Database.Database, count: number): (referenceId: string) => boolean {
  if (count <= UNPROVEN_IN_MEMORY) {
    const ids = new Set(db.prepare<[], string>('SELECT reference_id FROM unproven').pluck().all());
    return (id) => ids.has(id);
  }
  const lookup = db.prepare<[string], number>('SELECT 1 FROM unproven WHERE reference_id = ?').pluck();
  return (id) => lookup.get(id) !== undefined;
}

/** Keeps the `RECORDS_LISTED` lowest of what it is given, by `before` (sorted and cut only now and then). */
class Lowest<T> {
  total = 0;
  private items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => number) {}
  add(item: T): void {
    this.total++;
    this.items.push(item);
    if (this.items.length >= 2 * RECORDS_LISTED) this.cut();
  }
  list(): T[] {
    this.cut();
    return this.items;
  }
  private cut(): void {
    this.items.sort(this.before);
    this.items.length = Math.min(this.items.length, RECORDS_LISTED);
  }
}

/** By pipeline, file and line (the order the report lists records in). */
const byFileLine = (a: VerifiedRecordRef, b: VerifiedRecordRef): number =>
  cmp(a.pipeline, b.pipeline) || cmp(a.file, b.file) || a.line - b.line;
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * What both passes find: each settled record's outcome, the records listed per finding, the live
 * records no import explains (in the scratch table), and where the migration's imports begin in
 * the platform's counter.
 */
class Verdicts {
  readonly outcomes = new Map<number, number>();
  readonly notVerifiable = new Lowest<VerifiedRecordRef & { outcome: number }>(byFileLine);
  readonly notHeld = new Lowest<VerifiedRecordRef>(byFileLine);
  /** The lowest sequence number of a live record that an import explains (older unexplained ones pre-exist the migration). */
  firstSeq: number | null = null;
  private readonly addUnexplained;

  constructor(
    db: Database.Database,
    private readonly migrationId: string,
  ) {
    this.addUnexplained = db.prepare<[string, number | null]>('INSERT OR REPLACE INTO unexplained (reference_id, seq) VALUES (?, ?)');
  }

  /** A record with all its sides: counted; listed when it could not be verified. */
  settled(outcome: number, ref: () => VerifiedRecordRef): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
    if (outcome === CHANGED_SINCE_SENT || outcome === NOW_REFUSED) this.notVerifiable.add({ ...ref(), outcome });
  }

  /** A live record no live import of the pipelines explains. */
  unexplained(referenceId: string, live: LiveRecord): void {
    this.addUnexplained.run(referenceId, live.sequenceNumber ?? null);
  }

  /** A live record an import explains. */
  explained(live: LiveRecord): void {
    const seq = live.sequenceNumber;
    if (seq !== undefined && (this.firstSeq === null || seq < this.firstSeq)) this.firstSeq = seq;
  }

  /** Where a record came from. */
  refOf(id: string, s: SentRecord): VerifiedRecordRef {
    return {
      pipeline: s.pipeline,
      file: s.file,
      line: s.line,
      legacyKey: s.legacyKey,
      referenceId: id,
      ...(s.migrationId !== this.migrationId ? { importedIn: s.migrationId } : {}),
    };
  }
}

/** A record met on one side in the proof pass: the ledger's import of it (false: the ledger's record of it is no live import), or its live record. */
type ProofSide = { sent: SentRecord | false } | { live: LiveRecord };

/**
 * The first pass: the stream and the ledger's live imports of the pipelines, paired by
 * referenceId, and each pair proven by hash (HashProof) or left to the comparison (its
 * referenceId in the scratch table `unproven`). The ledger is read `lead` records ahead of the
 * stream, so a live record mostly finds its import waiting (a few hundred bytes) and is settled
 * at once; what comes early waits in a bounded map. No legacy export is read.
 */
class ProofPass {
  streamed = 0;
  resumes = 0;
  /** The ledger's live imports read, and those of an earlier migration. */
  imported = 0;
  importedEarlier = 0;
  /** Records proven identical by hash. */
  proven = 0;
  /** Records the proof left to the comparison, by pipeline. */
  readonly unproven = new Map<string, number>();
  readonly pending: PendingRecords<ProofSide>;
  private readonly proof = new HashProof();
  private readonly feed: AsyncGenerator<LiveRecord, void, undefined>;
  private readonly ledgerFeed: ReturnType<Ledger['liveImportsInOrder']>;
  private ledgerRecords = 0;
  private ledgerDone = false;
  private ended = false;
  private paired = 0;
  private readonly lead: number;
  private readonly addUnproven;

  constructor(
    db: Database.Database,
    private readonly options: VerifyOptions,
    private readonly tally: Tally,
    private readonly verdicts: Verdicts,
    bound: number,
    pipelines: readonly string[],
  ) {
    this.addUnproven = db.prepare<[string]>('INSERT OR IGNORE INTO unproven (reference_id) VALUES (?)');
    this.pending = new PendingRecords(db, bound);
    this.lead = Math.max(1, Math.floor(bound / 4));
    this.feed = liveRecords(options, () => this.resumes++);
    this.ledgerFeed = (function* () {
      for (const pipeline of pipelines) yield* options.ledger.liveImportsInOrder(pipeline);
    })();
  }

  async run(): Promise<void> {
    for (let next = await this.feed.next(); !next.done; next = await this.feed.next()) {
      while (!this.ledgerDone && this.ledgerRecords < this.streamed + this.lead) this.pullLedger();
      this.arrive(next.value);
      if (++this.streamed % 10_000 === 0) this.options.onProgress?.({ phase: 'stream', done: this.streamed });
    }
    this.ended = true;
    while (!this.ledgerDone) this.pullLedger();
    // What is left met one side only: imports the platform does not hold, live records no import explains.
    for (const [id, side] of this.pending.remaining()) {
      if ('live' in side) this.verdicts.unexplained(id, side.live);
      else if (side.sent) this.verdicts.notHeld.add(this.verdicts.refOf(id, side.sent));
    }
  }

  async close(): Promise<void> {
    if (!this.ended) await this.feed.return();
    this.ledgerFeed.return(undefined);
  }

  private pullLedger(): void {
    const next = this.ledgerFeed.next();
    if (next.done) {
      this.ledgerDone = true;
      return;
    }
    this.ledgerRecords++;
    const r = next.value;
    const id = r.referenceId;
    const p = this.pending.take(id);
    if (!r.imported) {
      // No import of it (unless another record of the ledger imported it under the same
      // referenceId): its live record, if one came, is unexplained.
      if (p && 'live' in p) this.verdicts.unexplained(id, p.live);
      else this.pending.put(id, p ?? { sent: false });
      return;
    }
    this.imported++;
    if (r.migrationId !== this.options.migrationId) this.importedEarlier++;
    if (p && 'live' in p) this.pair(id, r, p.live);
    else this.pending.put(id, { sent: r });
  }

  private arrive(live: LiveRecord): void {
    const id = live.referenceId;
    const p = this.pending.take(id);
    if (p && 'sent' in p) {
      if (p.sent) this.pair(id, p.sent, live);
      else this.verdicts.unexplained(id, live);
    } else if (this.ledgerDone) this.verdicts.unexplained(id, live);
    else this.pending.put(id, { live });
  }

  /** An import and its live record: identical when proven, else left to the comparison. */
  private pair(id: string, sent: SentRecord, live: LiveRecord): void {
    this.verdicts.explained(live);
    const proven = sent.contentHash === null ? undefined : this.proof.prove(live, sent.contentHash);
    if (proven) {
      this.proven++;
      const refOf = () => this.verdicts.refOf(id, sent);
      this.tally.forms.otherForm(live, proven.otherForm);
      this.verdicts.settled(this.tally.forms.added(live, proven.added, refOf) ? ADDED : IDENTICAL, refOf);
      for (const field of proven.notShown) this.tally.notShown[field] = (this.tally.notShown[field] ?? 0) + 1;
    } else {
      this.addUnproven.run(id);
      this.unproven.set(sent.pipeline, (this.unproven.get(sent.pipeline) ?? 0) + 1);
    }
    if (++this.paired % 10_000 === 0) this.options.onProgress?.({ phase: 'compare', done: this.paired });
  }
}

/**
 * The platform's live counterparties, streamed (resumed with continue-from after a cut, by the
 * client), unchecked (`streamUnchecked`): verify judges every field itself, and a record of
 * another shape than the specification's is a difference to report, not a reason to stop.
 */
async function* liveRecords(options: VerifyOptions, onResume: () => void): AsyncGenerator<LiveRecord, void, undefined> {
  const feed = options.client.counterparties.streamUnchecked({
    format: 'jsonl',
    onResume,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  for await (const live of feed) {
    // Paired by the id the ledger keeps: a UUID in upper case is the same id (canonical-form.ts),
    // noted as come in another form.
    const key = idKey(live.referenceId);
    if (key === live.referenceId) yield live;
    else {
      const same = { ...live, referenceId: key };
      ID_IN_OTHER_FORM.add(same);
      yield same;
    }
  }
}

/**
 * The second pass, for the records the proof left (`only`; every other row, ledger record and
 * live record is dropped as it comes): sets each record's three sides beside each other, as they
 * come. The export's rows are handed in by `compareRead`; the ledger's records (in the order they
 * were staged) and the live records are pulled to stay `lead` records ahead of them. A record is
 * settled (counted, and forgotten) when the ledger's import and the live record are both there
 * and its legacy row is judged; what is still missing a side at the end is a finding (not held,
 * not verifiable, stray).
 */
class Matcher {
  resumes = 0;
  readonly pending: PendingRecords<Pending>;
  /** Live records of the records compared, streamed. */
  private streamed = 0;
  /** The runs of each pass over the export (EarlyRow.pass). */
  private readonly passRuns: Array<ReadonlySet<number | null>> = [];
  /** Legacy rows read, and judged: the ledger and the stream are kept `lead` records ahead of them. */
  private rowsRead = 0;
  private judged = 0;
  private readonly lead: number;
  private readonly feed: AsyncGenerator<LiveRecord, void, undefined>;
  private ended = false;
  /** The ledger's records of the pipeline being read; undefined when none is. */
  private ledgerFeed: ReturnType<Ledger['liveImportsInOrder']> | undefined;
  private ledgerRecords = 0;
  /** Every pipeline's ledger records have come: a live record nothing waits for is unexplained. */
  private ledgerDone = false;

  constructor(
    db: Database.Database,
    private readonly options: VerifyOptions,
    private readonly tally: Tally,
    private readonly verdicts: Verdicts,
    bound: number,
    private readonly only: (referenceId: string) => boolean,
  ) {
    this.pending = new PendingRecords(db, bound);
    this.lead = Math.max(1, Math.floor(bound / 4));
    this.feed = liveRecords(options, () => this.resumes++);
  }

  /** Starts reading the pipeline's records from the ledger, beside its export. */
  ledgerFrom(pipeline: string): void {
    this.ledgerRead();
    this.ledgerFeed = this.options.ledger.liveImportsInOrder(pipeline);
    this.ledgerRecords = 0;
    this.rowsRead = 0;
  }

  /** Reads the ledger's records of the pipeline being read to the end. */
  ledgerRead(): void {
    while (this.ledgerFeed) this.pullLedger();
  }

  /** Every pipeline's records are read from the ledger: a live record no import waits for is unexplained from now on. */
  ledgerEnd(): void {
    this.ledgerRead();
    this.ledgerDone = true;
  }

  /** The index a pass's runs go by (EarlyRow.pass). */
  pass(runs: ReadonlySet<number | null>): number {
    return this.passRuns.push(runs) - 1;
  }

  /**
   * A legacy row, mapped and checked as a run would: judged when the ledger says its record was
   * sent from this file by a run of the pass and it is not judged yet (so a row refused once and
   * re-staged from a corrections file is judged by its corrected version). A row read before the
   * ledger's record of it waits for it.
   */
  rowRead(row: FrontRow, pass: number): void {
    const id = row.referenceId;
    if (id === undefined || !this.only(id)) return;
    while (this.ledgerFeed && this.ledgerRecords < this.rowsRead + this.lead) this.pullLedger();
    this.rowsRead++;
    const p = this.pending.take(id);
    if (!p) {
      if (this.ledgerDone || !this.ledgerFeed) return;
      this.pending.put(id, { outcome: UNSEEN, early: [this.early(row, pass)] });
      return;
    }
    if (p.sent === false) return; // no live import: nothing to judge, nor to wait for any more
    if (p.sent === undefined) {
      if (this.ledgerFeed) (p.early ??= []).push(this.early(row, pass));
      this.pending.put(id, p);
      return;
    }
    if (p.outcome === UNSEEN && p.sent.file === row.row.provenance.file && this.passRuns[pass]!.has(p.sent.run)) {
      this.judged++;
      const refused = row.kind === 'rejected';
      this.judge(id, p, refused, refused ? undefined : frontRowContentHash(row), () => frontRowRecord(row) as StagedCounterparty);
    }
    this.settle(id, p);
  }

  /** Pulls live records until the stream is `lead` records ahead of the legacy rows judged. */
  async keepAhead(): Promise<void> {
    while (!this.ended && this.streamed < this.judged + this.lead) await this.pull();
  }

  /** The rest of the stream (the ledger is read whole by now). */
  async drain(): Promise<void> {
    while (!this.ended) await this.pull();
  }

  async close(): Promise<void> {
    if (!this.ended) await this.feed.return();
    if (this.ledgerFeed) this.ledgerFeed.return(undefined);
  }

  /**
   * Every record still missing a side, once the export, the ledger and the stream are read: the
   * ledger's imports the platform no longer holds, those it holds whose legacy row was not judged
   * (not verifiable), and the live records no import explains (unexplained).
   */
  finish(): void {
    for (const [id, p] of this.pending.remaining()) {
      if (p.sent === false || p.sent === undefined) {
        if (p.live) this.verdicts.unexplained(id, p.live);
      } else if (p.held !== true) this.verdicts.notHeld.add(this.verdicts.refOf(id, p.sent));
      else if (p.outcome === UNSEEN) this.verdicts.notVerifiable.add({ ...this.verdicts.refOf(id, p.sent), outcome: UNSEEN });
    }
  }

  /** The next of the ledger's records of the records compared. */
  private pullLedger(): void {
    const feed = this.ledgerFeed!;
    let next = feed.next();
    while (!next.done && !this.only(next.value.referenceId)) next = feed.next();
    if (next.done) {
      this.ledgerFeed = undefined;
      return;
    }
    this.ledgerRecords++;
    const r = next.value;
    const p = this.pending.take(r.referenceId) ?? { outcome: UNSEEN };
    if (!r.imported) {
      // No import of it (unless another record of the ledger imported it under the same
      // referenceId): its live record, if one came, is unexplained, and its legacy rows are not judged.
      if (p.sent !== undefined) this.pending.put(r.referenceId, p);
      else if (p.live) this.verdicts.unexplained(r.referenceId, p.live);
      else if (!p.early) this.pending.put(r.referenceId, { sent: false, outcome: UNSEEN });
      return;
    }
    const id = r.referenceId;
    p.sent = r;
    if (p.live) p.held = true;
    const early = p.early;
    delete p.early;
    for (const row of early ?? []) {
      if (row.file !== p.sent.file || !this.passRuns[row.pass]!.has(p.sent.run)) continue;
      this.judged++;
      this.judge(id, p, row.refused, row.contentHash, () => row.record!);
      break;
    }
    this.settle(id, p);
  }

  private early(row: FrontRow, pass: number): EarlyRow {
    const file = row.row.provenance.file;
    if (row.kind === 'rejected') return { file, pass, refused: true };
    return { file, pass, refused: false, contentHash: frontRowContentHash(row), record: frontRowRecord(row) as StagedCounterparty };
  }

  /** The legacy row's verdict on a record the ledger says was sent from it. */
  private judge(id: string, p: Pending, refused: boolean, contentHash: string | undefined, record: () => StagedCounterparty): void {
    const sent = p.sent as SentRecord;
    if (refused) p.outcome = NOW_REFUSED;
    else if (contentHash !== sent.contentHash) p.outcome = CHANGED_SINCE_SENT;
    else if (p.live) {
      p.outcome = this.compare(id, sent, record(), p.live);
      delete p.live;
    } else {
      p.outcome = REBUILT;
      p.record = record();
    }
  }

  /** Counted and forgotten when all its sides are there; else set down to wait for the rest. */
  private settle(id: string, p: Pending): void {
    if (p.sent && p.held && p.outcome !== UNSEEN && p.outcome !== REBUILT) {
      const sent = p.sent;
      this.verdicts.settled(p.outcome, () => this.verdicts.refOf(id, sent));
      return;
    }
    this.pending.put(id, p);
  }

  private async pull(): Promise<void> {
    const next = await this.feed.next();
    if (next.done) {
      this.ended = true;
      return;
    }
    if (!this.only(next.value.referenceId)) return;
    this.streamed++;
    this.arrive(next.value);
  }

  /** A live record: compared when its rebuilt record waits, else set down to wait for its other sides. */
  private arrive(cp: LiveRecord): void {
    const id = cp.referenceId;
    const p = this.pending.take(id);
    if (!p || p.sent === false) {
      if (p || this.ledgerDone) this.verdicts.unexplained(id, cp);
      else this.pending.put(id, { outcome: UNSEEN, live: cp });
      return;
    }
    if (p.sent === undefined) {
      p.live = cp;
      this.pending.put(id, p);
      return;
    }
    p.held = true;
    if (p.outcome === REBUILT) {
      p.outcome = this.compare(id, p.sent, p.record!, cp);
      delete p.record;
    } else if (p.outcome === UNSEEN) p.live = cp;
    this.settle(id, p);
  }

  private compare(id: string, sent: SentRecord, record: StagedCounterparty, live: LiveRecord): number {
    return this.tally.take(record, live, () => this.verdicts.refOf(id, sent));
  }
}

/**
 * The runs that sent the pipeline's records, grouped by the mappings they used: the pipeline as
 * each group's mappings define it (the mappings on disk when the ledger kept none for the run, or
 * they are the ones on disk now), so each record is rebuilt with the mappings of the run that
 * sent it, and the export is read once per distinct set of mappings, not once per run.
 */
async function byRunMappings(
  def: PipelineDefinition,
  ledger: Ledger,
  sources: ReadonlyArray<{ run: number | null }>,
): Promise<Array<{ def: PipelineDefinition; runs: Set<number | null>; close(): Promise<void> }>> {
  const runs = new Set(sources.map((r) => r.run));
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
    const restored = await restoreMappingSnapshot(snapshot, new Set(def.sources.filter((s) => s.child).map((s) => s.name)));
    const sources = def.sources.map((s) => {
      const c = restored.childMappings.get(s.name);
      if (c) return { ...s, childMapping: c.spec, mappingFile: { ...s.mappingFile, path: c.path } };
      const m = restored.mappings.get(s.name);
      return m ? { ...s, mappingFile: { ...s.mappingFile, path: m.path, spec: m.spec } } : s;
    });
    out.push({ def: { ...def, sources }, runs: groupRuns, close: restored.close });
  }
  return out;
}

/**
 * Compares the pipeline's records as the export (then the corrections files that re-staged some)
 * rebuilds them, once per set of mappings that sent them. The ledger's records are read beside
 * the first read of the export (the order they were staged in is near the export's), and to their
 * end after it.
 */
async function compareRows(pipeline: PipelineDefinition, options: VerifyOptions, matcher: Matcher): Promise<void> {
  const sources = options.ledger.liveImportSourcesOf(pipeline.name);
  const groups = await byRunMappings(pipeline, options.ledger, sources);
  matcher.ledgerFrom(pipeline.name);
  for (const { def, runs, close } of groups) {
    try {
      await compareRead(def, matcher.pass(runs), options, matcher, {});
      matcher.ledgerRead();
      // The files the records of these runs were sent from that are corrections files (no
      // record sent from one is judged by the export's rows: their files differ).
      const corrections: string[] = [];
      for (const f of new Set(sources.filter((r) => runs.has(r.run)).map((r) => r.file)))
        if (await correctionsFormatOf(sourcePath(f, def))) corrections.push(sourcePath(f, def));
      // One file at a time: read together, a later corrections file's row of a key an earlier one
      // also holds (the row refused again there, then fixed) would be refused as a duplicate key.
      for (const file of corrections) await compareRead(def, matcher.pass(runs), options, matcher, { corrections: [file] });
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
  pass: number,
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
    for (const row of rows) matcher.rowRead(row, pass);
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
  readonly forms: FormsTally;

  constructor(
    private readonly redactor: Redactor,
    private readonly accept: readonly AcceptRule[],
  ) {
    this.forms = new FormsTally(redactor);
  }

  /** The outcome of one record; `refOf` says where it came from, asked only for an example. */
  take(sent: StagedCounterparty, held: Record<string, unknown>, refOf: () => VerifiedRecordRef): number {
    let outcome = IDENTICAL;
    let ref: VerifiedRecordRef | undefined;
    const otherForm: string[] = [];
    for (const c of checkFields(sent, held)) {
      if (c.verdict === 'same') continue;
      if (c.verdict === 'otherForm') {
        otherForm.push(c.field);
        continue;
      }
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
    if (outcome !== IDENTICAL) return outcome;
    this.forms.otherForm(held, otherForm);
    return this.forms.added(held, addedFields(sent, held), refOf) ? ADDED : IDENTICAL;
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
  verdicts: Verdicts,
  t: {
    tally: Tally;
    pipelines: string[];
    started: number;
    counts: Pick<VerificationReport, 'streamed' | 'resumes' | 'imported' | 'importedEarlier' | 'proven' | 'compared'>;
  },
): VerificationReport {
  const { redactor } = options;
  const shownRef = (r: VerifiedRecordRef): VerifiedRecordRef => ({ ...r, legacyKey: redactor.legacyKey(r.legacyKey) });
  const notHeld = { total: verdicts.notHeld.total, records: verdicts.notHeld.list().map(shownRef) };
  const notVerifiable = {
    total: verdicts.notVerifiable.total,
    records: verdicts.notVerifiable.list().map(({ outcome, ...r }) => ({
      ...shownRef(r),
      why:
        outcome === CHANGED_SINCE_SENT
          ? 'the legacy row maps to another record than the one sent (the export or the mapping changed since)'
          : outcome === NOW_REFUSED
            ? r.importedIn === undefined
              ? 'the legacy row is refused before upload now (the export changed since)'
              : 'the legacy row the ledger now points to is refused before upload (the earlier import was sent from a corrections file, or the export changed since)'
            : 'its legacy row is no longer where it was sent from (the export or corrections file moved, or changed)',
    })),
  };
  const byOutcome = (o: number) => verdicts.outcomes.get(o) ?? 0;
  const identical = byOutcome(IDENTICAL);
  const identicalAfterAccepted = byOutcome(ACCEPTED);
  const differing = byOutcome(DIFFERS);

  // Strays: live counterparties no live import of the pipelines, in any of their migrations, explains.
  const firstSeq = verdicts.firstSeq;
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
    // (Imported there and sent again since into a new migration: still live from that import.)
    if (k && (k.state === 'imported' || k.importedEarlierIn !== undefined) && !t.pipelines.includes(k.pipeline)) {
      otherPipelines++;
      continue;
    }
    // Before the pipelines' first import there is nothing to set an unknown counterparty against:
    // the tenant's earlier data (seeded, another team's), not examined, as after an import.
    if (!k && (firstSeq === null ? t.counts.imported === 0 : u.seq !== null && u.seq < firstSeq)) {
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
    problems.push(
      `${s(notVerifiable.total, 'record')} the platform holds otherwise than sent (no proof by hash) and the export can no longer rebuild: not verified`,
    );
  return {
    migrationId: options.migrationId,
    pipelines: t.pipelines,
    ...t.counts,
    identical,
    identicalAfterAccepted,
    differing,
    notHeld,
    notVerifiable,
    fields,
    notShown: t.tally.notShown,
    forms: t.tally.forms.report(),
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
