/**
 * Open loan applications through the real CLI (dist/) against the embedded service: the sample
 * export's applications are lodged as processes with one CleanOrder message each, the planted
 * XSD violation and the duplicate are refused before anything is sent (ledger + corrections
 * file), every sent message gets the platform's outcome, and a second run lodges nothing again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { StagecoachClient } from '../../src/client/index.js';
import { runCli, ROOT } from '../support/cli.js';
import type { TestService } from '../support/service.js';
import { startServiceWithClient, stopServiceWithClient } from '../support/client-fixture.js';

let svc: TestService;
let client: StagecoachClient;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  ({ svc, client, env, dir } = await startServiceWithClient());
});
afterAll(() => stopServiceWithClient({ svc, client }));

describe('stagecoach applications', () => {
  it('lodges each valid application once, refuses the planted defects, records every outcome', async () => {
    const ledger = join(dir, 'apps-ledger.db');
    const args = ['applications', join(ROOT, 'pipelines/applications.yaml'), '--ledger', ledger, '--json'];
    const r = await runCli(args, { env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ read: 6, sent: 4, alreadySent: 0, succeeded: 3, pending: [] });
    // the planted total that is not the sum of its loan parts: valid XML, failed by the platform's handling, with its reason
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0].key).toBe('A-2026-01003');
    expect(JSON.stringify(report.failed[0].errors)).toMatch(/TotalLoanAmount/);
    expect(
      report.refused.map((x: { reasons: Array<{ code: string; field: string }> }) => [x.reasons[0]!.code, x.reasons[0]!.field]),
    ).toEqual([
      ['APPLICATION_SCHEMA_VIOLATION', 'CleanOrderCounterparties.xml/Initials'],
      ['DUPLICATE_LEGACY_KEY', 'key'],
    ]);
    expect(report.refused[0].at).toMatch(/^samples\/applications\/aanvragen\.json:\d+$/);
    expect(report.corrections).toHaveLength(1);
    const corrections = readFileSync(report.corrections[0].file, 'utf8').trim().split('\n');
    expect(corrections).toHaveLength(2);
    expect(corrections[0]).toContain('"aanvraagnummer":"A-2026-01002"');

    const db = new Database(ledger, { readonly: true });
    const rows = db.prepare('SELECT legacy_key, step, process_id, message_id FROM applications ORDER BY legacy_key').all() as Array<{
      legacy_key: string;
      step: string;
      process_id: string | null;
      message_id: string | null;
    }>;
    const history = db
      .prepare("SELECT step FROM application_steps WHERE legacy_key = 'A-2026-01001' AND step NOT LIKE 'status:%' ORDER BY rowid")
      .all();
    // the run's own webhook receiver got process.status-changed (X-Event-Token checked) for the applications it sent
    const statuses = db.prepare("SELECT DISTINCT step FROM application_steps WHERE step LIKE 'status:%' ORDER BY step").all();
    db.close();
    expect(rows.filter((x) => x.step === 'succeeded')).toHaveLength(3);
    expect(rows.find((x) => x.legacy_key === 'A-2026-01003')?.step).toBe('failed');
    expect(history.map((h) => (h as { step: string }).step)).toEqual([
      'process-requested',
      'process-created',
      'message-created',
      'uploaded',
      'sent',
      'succeeded',
    ]);
    expect(statuses.map((x) => (x as { step: string }).step)).toContain('status:ApplicationReceived');
    // and removed its subscriptions at the end
    for (const event of ['lodging.message.handling_succeeded', 'lodging.message.handling_failed', 'process.status-changed'])
      expect(await client.events.list(event)).toEqual([]);
    const lodged = rows.find((x) => x.legacy_key === 'A-2026-01001')!;
    const proc = await client.processes.get(lodged.process_id!);
    expect(proc).toMatchObject({ externalReferences: [{ origin: 'crm', referenceId: 'A-2026-01001' }] });
    const message = await client.lodging.getMessage(lodged.process_id!, lodged.message_id!);
    expect(message.status).toBe('Sent');

    const again = await runCli(args, { env });
    expect(again, again.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(again.stdout)).toMatchObject({ read: 6, sent: 0, alreadySent: 4, succeeded: 3 });
    const db2 = new Database(ledger, { readonly: true });
    const processes = db2.prepare("SELECT COUNT(*) AS n FROM application_steps WHERE step = 'process-created'").get() as { n: number };
    db2.close();
    expect(processes.n).toBe(4);
    expect(existsSync(join(dir, 'corrections'))).toBe(true);

    // the printout: counts, each refusal at its file:line with the value libxml2 quotes masked
    const plain = await runCli(args.slice(0, -1), { env });
    expect(plain.stdout.split('\n').slice(0, 3)).toEqual([
      'crm-applications: read 6, refused 2, sent 0 (and 4 sent before), handled: succeeded 3, failed 1, no outcome yet 0',
      "  refused APPLICATION_SCHEMA_VIOLATION: samples/applications/aanvragen.json:37: CleanOrderCounterparties.xml does not comply with CleanOrderCounterparties.xsd: Initials: line 4: Element 'Initials': [facet 'pattern'] The value 'j*' is not accepted by the pattern '([A-Z][a-z]?\\.)+'.",
      '  refused DUPLICATE_LEGACY_KEY: samples/applications/aanvragen.json:193: application A-2026-01001 is already at samples/applications/aanvragen.json:2; one application is lodged once',
    ]);
  });
});
