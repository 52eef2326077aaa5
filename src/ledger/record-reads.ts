/**
 * Reading records back: per-state counts for `status`, records filtered for the corrections
 * file and the report, the imports `verify` sets beside the platform, and the grouped facts of
 * the reconciliation report.
 */
import type { Db } from './schema.js';
import { IMPORTED_EARLIER_IN, once, RECORD_SELECT, toBatch, toRecord, type BatchDbRow, type RecordDbRow } from './rows.js';
import type { Runs } from './runs.js';
import { noRecords, type ImportedRef, type PipelineStatus, type RecordFacts, type RecordRow, type RecordState } from './types.js';

/** One record's row as `plan --ledger` compares it (by its legacy key, in a scope). */
export interface HeldRow {
  state: RecordState;
  content_hash: string | null;
  errors: string | null;
  migration: number | null;
  last_run: number;
}

const LEGACY_KEY = "CASE WHEN r.keyed = 1 THEN r.legacy_key ELSE '' END";

/** The pipeline's last run in an earlier import's migration (alias `m`): the run whose mappings sent it. */
const EARLIER_RUN = (m: string) =>
  `(SELECT max(u.id) FROM runs u JOIN scopes us ON us.id = u.scope WHERE us.pipeline = $pipeline AND u.migration_id = ${m}.reference_id)`;

/**
 * The records of a pipeline the platform holds from an import: records whose state is
 * `imported`, and the earlier imports of records written again since (earlier_imports).
 */
const LIVE_IMPORTS = `SELECT r.reference_id AS referenceId, r.file, r.line, ${LEGACY_KEY} AS legacyKey, r.content_hash AS contentHash,
    r.last_run AS run, m.reference_id AS migrationId
  FROM records r JOIN scopes s ON s.id = r.scope JOIN migrations m ON m.id = r.migration
  WHERE s.pipeline = $pipeline AND r.state = 'imported' AND r.reference_id IS NOT NULL
UNION ALL
SELECT e.reference_id AS referenceId, r.file, r.line, ${LEGACY_KEY} AS legacyKey, e.content_hash AS contentHash,
    ${EARLIER_RUN('m')} AS run,
    m.reference_id AS migrationId
  FROM earlier_imports e
  JOIN records r ON r.scope = e.scope AND r.keyed = e.keyed AND r.legacy_key = e.legacy_key
  JOIN scopes s ON s.id = r.scope JOIN migrations m ON m.id = e.migration
  WHERE s.pipeline = $pipeline AND r.state <> 'imported' AND e.reference_id IS NOT NULL`;

/**
 * Every record of a pipeline in the order its row was first written (the rowid: the order the
 * export was staged in), with its live import when it has one (the row's, or the earlier one
 * earlier_imports keeps): the same imports as LIVE_IMPORTS, read in one sequential scan, without
 * a sort (`+r.scope` keeps the planner off the key's index, which is in key order). `verify` reads
 * a row of it per record imported, so a row carries only the record's own columns, as
 * arrays (`raw`): the migrations' referenceIds and the earlier imports' runs, a handful, are
 * looked up once each (RecordReads.liveImportsInOrder), not joined into every row.
 */
const RECORDS_IN_ORDER = `SELECT r.reference_id, r.state, r.file, r.line, ${LEGACY_KEY}, r.content_hash, r.last_run, r.migration,
    e.reference_id, e.content_hash, e.migration
  FROM records r
  LEFT JOIN earlier_imports e ON r.state <> 'imported' AND e.scope = r.scope AND e.keyed = r.keyed AND e.legacy_key = r.legacy_key
  WHERE +r.scope IN (SELECT id FROM scopes WHERE pipeline = $pipeline)
  ORDER BY r.rowid`;

/** A row of RECORDS_IN_ORDER, by position. */
type RecordInOrderRow = [
  recordId: string | null,
  state: RecordState,
  file: string,
  line: number,
  legacyKey: string,
  contentHash: string | null,
  run: number,
  migration: number | null,
  earlierId: string | null,
  earlierHash: string | null,
  earlierMigration: number | null,
];

const FACTS = (where: string) => `SELECT s.pipeline, s.component, r.source, r.entity_type AS entityType, r.state,
    json_extract(r.errors, '$[0].code') AS code, m.reference_id AS migrationId, ${IMPORTED_EARLIER_IN} AS importedEarlierIn, count(*) AS count
  FROM records r JOIN scopes s ON s.id = r.scope LEFT JOIN migrations m ON m.id = r.migration ${where}
  GROUP BY s.pipeline, s.component, r.source, r.entity_type, r.state, code, r.migration, importedEarlierIn
  ORDER BY s.pipeline, s.component, r.source, r.entity_type, r.state, code, migrationId`;

/** Records the report takes one by one (their error codes and examples; an invalid one's removal from staging); the rest it takes as counts. */
const ONE_BY_ONE = "(r.errors IS NOT NULL OR r.state = 'invalid')";

