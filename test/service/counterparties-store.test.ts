import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { openDatabase, type Db } from '../../src/service/store/database.js';
import { liveCounterpartyExists, upsertLiveCounterparties } from '../../src/service/counterparties/store.js';
import type { StagedCounterparty } from '../../src/contract/migration.js';
import { tempDir } from '../support/service.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const C = '00000000-0000-4000-8000-00000000000c';

const person = (referenceId: string, extra: Partial<StagedCounterparty> = {}): StagedCounterparty =>
  ({ referenceId, type: 'person', initials: 'J.P.', surname: 'Jansen', dateOfBirth: '1980-01-02', ...extra }) as StagedCounterparty;

let dir: string;
let db: Db;
beforeEach(() => {
  dir = tempDir('stagecoach-store-');
  db = openDatabase(dir);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const events = () =>
  db.prepare('SELECT event_name AS name, payload FROM event_outbox ORDER BY seq').all() as Array<{ name: string; payload: string }>;
const seqs = () => db.prepare('SELECT reference_id AS id, seq FROM live_counterparties ORDER BY seq').all();

describe('live counterparty store', () => {
  it('inserts with per-tenant sequence numbers starting at 1', () => {
    const r1 = db.transaction(() =>
      upsertLiveCounterparties(db, 't1', [person(A, { surname: 'One' }), person(B, { surname: 'Two' })], 'import'),
    )();
    const r2 = db.transaction(() => upsertLiveCounterparties(db, 't2', [person(C)], 'import'))();
    expect(r1).toEqual({ inserted: 2, updated: 0, merged: [] });
    expect(r2).toEqual({ inserted: 1, updated: 0, merged: [] });
    expect(db.prepare('SELECT broker_key AS t, reference_id AS id, seq FROM live_counterparties ORDER BY broker_key, seq').all()).toEqual([
      { t: 't1', id: A, seq: 1 },
      { t: 't1', id: B, seq: 2 },
      { t: 't2', id: C, seq: 1 },
    ]);
    expect(liveCounterpartyExists(db, 't1', A)).toBe(true);
    expect(liveCounterpartyExists(db, 't2', A)).toBe(false);
  });

  it('merges a record with the identity of another into the survivor and emits counterparty.merged', () => {
    upsertLiveCounterparties(db, 't1', [person(A, { telephoneNumbers: [{ number: '0201' }] })], 'import');
    const r = upsertLiveCounterparties(
      db,
      't1',
      [person(B, { surname: 'JANSEN', initials: 'jp', firstName: 'Jan', telephoneNumbers: [{ number: '0202' }] })],
      'lodging',
    );
    expect(r).toEqual({ inserted: 0, updated: 0, merged: [{ survivor: A, merged: B }] });
    expect(seqs()).toEqual([{ id: A, seq: 1 }]);
    const data = JSON.parse((db.prepare('SELECT data FROM live_counterparties').get() as { data: string }).data);
    expect(data).toMatchObject({
      referenceId: A,
      firstName: 'Jan',
      surname: 'JANSEN',
      telephoneNumbers: [{ number: '0201' }, { number: '0202' }],
    });
    expect(liveCounterpartyExists(db, 't1', B)).toBe(true);
    expect(events().map((e) => e.name)).toEqual(['counterparty.merged']);
    expect(JSON.parse(events()[0]!.payload)).toEqual({
      survivorReferenceId: A,
      mergedReferenceIds: [B],
      counterpartyType: 'person',
      matchedOn: ['surname', 'initials', 'dateOfBirth'],
      source: 'lodging',
    });
  });

  it('updates through an alias without renaming the survivor', () => {
    upsertLiveCounterparties(db, 't1', [person(A)], 'import');
    upsertLiveCounterparties(db, 't1', [person(B)], 'import');
    const r = upsertLiveCounterparties(db, 't1', [person(B, { emailAddress: 'j@example.org' })], 'import');
    expect(r).toEqual({ inserted: 0, updated: 1, merged: [] });
    expect(seqs()).toEqual([{ id: A, seq: 1 }]);
  });

  it('emits master consolidation only across sources and operational consolidation on contact changes', () => {
    upsertLiveCounterparties(db, 't1', [person(A)], 'import');
    upsertLiveCounterparties(db, 't1', [person(A, { firstName: 'Jan' })], 'import'); // same source: no master event
    upsertLiveCounterparties(db, 't1', [person(A, { firstName: 'Johan', emailAddress: 'j@example.org' })], 'lodging');
    expect(events().map((e) => [e.name, JSON.parse(e.payload)])).toEqual([
      ['counterparty_master.consolidated', { referenceId: A, fields: ['firstName'], source: 'lodging', previousSource: 'import' }],
      ['counterparty_operational.consolidated', { referenceId: A, fields: ['emailAddress'], source: 'lodging', previousSource: 'import' }],
    ]);
  });

  it('never merges persons without a date of birth, and merges organisations by chamber of commerce number', () => {
    const r1 = upsertLiveCounterparties(db, 't1', [person(A, { dateOfBirth: undefined }), person(B, { dateOfBirth: undefined })], 'import');
    expect(r1.inserted).toBe(2);
    const org = (id: string, coc: string) =>
      ({ referenceId: id, type: 'organisation', organisationName: 'Acme', cocNumber: coc }) as StagedCounterparty;
    const r2 = upsertLiveCounterparties(db, 't1', [org(C, '1234 5678'), org('00000000-0000-4000-8000-00000000000d', '12345678')], 'import');
    expect(r2).toEqual({ inserted: 1, updated: 0, merged: [{ survivor: C, merged: '00000000-0000-4000-8000-00000000000d' }] });
  });

  it('rolls a change and its events back together with the caller transaction', () => {
    upsertLiveCounterparties(db, 't1', [person(A)], 'import');
    expect(() =>
      db.transaction(() => {
        upsertLiveCounterparties(db, 't1', [person(B)], 'import');
        throw new Error('caller failed');
      })(),
    ).toThrow('caller failed');
    expect(events()).toEqual([]);
    expect(liveCounterpartyExists(db, 't1', B)).toBe(false);
  });

  it('finds counterparties by id, identity and sequence through indexes, never a scan', () => {
    upsertLiveCounterparties(db, 't1', [person(A)], 'import');
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('t1', 'x') as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    expect(plan('SELECT * FROM live_counterparties WHERE broker_key = ? AND identity_key = ? ORDER BY seq LIMIT 1')).toContain(
      'USING INDEX live_counterparties_identity_key (broker_key=? AND identity_key=?)',
    );
    // The key's own index (a rowid table since rows are appended; older data files keep the clustered key).
    expect(plan('SELECT * FROM live_counterparties WHERE broker_key = ? AND reference_id = ?')).toMatch(
      /USING (PRIMARY KEY|INDEX sqlite_autoindex_live_counterparties_\d+) \(broker_key=\? AND reference_id=\?\)/,
    );
    expect(plan('SELECT seq, data FROM live_counterparties WHERE broker_key = ? AND seq >= ? ORDER BY seq LIMIT 1000')).toContain(
      'USING INDEX live_counterparties_seq (broker_key=? AND seq>?)',
    );
  });

  it('rewrites nothing and emits nothing when the same record comes again from the same source', () => {
    upsertLiveCounterparties(db, 't1', [person(A, { emailAddress: 'a@example.org' })], 'import');
    const writes = () => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const before = writes();
    expect(upsertLiveCounterparties(db, 't1', [person(A, { emailAddress: 'a@example.org' })], 'import')).toEqual({
      inserted: 0,
      updated: 1,
      merged: [],
    });
    expect(writes()).toBe(before);
    upsertLiveCounterparties(db, 't1', [person(A, { emailAddress: 'a@example.org' })], 'lodging'); // another source: written
    expect(writes()).toBe(before + 1);
    expect(events()).toEqual([]);
  });
});
