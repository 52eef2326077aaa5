/**
 * After `migrate`, the step commands without a migration id work on the ledger's latest migration
 * (the platform no longer calls a completed one active), say which on stderr, and `logs
 * --from-start` prints a finished migration's whole log once `logs` has read it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let dir: string;
let conn: string[];
let ledger: string;
let migrationId: string;

beforeAll(async () => {
  svc = await startTestService();
  dir = tempDir('stagecoach-step-defaults-');
  ledger = join(dir, 'ledger.db');
  conn = ['--ledger', ledger, '--base-url', svc.url];
  const r = await runCli(['migrate', 'test/cases/reconcile/people/pipeline.yaml', '--drop-invalid', '--out', join(dir, 'report'), ...conn]);
  expect(r.code, r.stderr).toBe(0);
  migrationId = /into migration ([0-9a-f-]{36})/.exec(r.stdout)![1]!;
});
afterAll(async () => {
  await svc.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const picked = () => `migration ${migrationId} (the latest in the ledger ${ledger}: run 1 of people)\n`;

describe('step commands without a migration id after migrate', () => {
  it('counts works on the ledger latest migration and says so', async () => {
    const r = await runCli(['counts', ...conn]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.startsWith(picked()), r.stderr).toBe(true);
    expect(r.stdout).toMatch(/person +staged +19 +imported +19/);
  });

  it('logs says the log was read and --from-start prints it all, in order', async () => {
    const again = await runCli(['logs', ...conn]);
    expect(again.code, again.stderr).toBe(0);
    const cursor = Number(/next read continues from (\d+)/.exec(again.stderr)?.[1]);
    expect(cursor).toBeGreaterThan(1);
    // The first read prints the log; a second one has nothing new and says how to see it all.
    const none = await runCli(['logs', ...conn]);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe(`${picked()}0 new entries; next read continues from ${cursor} (--from-start prints the whole log)\n`);

    const all = await runCli(['logs', '--from-start', '--json', ...conn]);
    expect(all.code, all.stderr).toBe(0);
    const entries = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { sequenceNumber: number; action: string });
    expect(entries.map((e) => e.sequenceNumber)).toEqual(Array.from({ length: cursor - 1 }, (_, i) => i + 1));
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['CreatedMigration', 'ValidatedStaging', 'ImportedEntities']));
    // it does not move the ledger's cursor
    expect((await runCli(['logs', ...conn])).stderr).toContain(`0 new entries; next read continues from ${cursor}`);
  });

  it('cancel and validate name the ledger latest migration (the platform says why it is final)', async () => {
    for (const command of ['cancel', 'validate']) {
      const r = await runCli([command, ...conn]);
      expect(r.stderr.startsWith(picked()), r.stderr).toBe(true);
      expect(r.stderr).toContain(`migration ${migrationId} is Completed (imported), which is final`);
      expect(r.code).toBe(1);
    }
  });

  it('--pipeline picks among the pipelines of the ledger, and names one it does not know', async () => {
    expect((await runCli(['counts', '--pipeline', 'people', ...conn])).stderr.startsWith(picked())).toBe(true);
    const r = await runCli(['logs', '--pipeline', 'crm', ...conn]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `stagecoach: No migration given and the ledger ${ledger} has no run of crm attached to a migration; pass the migration reference id\n`,
    );
  });
});