export class RecordReads {
  private readonly allScopes = once(() =>
    this.db.prepare<[], { id: number; pipeline: string; component: string }>(
      'SELECT id, pipeline, component FROM scopes ORDER BY pipeline, component',
    ),
  );
  private readonly scopesOf = once(() =>
    this.db.prepare<[string], { id: number; component: string }>('SELECT id, component FROM scopes WHERE pipeline = ?'),
  );
  private readonly byState = once(() =>
    this.db.prepare<[number], { state: RecordState; n: number }>('SELECT state, count(*) AS n FROM records WHERE scope = ? GROUP BY state'),
  );
  private readonly lastBatch = once(() =>
    this.db.prepare<[number], BatchDbRow>(
      'SELECT b.* FROM batches b JOIN runs r ON r.id = b.run WHERE r.scope = ? ORDER BY b.id DESC LIMIT 1',
    ),
  );
  private readonly liveImportSources = once(() =>
    this.db.prepare<[{ pipeline: string }], { run: number | null; file: string }>(`SELECT DISTINCT run, file FROM (${LIVE_IMPORTS})`),
  );
  private readonly recordsInOrder = once(() => this.db.prepare<[{ pipeline: string }], RecordInOrderRow>(RECORDS_IN_ORDER).raw());
  private readonly migrationIds = once(() =>
    this.db.prepare<[], { id: number; referenceId: string }>('SELECT id, reference_id AS referenceId FROM migrations'),
  );
  private readonly earlierRun = once(() =>
    this.db
      .prepare<{ pipeline: string; migration: number }, number | null>(
        `SELECT ${EARLIER_RUN('m')} FROM migrations m WHERE m.id = $migration`,
      )
      .pluck(),
  );
  private readonly allFacts = once(() => this.db.prepare<[], RecordFacts>(FACTS('')));
  private readonly factsOf = once(() => this.db.prepare<[string], RecordFacts>(FACTS('WHERE s.pipeline = ?')));
  private readonly countedFactsOf = once(() => this.db.prepare<[string], RecordFacts>(FACTS(`WHERE s.pipeline = ? AND NOT ${ONE_BY_ONE}`)));
  private readonly byKey = once(() =>
    this.db.prepare<[number, string], HeldRow>(
      'SELECT state, content_hash, errors, migration, last_run FROM records WHERE scope = ? AND keyed = 1 AND legacy_key = ?',
    ),
  );
  private readonly wanted = once(() => {
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS wanted (reference_id TEXT PRIMARY KEY)');
    return {
      clear: this.db.prepare('DELETE FROM temp.wanted'),
      add: this.db.prepare('INSERT OR IGNORE INTO temp.wanted (reference_id) VALUES (?)'),
      records: this.db.prepare<[], RecordDbRow>(
        `${RECORD_SELECT} JOIN temp.wanted w ON w.reference_id = r.reference_id ORDER BY r.scope, r.legacy_key`,
      ),
    };
  });

  constructor(
    private readonly db: Db,
    private readonly runs: Runs,
  ) {}

  /** Per pipeline: records per state, the latest run and the latest batch. */
  status(): PipelineStatus[] {
    return this.allScopes()
      .all()
      .map((sc) => {
        const byState = noRecords();
        let records = 0;
        for (const { state, n } of this.byState().all(sc.id)) {
          byState[state] = n;
          records += n;
        }
        const batch = this.lastBatch().get(sc.id);
        return {
          pipeline: sc.pipeline,
          component: sc.component,
          records,
          byState,
          lastRun: this.runs.lastOf(sc.id),
          lastBatch: batch && toBatch(batch),
        };
      });
  }

  /** Counts per state for one pipeline (all components when none is named). */
  counts(pipeline: string, component?: string): Record<RecordState, number> {
    const byState = noRecords();
    for (const sc of this.scopesOf().all(pipeline))
      if (component === undefined || sc.component === component) for (const { state, n } of this.byState().all(sc.id)) byState[state] += n;
    return byState;
  }

