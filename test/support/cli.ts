/**
 * Test support: runs the real, compiled stagecoach CLI (dist/, built by `npm test` before the
 * tests) as a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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
