/**
 * What the CLI says and does at the edges of a command's life, through the real CLI: a reader
 * that closes stdout early ends the command quietly; `purge` where there is no ledger says so and
 * creates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
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

describe('a file without a line break', () => {
  it('is reported with its header names cut to 60 characters, not echoed whole', async () => {
    const at = join(dir, 'no-line-break');
    mkdirSync(at);
    for (const f of ['pipeline.yaml', 'people-mapping.yaml']) copyFileSync(join(ROOT, 'test/cases/reconcile/people', f), join(at, f));
    // 5 MB without a line feed: all of it is the header line, its last "name" 5 MB long
    writeFileSync(join(at, 'people.csv'), `nr;initials;surname;nationality${'x'.repeat(5_000_000)}`);
    const r = await runCli(['plan', join(at, 'pipeline.yaml')]);
    expect(r.stderr).toBe(
      `stagecoach: ${join(at, 'people.csv')}:1: the mapping reads column "nationality" that the header lacks; expected one of "nr", "initials", "surname", "nationality${'x'.repeat(46)}…"\n`,
    );
    expect(r.code).toBe(2);
  });
});
