/**
 * What the CLI says and does at the edges of a command's life, through the real CLI: a reader
 * that closes stdout early ends the command quietly; `purge` where there is no ledger says so and
 * creates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT, runCli } from '../support/cli.js';
import { tempDir } from '../support/service.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('stagecoach-words-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stdout closed by its reader (map --json | head)', () => {
  it('ends quietly with exit 0, no EPIPE stack trace', async () => {
    const child = spawn(process.execPath, [CLI, 'map', 'pipelines/crm.yaml', '--json', '--sample', '100000'], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // like `head -c 100`: read one chunk, then close the pipe
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('purge without a ledger', () => {
  it('says there is no ledger (exit 2) and creates none', async () => {
    const r = await runCli(['purge', 'foo'], { cwd: dir });
    const ledger = join(dir, '.stagecoach', 'ledger.db');
    expect(r.stderr).toBe(
      `stagecoach: no ledger at ${ledger}: run a pipeline first (stagecoach run <pipeline>) or name the ledger with --ledger <file>\n`,
    );
    expect(r.code).toBe(2);
    expect(existsSync(join(dir, '.stagecoach'))).toBe(false);
  });
});
