import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { followLogs, type LogsApi } from '../../src/reconcile/logs-follow.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import type { LogEntry } from '../../src/contract/migration.js';
import { tempDir } from '../support/service.js';

const M = '22222222-2222-4222-8222-222222222222';

function entry(seq: number): LogEntry {
  return {
    sequenceNumber: seq,
    component: 'Counterparties',
    entityReferenceIds: [],
    action: 'StagedEntities',
    timestamp: '2026-01-01T00:00:00.000Z',
    message: `entry ${seq}`,
    logLevel: 'INFO',
  };
}

/** A log of `total` entries served from continue-from; `breakAfter` entries then the connection dies. */
function fakeLog(total: () => number, breakAfter?: number) {
  const requests: number[] = [];
  const api: LogsApi = {
    async *logs(_m, _q, { continueFrom = 1 }) {
      requests.push(continueFrom);
      let sent = 0;
      for (let s = continueFrom; s <= total(); s++) {
        if (breakAfter !== undefined && sent === breakAfter) throw new Error('socket hang up');
        sent++;
        yield entry(s);
      }
    },
  };
  return { api, requests };
}

describe('following the migration log', () => {
  const opened: Array<{ ledger: Ledger; dir: string }> = [];
  const newLedger = () => {
    const dir = tempDir('stagecoach-logs-');
    const ledger = openLedger(join(dir, 'ledger.db'));
    opened.push({ ledger, dir });
    return ledger;
  };
  afterEach(() => {
    for (const { ledger, dir } of opened.splice(0)) {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('hands on every entry with its sequence number and keeps only the cursor after the last one, not the text', async () => {
    const db = newLedger();
    const log = fakeLog(() => 3);
    const seen: number[] = [];
    expect(await followLogs(log.api, db, M, { onEntry: (e) => seen.push(e.sequenceNumber) })).toEqual({ received: 3, continueFrom: 4 });
    expect(seen).toEqual([1, 2, 3]);
    expect(db.logCursor(M)).toBe(4);
    // the log is the platform's: the ledger keeps the position, no copy of the entries
    db.close(); // the last connection closed: everything is in the file itself
    const bytes = readFileSync(db.file, 'latin1');
    expect(bytes).toContain(M);
    expect(bytes).not.toContain('entry 1');
  });

  it('resumes after a disconnect and a restart without repeating or missing an entry', async () => {
    const db = newLedger();
    let total = 5;
    const dying = fakeLog(() => total, 2);
    await expect(followLogs(dying.api, db, M)).rejects.toThrow('socket hang up');
    expect(db.logCursor(M)).toBe(3);
    total = 7;
    const seen: number[] = [];
    const healthy = fakeLog(() => total);
    await followLogs(healthy.api, db, M, { onEntry: (e) => seen.push(e.sequenceNumber) });
    expect(healthy.requests).toEqual([3]);
    expect(seen).toEqual([3, 4, 5, 6, 7]);
    expect(db.logCursor(M)).toBe(8);
  });

  it('with follow, reopens the stream after it ends and stops when interrupted', async () => {
    const db = newLedger();
    let total = 2;
    const log = fakeLog(() => total);
    const ac = new AbortController();
    const seen: number[] = [];
    const done = followLogs(log.api, db, M, {
      follow: true,
      idleMs: 5,
      signal: ac.signal,
      onEntry: (e) => {
        seen.push(e.sequenceNumber);
        if (e.sequenceNumber === 2) total = 4; // more entries arrive while following
        if (e.sequenceNumber === 4) ac.abort();
      },
    });
    expect(await done).toEqual({ received: 4, continueFrom: 5 });
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('reads a filtered query from the start without moving the stored cursor', async () => {
    const db = newLedger();
    await followLogs(fakeLog(() => 2).api, db, M);
    const log = fakeLog(() => 3);
    await followLogs(log.api, db, M, { query: { LogLevels: ['ERROR'] } });
    expect(log.requests).toEqual([1]);
    expect(db.logCursor(M)).toBe(3);
  });
});
