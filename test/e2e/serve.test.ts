import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { runCli, startCli } from '../support/cli.js';
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
      // without --no-loopback-webhooks a loopback receiver is accepted (the default)
      const hook = await call(second.firstLine, token, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', {
        body: { uri: 'http://127.0.0.1:9/hook' },
      });
      expect(hook.status).toBe(201);
    } finally {
      second.child.kill('SIGTERM');
      await waitExit(second.child);
    }
  });

  it('refuses loopback webhook receivers with --no-loopback-webhooks (422 WEBHOOK_URI_REFUSED)', async () => {
    const data = tempDir();
    dirs.push(data);
    const served = await startCli(['serve', '--port', '0', '--data', data, '--log-level', 'silent', '--no-loopback-webhooks']);
    try {
      const token = await getToken(served.firstLine);
      const base = '/counterparty-management/events/counterparty.merged/endpoints';
      for (const [uri, address] of [
        ['http://127.0.0.1:9/hook', '127.0.0.1'],
        ['http://[::1]:9/hook', '::1'],
      ] as const) {
        const res = await call(served.firstLine, token, 'POST', base, { body: { uri } });
        expect([uri, res.status]).toEqual([uri, 422]);
        expect(res.body).toMatchObject({
          code: 'WEBHOOK_URI_REFUSED',
          detail: `webhook uri refused: ${address} is a loopback address (allowLoopbackWebhooks is off); expected an http(s) uri of a publicly reachable host, got "${uri}"`,
        });
      }
      expect((await call(served.firstLine, token, 'GET', base)).body).toEqual([]);
    } finally {
      served.child.kill('SIGTERM');
      await waitExit(served.child);
    }
  });

  it('writes its log to stderr (JSON off a terminal) and only the address to stdout; a port in use is one line and exit 2', async () => {
    const data = tempDir();
    dirs.push(data);
    const served = await startCli(['serve', '--port', '0', '--data', data]);
    try {
      expect(served.firstLine).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await new Promise((r) => setTimeout(r, 200));
      const log = served
        .stderr()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string });
      expect(log.map((l) => l.msg)).toContain('embedded lending service listening');
      const port = served.firstLine.split(':').pop()!;
      const busy = await runCli(['serve', '--port', port, '--data', tempDir()]);
      expect(busy.code).toBe(2);
      expect(busy.stderr.trim().split('\n')).toEqual([
        `stagecoach: port ${port} on 127.0.0.1 is in use (another service?): stop what holds it, or choose another with --port (0 picks a free one)`,
      ]);
    } finally {
      served.child.kill('SIGTERM');
      await waitExit(served.child);
    }
  });
});
