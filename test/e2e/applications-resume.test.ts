/**
 * A run of the applications pipeline stopped at each step — right after the platform did the
 * step's request and before the ledger recorded it, the worst moment — and run again: every
 * application ends with exactly one Sent message and an outcome. A stop after POST process may
 * leave one empty process; the ledger says so, and no message is ever under it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { StagecoachClient } from '../../src/client/index.js';
import { ApplicationLedger } from '../../src/ledger/application-steps.js';
import { openLedgerDb } from '../../src/ledger/schema.js';
import { loadApplicationsPipeline } from '../../src/pipeline/applications/definition.js';
import { runApplications } from '../../src/reconcile/applications.js';
import { ROOT } from '../support/cli.js';
import type { TestService } from '../support/service.js';
import { startServiceWithClient, stopServiceWithClient } from '../support/client-fixture.js';

let svc: TestService;
let client: StagecoachClient;
let dir: string;

beforeAll(async () => {
  ({ svc, client, dir } = await startServiceWithClient());
});
afterAll(() => stopServiceWithClient({ svc, client }));

class Stop extends Error {}

/** What the platform holds, read from the service's own database: messages (Sent or not) and processes. */
function platformCounts(): { messages: number; sent: number; processes: number } {
  const file = readdirSync(svc.dataDir).find((f) => f.endsWith('.db') || f.endsWith('.sqlite'));
  const db = new Database(join(svc.dataDir, file!), { readonly: true });
  try {
    const m = db.prepare("SELECT COUNT(*) AS n, COALESCE(SUM(status = 'Sent'), 0) AS sent FROM lodging_messages").get() as {
      n: number;
      sent: number;
    };
    const p = db.prepare('SELECT COUNT(*) AS n FROM processes').get() as { n: number };
    return { messages: m.n, sent: m.sent, processes: p.n };
  } finally {
    db.close();
  }
}

/** The client, with one request that does its work on the platform and then "dies" (the nth call of `method`). */
function dyingClient(area: 'processes' | 'lodging', method: string, nth: number): StagecoachClient {
  let calls = 0;
  const api = client[area] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const wrapped = new Proxy(api, {
    get(target, prop) {
      const real = Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>;
      if (prop !== method) return real;
      return async (...args: unknown[]) => {
        const out = await real.apply(target, args);
        if (++calls === nth) throw new Stop(`stopped after ${method}`);
        return out;
      };
    },
  });
  return new Proxy(client, { get: (t, p) => (p === area ? wrapped : Reflect.get(t, p)) });
}

describe('applications: stopped at any step, resumed, nothing lodged twice', () => {
  const cases: Array<[string, 'processes' | 'lodging', string]> = [
    ['after POST process', 'processes', 'create'],
    ['after PUT message', 'lodging', 'createMessage'],
    ['after an attachment upload', 'lodging', 'uploadAttachment'],
    ['after send', 'lodging', 'send'],
  ];
  it.each(cases)('%s', async (name, area, method) => {
    const def = await loadApplicationsPipeline(join(ROOT, 'pipelines/applications.yaml'));
    def.name = `resume-${method}`; // a ledger of its own per case
    def.lodging.events = 'poll'; // outcomes by reading the messages back only (the lodge e2e covers the webhook path)
    const db = openLedgerDb(join(dir, `${method}.db`));
    const before = platformCounts();
    try {
      const opts = { correctionsDir: join(dir, `corrections-${method}`) };
      await expect(runApplications(def, dyingClient(area, method, 2), db, opts)).rejects.toBeInstanceOf(Stop);
      const report = await runApplications(def, client, db, opts);
      expect(report.succeeded, name).toBe(3);
      expect(report.failed.map((f) => f.key)).toEqual(['A-2026-01003']); // the planted handling failure
      const after = platformCounts();
      // four applications: four messages, all Sent; one process each, plus at most the one a stop after POST left empty
      expect({ messages: after.messages - before.messages, sent: after.sent - before.sent }).toEqual({ messages: 4, sent: 4 });
      expect(after.processes - before.processes).toBe(method === 'create' ? 5 : 4);
      const ledger = new ApplicationLedger(db);
      expect(
        ledger
          .all(def.name)
          .filter((r) => r.step === 'succeeded')
          .map((r) => r.detail),
      ).toEqual(Array(3).fill('{"via":"poll"}'));
      for (const row of ledger.all(def.name).filter((r) => r.step !== 'refused')) {
        const message = await client.lodging.getMessage(row.processId!, row.messageId!);
        expect(message.status).toBe('Sent');
        const created = ledger.history(def.name, row.scope, row.legacyKey).filter((h) => h.step === 'process-created');
        const sends = ledger.history(def.name, row.scope, row.legacyKey).filter((h) => h.step === 'sent');
        expect(sends).toHaveLength(1);
        expect(created).toHaveLength(1);
      }
      if (method === 'create') {
        const noted = ledger
          .all(def.name)
          .filter((r) => ledger.history(def.name, r.scope, r.legacyKey).some((h) => h.detail?.includes('holds no message')));
        expect(noted).toHaveLength(1);
      }
    } finally {
      db.close();
    }
  });
});
