/**
 * What the CLI says and does at the edges of a command's life, through the real CLI: a reader
 * that closes stdout early ends the command quietly; `purge` where there is no ledger says so and
 * creates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, ROOT, runCli } from '../support/cli.js';
import { openLedger } from '../../src/ledger/index.js';
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
      `stagecoach: ${join(at, 'people-mapping.yaml')}:11:17: record.nationalities[0] reads column "nationality", which the header of ${join(at, 'people.csv')} (${join(at, 'people.csv')}:1) lacks; expected one of "nr", "initials", "surname", "nationality${'x'.repeat(46)}…"\n`,
    );
    expect(r.code).toBe(2);
  });
});

describe('source paths that are no regular file', () => {
  /** The people pipeline in its own folder, reading `path`. */
  const pipelineAt = (name: string, path: string) => {
    const at = join(dir, name);
    mkdirSync(at);
    const src = join(ROOT, 'test/cases/reconcile/people');
    copyFileSync(join(src, 'people-mapping.yaml'), join(at, 'people-mapping.yaml'));
    writeFileSync(
      join(at, 'pipeline.yaml'),
      readFileSync(join(src, 'pipeline.yaml'), 'utf8').replace('path: people.csv', `path: "${path}"`),
    );
    return at;
  };

  it('says a FIFO is a FIFO, not "matches no file"', async () => {
    const at = pipelineAt('fifo', 'people.csv');
    execFileSync('mkfifo', [join(at, 'people.csv')]);
    const r = await runCli(['plan', 'pipeline.yaml'], { cwd: at });
    expect(r.stderr).toBe(
      `stagecoach: source people: people.csv is a FIFO (named pipe), not a regular file; copy what it delivers to a file and name that file (relative to ${at})\n`,
    );
    expect(r.code).toBe(2);
  });

  it('says where a symlink loop is', async () => {
    const at = pipelineAt('loop', 'people.csv');
    symlinkSync('other.csv', join(at, 'people.csv'));
    symlinkSync('people.csv', join(at, 'other.csv'));
    const r = await runCli(['plan', 'pipeline.yaml'], { cwd: at });
    expect(r.stderr).toBe(
      `stagecoach: source people: symlink loop at people.csv: its links lead back to themselves, expected a regular file (relative to ${at})\n`,
    );
    expect(r.code).toBe(2);
  });

  it('reads a file once when a recursive glob reaches it twice through a symlinked folder', async () => {
    const at = pipelineAt('linked', 'data/**/*.csv');
    mkdirSync(join(at, 'data', '2024'), { recursive: true });
    copyFileSync(join(ROOT, 'test/cases/reconcile/people/people.csv'), join(at, 'data', '2024', 'people.csv'));
    symlinkSync('2024', join(at, 'data', 'latest'));
    const r = await runCli(['plan', 'pipeline.yaml'], { cwd: at });
    expect(r.code, r.stderr).toBe(0);
    expect(/^ {2}rows read +(\d+) +(.*)$/m.exec(r.stdout)?.slice(1)).toEqual(['20', 'people 20']);
  });
});

// A read-only disk, really: the folder bind-mounted read-only in a user and mount namespace of
// its own (unshare), where the CLI then runs. Skipped where the system allows no namespaces.
const canMountReadOnly = spawnSync('unshare', ['-rm', 'true']).status === 0;

describe.skipIf(!canMountReadOnly)('a ledger on a read-only disk', () => {
  it('says which path, that the disk is read-only, and what to do', () => {
    const folder = join(dir, 'read-only');
    mkdirSync(folder);
    const file = join(folder, 'ledger.db');
    openLedger(file).close();
    const sh = `mount --bind ${folder} ${folder} && mount -o remount,ro,bind ${folder} && exec "$@"`;
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', sh, 'sh', process.execPath, CLI, 'status', '--ledger', file], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(r.stderr).toBe(
      `stagecoach: cannot open the ledger ${file}: ${folder} is on a read-only file system (EROFS); SQLite writes the ledger and its -wal and -shm files in that folder, also to read it; name a ledger on a writable disk with --ledger <file> (a copy of ${file} keeps its history)\n`,
    );
    expect(r.status).toBe(1);
  });
});
