/**
 * Runs the parsed program and turns errors into exit codes and one clear line on stderr.
 * Exit codes (documented in the README):
 *   0 success · 1 failure of the work (records refused, report unbalanced) · 2 usage or
 *   configuration error · 3 authentication or authorisation refused · 4 the service or network
 *   failed, or kept refusing (429), or a job outlived its deadline · 130 interrupted (Ctrl-C)
 */
import type { Command } from 'commander';
import { StagecoachError, type ErrorCode } from '../contract/errors.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, unavailable: 4, interrupted: 130 } as const;

const AUTH_CODES: ReadonlySet<ErrorCode> = new Set([
  'INVALID_CLIENT_CREDENTIALS',
  'UNKNOWN_TENANT_OR_LABEL',
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'SCOPE_NOT_GRANTED',
  'MISSING_BEARER_TOKEN',
]);
// The platform or the way to it failed (or kept refusing): retrying later may help.
const UNAVAILABLE_CODES: ReadonlySet<ErrorCode> = new Set([
  'NETWORK_ERROR',
  'TIMEOUT',
  'SERVICE_UNAVAILABLE',
  'INTERNAL_ERROR',
  'HTTP_ERROR',
  'STREAM_TRUNCATED',
  'RATE_LIMITED',
  'INJECTED_FAULT',
  'TOO_MANY_ATTEMPTS',
  'JOB_DEADLINE_EXCEEDED',
]);

export function exitCodeFor(err: unknown): number {
  if (err instanceof StagecoachError) {
    if (err.code === 'ABORTED') return EXIT.interrupted;
    if (err.code === 'CONFIG_INVALID') return EXIT.usage;
    if (AUTH_CODES.has(err.code)) return EXIT.auth;
    if (UNAVAILABLE_CODES.has(err.code)) return EXIT.unavailable;
  }
  return EXIT.failed;
}

/**
 * A reader that stops early (`stagecoach map --json | head`) closes stdout: the command's output
 * is no longer wanted, so the process ends at once and quietly, as `cat` does, instead of dying
 * with a stack trace. Other stdout errors are still reported.
 */
export function exitQuietlyOnClosedStdout(stdout: NodeJS.WriteStream = process.stdout): void {
  stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    process.stderr.write(`stagecoach: cannot write the output: ${err.message}\n`);
    process.exit(EXIT.failed);
  });
}

export async function runCli(program: Command, argv: readonly string[]): Promise<void> {
  program.exitOverride();
  exitQuietlyOnClosedStdout();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const ce = err as { code?: string; exitCode?: number };
    if (typeof ce.code === 'string' && ce.code.startsWith('commander.')) {
      // commander already printed help or the usage error
      process.exitCode = ce.code === 'commander.helpDisplayed' || ce.code === 'commander.version' ? 0 : EXIT.usage;
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`stagecoach: ${message}\n`);
    process.exitCode = exitCodeFor(err);
  }
}
