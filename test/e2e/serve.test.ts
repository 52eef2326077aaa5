import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { startCli } from '../support/cli.js';
import { call, getToken, tempDir } from '../support/service.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function waitExit(child: import('node:child_process').ChildProcess): Promise<number | null> {
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

describe('stagecoach serve', () => {
  it('prints its URL, stops cleanly on SIGTERM and keeps its keys across a restart', async () => {
    const data = tempDir();
    dirs.push(data);
    const first = await startCli(['serve', '--port', '0', '--data', data, '--log-level', 'silent']);
    expect(first.firstLine).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const token = await getToken(first.firstLine);
    first.child.kill('SIGTERM');
    expect(await waitExit(first.child)).toBe(0);

    const second = await startCli(['serve', '--port', '0', '--data', data, '--log-level', 'silent']);
    try {
      // the token signed before the restart still verifies: the signing key was kept
      const res = await call(second.firstLine, token, 'GET', '/authentication/validation');
      expect(res.status).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
      await waitExit(second.child);
    }
  });
});