  /**
   * Records, lazily, in key order; filtered by pipeline, component and states (a statement per
   * filter: the filters vary, and a listing is one scan).
   */
  *records(
    filter: { pipeline?: string; component?: string; states?: readonly RecordState[]; oneByOne?: boolean } = {},
  ): Generator<RecordRow> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.oneByOne) where.push(ONE_BY_ONE);
    if (filter.pipeline !== undefined) where.push('s.pipeline = ?') && args.push(filter.pipeline);
    if (filter.component !== undefined) where.push('s.component = ?') && args.push(filter.component);
    if (filter.states !== undefined) {
      if (filter.states.length === 0) return;
      where.push(`r.state IN (${filter.states.map(() => '?').join(', ')})`);
      args.push(...filter.states);
    }
    const sql = `${RECORD_SELECT}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY r.scope, r.keyed DESC, r.legacy_key`;
    for (const row of this.db.prepare<unknown[], RecordDbRow>(sql).iterate(...args)) yield toRecord(row);
  }

  /**
   * The records the migration refused (rejected before upload, refused by staging, invalid in
   * validation), in the shape the corrections writer takes; `origin` is the export row each
   * stands for (its `_origin`: where it was read, or the row its correction replaced).
   */
  *refused(filter: { pipeline?: string; component?: string } = {}): Generator<{
    source: string;
    provenance: { file: string; line: number; byteOffset: number };
    origin: { file: string; line: number };
    errors: Array<{ field: string; code: string; message: string; stage: string }>;
  }> {
    for (const r of this.records({ ...filter, states: ['rejected', 'failed', 'invalid'] })) {
      yield {
        source: r.provenance.source,
        provenance: { file: r.provenance.file, line: r.provenance.line, byteOffset: r.provenance.byteOffset },
        origin: r.origin ? { file: r.origin.file, line: r.origin.line } : { file: r.provenance.file, line: r.provenance.line },
        errors: r.errors.map((e) => ({ field: e.field, code: e.code, message: e.message, stage: e.stage })),
      };
    }
  }

  /**
   * The records of a pipeline the platform holds from an import, in whichever migration of the
   * pipeline it happened, only what `verify` sets beside the platform, as one sequential scan in
   * the order the records were first written (near the export's order, which `verify` reads
   * beside it): records whose state is `imported`, and records written again by a later run that
   * did not import them (refused, or sent into a migration that was canceled) whose earlier import
   * the ledger keeps in `earlier_imports` — with what that import sent (its content hash) and the
   * pipeline's last run in that migration, whose mappings sent it. Every other record with a
   * referenceId comes as `{ referenceId, imported: false }`, so that the reader knows no import
   * of it will come.
   */
  *liveImportsInOrder(pipeline: string): Generator<(ImportedRef & { imported: true }) | { referenceId: string; imported: false }> {
    const migrations = new Map(
      this.migrationIds()
        .all()
        .map((m) => [m.id, m.referenceId]),
    );
    const earlierRuns = new Map<number, number | null>();
    const earlierRun = (migration: number): number | null => {
      let run = earlierRuns.get(migration);
      if (run === undefined) earlierRuns.set(migration, (run = this.earlierRun().get({ pipeline, migration }) ?? null));
      return run;
    };
    for (const [
      recordId,
      state,
      file,
      line,
      legacyKey,
      contentHash,
      run,
      migration,
      earlierId,
      earlierHash,
      earlierMigration,
    ] of this.recordsInOrder().iterate({
      pipeline,
    })) {
      const migrationId = migration === null ? undefined : migrations.get(migration);
      const earlierMigrationId = earlierMigration === null ? undefined : migrations.get(earlierMigration);
      if (state === 'imported' && recordId !== null && migrationId !== undefined)
        yield { imported: true, pipeline, referenceId: recordId, file, line, legacyKey, contentHash, run, migrationId };
      else if (state !== 'imported' && earlierId !== null && earlierMigrationId !== undefined)
        yield {
          imported: true,
          pipeline,
          referenceId: earlierId,
          file,
          line,
          legacyKey,
          contentHash: earlierHash,
          run: earlierRun(earlierMigration!),
          migrationId: earlierMigrationId,
        };
      else if (recordId !== null) yield { referenceId: recordId, imported: false };
    }
  }

  /** The runs that sent a pipeline's live imports (liveImportsInOrder), and the files they sent them from. */
  liveImportSourcesOf(pipeline: string): Array<{ run: number | null; file: string }> {
    return this.liveImportSources().all({ pipeline });
  }

  /**
   * Records grouped by pipeline, component, source, entity type, state, first error code and
   * migration. `countedOnly`: only the records the report counts without looking at them (no
   * errors, not invalid), the others being those `records({ oneByOne: true })` gives.
   */
  facts(filter: { pipeline?: string; countedOnly?: boolean } = {}): RecordFacts[] {
    if (filter.countedOnly) {
      if (filter.pipeline === undefined) throw new Error('facts: countedOnly takes a pipeline');
      return this.countedFactsOf().all(filter.pipeline);
    }
    return filter.pipeline !== undefined ? this.factsOf().all(filter.pipeline) : this.allFacts().all();
  }

  /**
   * Records with these referenceIds (validation errors name records by referenceId). One scan of
   * the records table through a temporary table, instead of a permanent index on random UUIDs
   * that every run would pay for on every write.
   */
  recordsByReferenceIds(referenceIds: Iterable<string>): RecordRow[] {
    const w = this.wanted();
    return this.db.transaction(() => {
      w.clear.run();
      for (const id of referenceIds) w.add.run(id);
      try {
        return w.records.all().map(toRecord);
      } finally {
        w.clear.run();
      }
    })();
  }

  /** Keyed records' rows in a scope, as `plan --ledger` compares them (keys the ledger holds nothing of are absent), in one read transaction. */
  held(scopeId: number, legacyKeys: readonly string[]): Map<string, HeldRow> {
    const out = new Map<string, HeldRow>();
    const byKey = this.byKey();
    this.db.transaction(() => {
      for (const key of legacyKeys) {
        const row = byKey.get(scopeId, key);
        if (row) out.set(key, row);
      }
    })();
    return out;
  }
}
