/**
 * A second `migrate` of a pipeline whose migration completed reads the export again. It used to
 * resume the finished chain ("the import … was started by an earlier migrate: resuming its chain
 * instead of staging again"), print the old run's row count, say "Reconciliation balanced" and
 * leave a row added to the export off the platform: an account that disagreed with the export,
 * silently. Found by an independent life generator (two pipelines, export edits between runs).
 */
import { appendFileSync, cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let dir: string;
const cli = (args: string[]) => runCli([...args, '--ledger', join(dir, 'ledger.db'), '--base-url', svc.url], { cwd: dir });

beforeAll(async () => {
  svc = await startTestService();
  dir = tempDir('stagecoach-migrate-after-complete-');
  for (const sub of ['pipelines', 'mappings', 'samples/core-banking']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
});
afterAll(async () => {
  await svc.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('migrate after its migration completed', () => {
  it('reads the changed export again and imports the row added since, into a new migration', async () => {
    const first = await cli(['migrate', 'pipelines/core-banking.yaml', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const before = JSON.parse(first.stdout) as { run: { rowsRead: number; migrationId: string } };

    // One more customer at the end of the fixed-width extract (a new key and surname), as long as the others.
    const file = join(dir, 'samples/core-banking/klanten.txt');
    const lines = readFileSync(file, 'latin1')
      .split(/\r?\n/)
      .filter((l) => l.length > 0);
    const last = lines.at(-1)!;
    const added = `${'9'.repeat(8)}${last.slice(8, 58)}${'Nieuwkomer'.padEnd(30)}${last.slice(88)}`;
    expect(added).toHaveLength(last.length);
    appendFileSync(file, `${added}${readFileSync(file, 'latin1').includes('\r\n') ? '\r\n' : '\n'}`, 'latin1');

    const second = await cli(['migrate', 'pipelines/core-banking.yaml', '--json']);
    expect(second.stderr).not.toContain('resuming its chain');
    const after = JSON.parse(second.stdout) as { run: { rowsRead: number; migrationId: string; sent: number } };
    expect(after.run.rowsRead).toBe(before.run.rowsRead + 1);
    expect(after.run.migrationId).not.toBe(before.run.migrationId);
    expect(after.run.sent).toBeGreaterThanOrEqual(1);
  });
});
