/**
 * Exit codes as docs/cli.md documents them, for every command the CLI lists: a usage error
 * (an unknown flag, a missing argument) is 2 wherever it happens, with one line naming it.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

async function commands(): Promise<string[]> {
  const help = await runCli(['--help']);
  const section = help.stdout.split('Commands:')[1] ?? '';
  return section
    .split('\n')
    .map((l) => /^ {2}([a-z][a-z-]*)/.exec(l)?.[1])
    .filter((c): c is string => c !== undefined && c !== 'help');
}

describe('exit codes', () => {
  it('is 2 for an unknown flag on every command', async () => {
    const names = await commands();
    expect(names).toEqual(expect.arrayContaining(['init', 'plan', 'run', 'migrate', 'token', 'serve', 'purge', 'generate-samples']));
    // One process per command, started a few at a time: one after the other, 30 Node start-ups
    // took most of a minute on a busy 2-core machine.
    const codes: Record<string, number | null> = {};
    const queue = [...names];
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) codes[name] = (await runCli([name, '--no-such-flag'])).code;
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(codes).toEqual(Object.fromEntries(names.map((n) => [n, 2])));
  });

  it.each([
    [['plan'], "error: missing required argument 'pipeline'"],
    [['generate-samples'], "error: required option '--persons <n>' not specified"],
    [['migrate', 'x', '--bogus'], "error: unknown option '--bogus'"],
    [['token', '--bogus'], "error: unknown option '--bogus'"],
    [['serve', '--port', 'abc'], 'stagecoach: --port expects a whole number from 0 to 65535, got "abc"'],
    [['plan', 'no-such-pipeline.yaml'], 'stagecoach:'],
  ])('is 2 for %j, with one line saying what is wrong', async (args, line) => {
    const res = await runCli(args);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')[0]).toContain(line);
  });
});
