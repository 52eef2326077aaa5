import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { LedgerImpact } from '../../src/ledger/impact.js';
import { originKey } from '../../src/ledger/corrections.js';
import { generateCrmSamples } from '../../src/pipeline/samples/generate-crm.js';
import { readCsvFile } from '../../src/pipeline/source/csv/index.js';
import { tempDir } from '../support/service.js';

const M1 = '11111111-1111-4111-8111-111111111111';
const M2 = '22222222-2222-4222-8222-222222222222';
const ref = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** A ledger the previous version wrote (schema v2, its last tables created on first use). */
const V2 = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ledger', 'v2.sql'), 'utf8');
/** A ledger the previous version's CLI wrote (schema v3): real referenceIds, hashes and times (the fixture's header says how). */
const V3 = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ledger', 'v3.sql'), 'utf8');
/** staging_removals as versions before the removal state created it. */
const STATELESS_REMOVALS = `DROP TABLE staging_removals;
  CREATE TABLE staging_removals (migration_id TEXT NOT NULL, reference_id TEXT NOT NULL, last_batch INTEGER,
    errors TEXT NOT NULL, removed_at TEXT NOT NULL, PRIMARY KEY (migration_id, reference_id)) WITHOUT ROWID;
  INSERT INTO staging_removals VALUES ('${M1}', '${ref(4)}', 1, '[]', '2026-01-01T00:00:00.000Z');`;

function writeLedger(file: string, sql: string): void {
  const db = new Database(file);
  db.exec(sql);
  db.close();
}

/** The layout as SQLite has it: every table, index and trigger, and the version. */
function layout(file: string): { version: unknown; objects: unknown[] } {
  const db = new Database(file, { readonly: true });
  try {
    return {
      version: db.pragma('user_version', { simple: true }),
      objects: db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY type, name').all(),
    };
  } finally {
    db.close();
  }
}

/** Everything the ledger's readers give back of the fixture's pipeline. */
function everything(ledger: Ledger, pipeline = 'crm') {
  return {
    status: ledger.status(),
    records: [...ledger.records()],
    refused: [...ledger.refused()],
    facts: ledger.facts(),
    live: [...ledger.liveImportsInOrder(pipeline)],
    liveSources: ledger.liveImportSourcesOf(pipeline),
    stories: ledger.stories.of(pipeline, 100),
    canceled: ledger.migrationEnds.canceledRecords(),
    ends: [ledger.migrationEnds.of(M1)?.how, ledger.migrationEnds.of(M2)?.how],
    tallies: ledger.tallies.latest(ledger.runs('crm').map((r) => r.id)),
    mappings: ledger.runMappings.of(1),
    sources: ledger.runSources(1),
    active: [...ledger.removals.active(M1)],
    pending: ledger.removals.pending(M1),
    files: ledger.writtenFiles.held(pipeline),
    withValues: ledger.writtenFiles.recordsWithValues(pipeline),
    cursor: ledger.logCursor(M1),
    jobs: ledger.jobs.list(M1),
  };
}

