/**
 * Messages that used to say nothing, through the real CLI: `status` after `cancel` no longer
 * counts the canceled migration's records as staged; `webhooks subscribe` with a misspelt event
 * lists the event names with the closest one (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let dir: string;

beforeAll(async () => {
  svc = await startTestService();
  dir = tempDir('stagecoach-messages-');
});
afterAll(async () => {
  await svc.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('status after cancel', () => {
  it('shows the records of a canceled migration as such, not as staged, and a new run stages them again', async () => {
    const ledger = join(dir, 'ledger.db');
    const conn = ['--ledger', ledger, '--base-url', svc.url];
    const run = await runCli(['run', 'test/cases/reconcile/people/pipeline.yaml', ...conn]);
    expect(run.code, run.stderr).toBe(0);
    const migrationId = /migration ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    const cancel = await runCli(['cancel', migrationId, ...conn]);
    expect(cancel.code, cancel.stderr).toBe(0);

    const status = await runCli(['status', '--ledger', ledger]);
    expect(status.code, status.stderr).toBe(0);
    const row = (state: string) => new RegExp(`^${state} +(\\d+)$`, 'm').exec(status.stdout)?.[1];
    expect(row('staged')).toBe('0');
    expect(row('in a canceled migration')).toBe('20');
    expect(status.stdout).toMatch(
      new RegExp(
        `^20 records were sent to migration ${migrationId}, canceled \\S+: the platform no longer holds them; the next run stages them into a new migration\\.$`,
        'm',
      ),
    );
    const json = JSON.parse((await runCli(['status', '--ledger', ledger, '--json'])).stdout) as { canceled: unknown[] };
    expect(json.canceled).toEqual([
      { pipeline: 'people', component: 'Counterparties', migrationId, canceledAt: expect.any(String), state: 'staged', records: 20 },
    ]);

    // what status promises: the next run stages them into a new migration
    const again = await runCli(['run', 'test/cases/reconcile/people/pipeline.yaml', ...conn]);
    expect(again.code, again.stderr).toBe(0);
    const after = await runCli(['status', '--ledger', ledger]);
    expect(/^staged +(\d+)$/m.exec(after.stdout)?.[1]).toBe('20');
    expect(after.stdout).not.toContain('canceled');
  });
});

describe('webhooks subscribe with a misspelt event', () => {
  const names =
    'counterparty.merged, counterparty_operational.consolidated, counterparty_master.consolidated, lodging.message.handling_succeeded, lodging.message.handling_failed, process.status-changed';
  it('names the closest event and lists them all (exit 2)', async () => {
    const r = await runCli(['webhooks', 'subscribe', 'counterparty.merge', 'http://127.0.0.1:9/hooks', '--base-url', svc.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `stagecoach: webhooks: "counterparty.merge" is not an event name (did you mean counterparty.merged?); the event names are ${names}\n`,
    );
    const far = await runCli(['webhooks', 'unsubscribe', 'nothing-like-it', 'some-id', '--base-url', svc.url]);
    expect(far.code).toBe(2);
    expect(far.stderr).toBe(`stagecoach: webhooks: "nothing-like-it" is not an event name; the event names are ${names}\n`);
  });
});
