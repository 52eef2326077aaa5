import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { tempDir } from '../support/service.js';

const M1 = '11111111-1111-4111-8111-111111111111';
const M2 = '22222222-2222-4222-8222-222222222222';
const ref = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** A ledger the previous version wrote (schema v2, its last tables created on first use). */
const V2 = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ledger', 'v2.sql'), 'utf8');
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
function everything(ledger: Ledger) {
  return {
    status: ledger.status(),
    records: [...ledger.records()],
    refused: [...ledger.refused()],
    facts: ledger.facts(),
    live: [...ledger.liveImportsInOrder('crm')],
    liveSources: ledger.liveImportSourcesOf('crm'),
    stories: ledger.stories.of('crm', 10),
    canceled: ledger.migrationEnds.canceledRecords(),
    ends: [ledger.migrationEnds.of(M1)?.how, ledger.migrationEnds.of(M2)?.how],
    tallies: ledger.tallies.latest(ledger.runs('crm').map((r) => r.id)),
    mappings: ledger.runMappings.of(1),
    sources: ledger.runSources(1),
    active: [...ledger.removals.active(M1)],
    pending: ledger.removals.pending(M1),
    files: ledger.writtenFiles.held('crm'),
    withValues: ledger.writtenFiles.recordsWithValues('crm'),
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

  it('refuses a ledger of a newer version than it understands, naming both versions', () => {
    writeLedger(file, 'CREATE TABLE scopes (id INTEGER PRIMARY KEY); PRAGMA user_version = 5;');
    expect(() => openLedger(file)).toThrow(
      `ledger ${file} has schema version 5, newer than this stagecoach understands (4); use a newer stagecoach`,
    );
  });
});