describe('the ledger schema, from the previous version', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = tempDir('stagecoach-ledger-schema-');
    file = join(dir, 'ledger.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a version 2 ledger read-only as it is, without writing to it, and the same after upgrading it in place to the current version', () => {
    writeLedger(file, V2);
    const before = layout(file);
    const readOnly = openLedger(file, { readonly: true });
    const read = everything(readOnly);
    readOnly.close();
    expect(layout(file)).toEqual(before);

    // What the previous version wrote, as it wrote it.
    expect(read.records.map((r) => [r.legacyKey ?? `${r.provenance.file}:${r.provenance.line}`, r.state, r.origin?.line ?? null])).toEqual([
      ['K1', 'staged', null],
      ['K2', 'staged', null],
      ['K3', 'imported', null],
      ['K4', 'invalid', null],
      ['K5', 'failed', null],
      ['K6', 'staged', 7],
      ['samples/klanten.csv:10', 'rejected', null],
    ]);
    expect(read.live.flatMap((r) => (r.imported ? [[r.legacyKey, r.migrationId]] : []))).toEqual([
      ['K1', M1],
      ['K3', M1],
    ]);
    expect(read.stories.total).toBe(1);
    expect(read.stories.stories[0]!.steps.map((s) => [s.state, s.file, s.line])).toEqual([
      ['rejected', 'samples/klanten.csv', 7],
      ['staged', 'corrections/klanten.corrections.csv', 2],
    ]);
    expect(read.canceled).toEqual([
      {
        pipeline: 'crm',
        component: 'Counterparties',
        migrationId: M2,
        canceledAt: '2026-11-20T10:00:02.000Z',
        state: 'staged',
        records: 1,
      },
      {
        pipeline: 'crm',
        component: 'Counterparties',
        migrationId: M2,
        canceledAt: '2026-11-20T10:00:02.000Z',
        state: 'staged',
        records: 1,
        importedIn: M1,
      },
    ]);
    expect(read.ends).toEqual(['completed', 'canceled']);
    expect(read.tallies.map((t) => [t.runId, t.tally.file, t.tally.rowsRead, t.accepted])).toEqual([[1, 'samples/klanten.csv', 8, false]]);
    expect(read.mappings).toEqual({ sources: { klanten: 'crm.yaml' }, files: { 'crm.yaml': 'type: person\n' } });
    expect(read.active.map(([referenceId]) => referenceId)).toEqual([ref(4)]);
    expect(read.pending.map((p) => [p.referenceId, p.state])).toEqual([[ref(3), 'removing']]);
    expect(read.files.map((f) => [f.path, f.kind, f.rows])).toEqual([['/work/corrections/klanten.corrections.csv', 'corrections', 2]]);
    expect(read.withValues).toBe(1);
    expect(read.cursor).toBe(8);
    expect(read.jobs.map((j) => [j.kind, j.state])).toEqual([['import', 'done']]);

    const ledger = openLedger(file);
    expect(everything(ledger)).toEqual(read);
    // Each part writes to its table as it was, and reads back what it wrote.
    ledger.removals.intend(M1, [{ referenceId: ref(5), lastBatch: 1, errors: [] }]);
    expect(ledger.removals.pending(M1).map((p) => p.referenceId)).toEqual([ref(3), ref(5)]);
    ledger.setLogCursor(M1, 12);
    expect(ledger.logCursor(M1)).toBe(12);
    ledger.writtenFiles.markRemoved('/work/corrections/klanten.corrections.csv');
    expect(ledger.writtenFiles.held('crm')).toEqual([]);
    ledger.close();
    const after = layout(file);
    expect(after.version).toBe(4);
    expect(after.objects.filter((o) => (o as { type: string }).type === 'table').map((o) => (o as { name: string }).name)).toEqual([
      'batch_ends',
      'batches',
      'canceled_migrations',
      'earlier_imports',
      'entity_types',
      'jobs',
      'log_cursor',
      'migrations',
      'record_files',
      'record_history',
      'record_rows',
      'run_mappings',
      'run_sources',
      'runs',
      'scopes',
      'source_tallies',
      'staging_removals',
      'written_files',
    ]);
    // Upgraded, the file is laid out as a new one: same tables, indexes and triggers.
    const fresh = join(dir, 'fresh.db');
    openLedger(fresh).close();
    const names = (l: { objects: unknown[] }) => l.objects.map((o) => `${(o as { type: string }).type} ${(o as { name: string }).name}`);
    expect(names(after)).toEqual(names(layout(fresh)));
  });

  it('gives a version 2 ledger whose removals predate their state the state, its removals counting as done', () => {
    writeLedger(file, `${V2}\n${STATELESS_REMOVALS}`);
    const readOnly = openLedger(file, { readonly: true });
    expect([...readOnly.removals.active(M1).keys()]).toEqual([ref(4)]);
    expect(readOnly.removals.pending(M1)).toEqual([]);
    readOnly.close();

    const ledger = openLedger(file);
    expect([...ledger.removals.active(M1).keys()]).toEqual([ref(4)]);
    ledger.removals.intend(M1, [{ referenceId: ref(2), lastBatch: null, errors: [] }]);
    ledger.close();
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT reference_id, state FROM staging_removals ORDER BY reference_id').all()).toEqual([
      { reference_id: ref(2), state: 'removing' },
      { reference_id: ref(4), state: 'removed' },
    ]);
    db.close();
  });

  it('upgrades a version 3 ledger in place to compact record rows: the same records through every reader, in the same rowid order, row hashes as their first 128 bits', async () => {
    const pipeline = 'generated-crm';
    writeLedger(file, V3);
    expect(layout(file).version).toBe(3);
    const rowids = (sql: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare(sql).all();
      } finally {
        db.close();
      }
    };
    const orderBefore = rowids('SELECT rowid, legacy_key FROM records ORDER BY rowid');
    const planned = (ledgerFile: string) => {
      const impact = LedgerImpact.open(ledgerFile, pipeline, 'Counterparties', { newMigration: false });
      try {
        const keys = (orderBefore as Array<{ legacy_key: string }>).map((r) => r.legacy_key);
        return { migration: impact.migration, lookup: [...impact.lookup(keys)], origins: [...impact.correctedOrigins()] };
      } finally {
        impact.close();
      }
    };
    // The row a resumed run started at, as version 3 kept it in run_sources (the whole sha256).
    const v3 = new Database(file);
    const started = v3.prepare<[], { hash: string }>("SELECT row_hash AS hash FROM records WHERE file = 'klanten.csv' LIMIT 1").get()!.hash;
    v3.prepare('UPDATE run_sources SET sources = json_set(sources, ?, json(?)) WHERE run = 4').run(
      '$.start',
      JSON.stringify({ source: 'klanten', file: 'klanten.csv', line: 2, byteOffset: 0, rowHash: started }),
    );
    v3.close();
    const v3Hashes = rowids('SELECT row_hash, origin_hash FROM records ORDER BY rowid') as Array<Record<string, string | null>>;
    expect(v3Hashes.every((r) => /^[0-9a-f]{64}$/.test(r.row_hash!))).toBe(true);
    const readOnly = openLedger(file, { readonly: true });
    const read = everything(readOnly, pipeline);
    readOnly.close();
    const planBefore = planned(file);
    // Read-only, the v3 row hashes show as rows hash today: their first 32 hex digits (128 bits).
    expect(read.records.map((r) => `${r.provenance.rowHash} ${r.origin?.rowHash ?? '-'}`).sort()).toEqual(
      v3Hashes.map((r) => `${r.row_hash!.slice(0, 32)} ${r.origin_hash?.slice(0, 32) ?? '-'}`).sort(),
    );
    expect(planBefore.origins.every((o) => /\u0000[0-9a-f]{32}$/.test(o))).toBe(true);
    // The fixture holds what the readers must carry over: imports, earlier imports, refusals with their stories, corrections.
    expect(read.records).toHaveLength(40);
    expect(read.live.filter((r) => r.imported)).toHaveLength(34);
    expect(read.stories.total).toBeGreaterThan(0);
    expect(planBefore.origins.length).toBeGreaterThan(0);

    const ledger = openLedger(file);
    expect(everything(ledger, pipeline)).toEqual(read);
    expect(planned(file)).toEqual(planBefore);
    expect(rowids('SELECT rowid, legacy_key FROM record_rows ORDER BY rowid')).toEqual(orderBefore);
    expect(layout(file).version).toBe(4);
    // Stored compact: referenceIds, content and row hashes as bytes, the state as a number, and no time of their own:
    // the fixture's sent records were last written when their batch settled (its finished_at, read back above).
    expect(
      rowids(
        `SELECT DISTINCT typeof(reference_id) AS id, typeof(content_hash) AS content, typeof(row_hash) AS row, typeof(state) AS state,
           typeof(updated_at) AS at, length(reference_id) AS idBytes, length(row_hash) AS rowBytes FROM record_rows WHERE content_hash IS NOT NULL`,
      ),
    ).toEqual([{ id: 'blob', content: 'blob', row: 'blob', state: 'integer', at: 'null', idBytes: 16, rowBytes: 16 }]);

    // Resume reads the keys of the rows before a byte offset, and the last done batch's rows, from the upgraded rows.
    const scope = ledger.findScope(pipeline, 'Counterparties')!;
    const exported = read.records.filter((r) => r.legacyKey !== undefined && r.provenance.file === 'klanten.csv');
    const cut = exported[Math.floor(exported.length / 2)]!.provenance.byteOffset;
    expect(new Map(ledger.keysBefore(scope, 'klanten', 'klanten.csv', cut))).toEqual(
      new Map(exported.filter((r) => r.provenance.byteOffset < cut).map((r) => [r.legacyKey!, r.provenance.line])),
    );
    const lastRun = ledger.runs(pipeline).at(-1)!.id;
    const batch = ledger.batches(lastRun).at(-1)!.id;
    const inBatch = read.records.filter((r) => r.lastBatch === batch).map((r) => r.provenance);
    expect(inBatch.length).toBeGreaterThan(1);
    const furthest = inBatch.reduce((a, b) => (b.byteOffset > a.byteOffset ? b : a));
    expect(ledger.lastDoneBatchRows(lastRun)).toEqual([furthest]);
    expect((ledger.runSources(4) as { start: { rowHash: string } }).start.rowHash).toBe(started.slice(0, 32));

    // The export the fixture was made from, generated again and read today: the rows unchanged since
    // hash as the upgraded ledger has them, so a run (resume's checkpoint row, skip-unchanged) and
    // plan --ledger (the export rows corrections replaced) see them unchanged. The fixture's last run
    // read the export with two rows changed: exactly those two differ.
    const exportDir = join(dir, 'export');
    await generateCrmSamples({ out: exportDir, persons: 40, organisations: 0, seed: 7, defectsPer10k: 1500, pipeline: false });
    const todayAt = new Map<number, string>();
    for await (const row of readCsvFile({
      source: 'klanten',
      path: join(exportDir, 'klanten.csv'),
      file: 'klanten.csv',
      encoding: 'utf-8',
      csv: { delimiter: ';', quote: '"', header: true },
      hashRows: true,
    }))
      todayAt.set(row.provenance.line, row.provenance.hash);
    const fromExport = read.records.filter((r) => r.provenance.file === 'klanten.csv');
    expect(fromExport.length).toBeGreaterThan(30);
    expect(fromExport.filter((r) => todayAt.get(r.provenance.line) !== r.provenance.rowHash).map((r) => r.provenance.line)).toEqual([4, 6]);
    expect(todayAt.get(furthest.line)).toBe(furthest.rowHash);
    const origins = read.records.filter((r) => r.origin !== undefined).map((r) => r.origin!);
    expect(origins.length).toBeGreaterThan(0);
    const plannedNow = planned(file).origins;
    for (const o of origins) expect(plannedNow).toContain(originKey(o.file, todayAt.get(o.line)!));

    // A later run writes to the upgraded ledger: a refused record corrected and staged, its story one step longer.
    const refused = read.records.find((r) => r.state === 'rejected' && r.legacyKey !== undefined)!;
    const { run } = ledger.startRun({
      pipeline,
      component: 'Counterparties',
      pipelineFile: 'pipeline.yaml',
      pipelineHash: 'h',
      readsEverything: false,
    });
    ledger.claimCorrections(scope, [
      { keyed: 1, legacyKey: refused.legacyKey!, origin: { file: refused.provenance.file, line: refused.provenance.line } },
    ]);
    const migration = ledger.migrationNo(ledger.lastMigrationOf(scope)!.id);
    const fixed = {
      legacyKey: refused.legacyKey!,
      referenceId: refused.referenceId!,
      entityType: 'person',
      contentHash: 'ab'.repeat(16),
      provenance: { source: 'klanten', file: 'corrections/fixed.csv', line: 2, byteOffset: 120, rowHash: 'cd'.repeat(32) },
    };
    const sent = ledger.beginBatch(run.id, scope, migration, [fixed], 100);
    ledger.finishBatch(scope, sent, [{ legacyKey: fixed.legacyKey, state: 'staged' }]);
    ledger.finishRun(run.id, 'completed');
    const now = [...ledger.records({ pipeline })].find((r) => r.legacyKey === fixed.legacyKey)!;
    expect(now).toMatchObject({ state: 'staged', referenceId: fixed.referenceId, contentHash: fixed.contentHash, entityType: 'person' });
    expect(now.provenance).toEqual(fixed.provenance);
    expect(now.updatedAt).toBe(ledger.batch(sent)!.finishedAt);
    const story = ledger.stories.of(pipeline, 100).stories.find((st) => st.legacyKey === fixed.legacyKey)!;
    expect(story.steps.at(-1)).toMatchObject({ state: 'staged', run: run.id, file: 'corrections/fixed.csv', line: 2 });
    expect(story.steps.at(-2)).toMatchObject({ state: 'rejected', file: refused.provenance.file, line: refused.provenance.line });
    expect(ledger.isSettled(scope, migration, fixed.legacyKey, fixed.contentHash)).toBe(true);
    ledger.close();
  });

  it('refuses a ledger of a newer version than it understands, naming both versions', () => {
    writeLedger(file, 'CREATE TABLE scopes (id INTEGER PRIMARY KEY); PRAGMA user_version = 5;');
    expect(() => openLedger(file)).toThrow(
      `ledger ${file} has schema version 5, newer than this stagecoach understands (4); use a newer stagecoach`,
    );
  });
});
