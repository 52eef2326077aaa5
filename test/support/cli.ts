/**
 * Test support: runs the real, compiled stagecoach CLI (dist/, built by `npm test` before the
 * tests) as a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Starts a long-running CLI command (e.g. `serve`) and resolves once its first stdout line is out. */
export function startCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ child: ChildProcess; firstLine: string; stderr: () => string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
    });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const onData = (d: Buffer) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.stdout!.off('data', onData);
        resolvePromise({ child, firstLine: out.slice(0, nl), stderr: () => err });
      }
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`CLI exited (${code}) before printing a line: ${err}`)));
  });
}

/**
 * `generate-samples` of `persons` persons into `dir`, then row 9 (line 10 of klanten.csv) given
 * the identity of row 2 (line 3): voorletters … geboortedatum, so the platform's validation sees
 * one duplicate identity. Returns the file's cells (row 0 is the header).
 */
export async function samplesWithSharedIdentity(dir: string, persons: number): Promise<string[][]> {
  const generated = await runCli(['generate-samples', '--persons', String(persons), '--organisations', '0', '--out', dir]);
  if (generated.code !== 0) throw new Error(`generate-samples failed: ${generated.stderr}`);
  const file = join(dir, 'klanten.csv');
  const cells = readFileSync(file, 'utf8')
    .split('\r\n')
    .map((l) => l.split(';'));
  for (const c of [1, 2, 3, 4, 5, 6]) cells[9]![c] = cells[2]![c]!;
  writeFileSync(file, cells.map((c) => c.join(';')).join('\r\n'));
  return cells;
}
