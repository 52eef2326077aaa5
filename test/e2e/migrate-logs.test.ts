import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CLI, ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sequenceNumbers = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { sequenceNumber: number }).sequenceNumber);

describe('stagecoach logs', () => {
  it('keeps its place in the ledger and continues after the last entry it printed, also across --follow and a restart', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-logs-');
    dirs.push(dir);
    const ledger = join(dir, 'ledger.db');
    const conn = ['--ledger', ledger, '--base-url', svc.url];
    const staged = await runCli(['run', 'test/cases/reconcile/people/pipeline.yaml', ...conn]);
    expect(staged.code).toBe(0);

    const first = await runCli(['logs', '--json', ...conn]);
    expect(first.code).toBe(0);
    const seen = sequenceNumbers(first.stdout);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual(seen.map((_s, i) => i + 1));

    // nothing new: nothing printed, the cursor stays
    const none = await runCli(['logs', ...conn]);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(
      new RegExp(
        `^migration [0-9a-f-]{36} \\(the latest in the ledger ${ledger}: run 1 of people\\)\n0 new entries; next read continues from ${seen.length + 1} \\(--from-start prints the whole log\\)\n$`,
      ),
    );

    // follow while a validation writes new entries, then stop it with Ctrl-C
    const follower = spawn(process.execPath, [CLI, 'logs', '--follow', '--json', ...conn], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let followed = '';
    follower.stdout.on('data', (d: Buffer) => (followed += d));
    const validated = await runCli(['validate', ...conn]);
    expect(validated.code).toBe(1);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (followed.includes('ValidatedStaging')) {
          clearInterval(check);
          resolve();
        }
      }, 50);
    });
    follower.kill('SIGINT');
    const code = await new Promise<number | null>((r) => follower.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    const during = sequenceNumbers(followed);
    expect(during[0]).toBe(seen.length + 1);

    // a new process continues after the last stored entry: no repeat, no gap
    await runCli(['validate', ...conn]);
    const after = sequenceNumbers((await runCli(['logs', '--json', ...conn])).stdout);
    expect(after[0]).toBe(during[during.length - 1]! + 1);
    // one series, no repeat, no gap; the ledger holds only where the next read starts
    const all = [...seen, ...during, ...after];
    expect(all).toEqual(all.map((_s, i) => i + 1));
    const db = new Database(ledger, { readonly: true });
    try {
      expect(db.prepare('SELECT continue_from FROM log_cursor').pluck().all()).toEqual([all.length + 1]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'migration_logs'").all()).toEqual([]);
    } finally {
      db.close();
    }
  });
});
