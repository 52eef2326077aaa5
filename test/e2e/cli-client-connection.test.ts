/**
 * The real CLI (dist/) against a real embedded service: `token`, and the connection settings
 * every command shares (flags, environment, config file, defaults) with their exit codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagecoachClient } from '../../src/client/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, type TestService } from '../support/service.js';
import { startServiceWithClient, stopServiceWithClient } from '../support/client-fixture.js';

let svc: TestService;
let client: StagecoachClient;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  ({ svc, client, env, dir } = await startServiceWithClient());
});
afterAll(() => stopServiceWithClient({ svc, client }));

describe('stagecoach token', () => {
  it('prints the claims of the token and its validation, never the token', async () => {
    const r = await runCli(['token'], { env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const lines = r.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s{2,}/)[0])).toEqual([
      'service',
      'client',
      'broker key',
      'label',
      'scopes',
      'issued',
      'expires',
      'issuer',
      'validation',
    ]);
    expect(lines[1]).toBe('client      demo-client');
    expect(lines[4]).toBe('scopes      /authentication /process-orchestration /lodging /counterparty-management /migration-assistance');
    expect(r.stdout).not.toContain('eyJ');
  });
  it('prints only the token with --raw, and a summary object with --json', async () => {
    const raw = await runCli(['token', '--raw'], { env });
    expect(raw.stdout).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const json = JSON.parse((await runCli(['token', '--json'], { env })).stdout);
    expect(json).toMatchObject({
      clientId: 'demo-client',
      brokerKey: 'demo-broker',
      labelReferenceId: 'demo-label',
      valid: true,
      baseUrl: svc.url,
    });
  });
  it('exits 3 with advice when the secret is wrong, and 4 when no service answers', async () => {
    const bad = await runCli(['token', '--client-secret', 'wrong'], { env });
    expect(bad, bad.stderr).toMatchObject({ code: 3 });
    expect(bad.stderr).toBe(
      'stagecoach: the service refused the client credentials (401 on GET /authentication/token/demo-broker/demo-label): client id and secret are not valid; send them as HTTP Basic credentials; check STAGECOACH_CLIENT_ID / STAGECOACH_CLIENT_SECRET (or --client-id / --client-secret)\n',
    );
    const noRetry = join(dir, 'no-retry.json');
    writeFileSync(noRetry, JSON.stringify({ retry: { retries: 0 } }));
    const down = await runCli(['token', '--config', noRetry, '--base-url', 'http://127.0.0.1:1'], { env });
    expect(down, down.stderr).toMatchObject({ code: 4 });
    expect(down.stderr).toMatch(
      /^stagecoach: could not complete GET \/authentication\/token\/demo-broker\/demo-label at http:\/\/127\.0\.0\.1:1: .*\(ECONNREFUSED\); is the service running at http:\/\/127\.0\.0\.1:1\? \(start one with `stagecoach serve`\)\n$/,
    );
  });
});

describe('connection settings', () => {
  it('takes flags over environment over the config file, and reads YAML config files', async () => {
    const yaml = join(dir, 'conn.yaml');
    writeFileSync(
      yaml,
      `baseUrl: ${svc.url}\nclientId: demo-client\nclientSecret: wrong-in-file\nbrokerKey: demo-broker\nlabel: demo-label\n`,
    );
    const fromFile = await runCli(['token', '--json', '--config', yaml], { env: { STAGECOACH_BASE_URL: '' } });
    expect(fromFile, fromFile.stderr).toMatchObject({ code: 3 });
    const envWins = await runCli(['token', '--json', '--config', yaml], {
      env: { STAGECOACH_BASE_URL: '', STAGECOACH_CLIENT_SECRET: 'demo-secret' },
    });
    expect(JSON.parse(envWins.stdout).baseUrl).toBe(svc.url);
    const flagWins = await runCli(['token', '--json', '--config', yaml, '--client-secret', 'wrong-flag'], {
      env: { STAGECOACH_BASE_URL: '', STAGECOACH_CLIENT_SECRET: 'demo-secret' },
    });
    expect(flagWins, flagWins.stderr).toMatchObject({ code: 3 });
  });
  it('reads ./stagecoach.config.json from the working folder', async () => {
    const cwd = tempDir('stagecoach-cwd-');
    writeFileSync(join(cwd, 'stagecoach.config.json'), JSON.stringify({ baseUrl: svc.url, labelReferenceId: 'demo-label-2' }));
    const r = await runCli(['token', '--json'], { cwd, env: { STAGECOACH_BASE_URL: '' } });
    expect(JSON.parse(r.stdout)).toMatchObject({ labelReferenceId: 'demo-label-2', baseUrl: svc.url });
  });
  it('exits 2 naming the file and line of a broken YAML config, and a bad base URL', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'baseUrl: http://x\nclientId: [unclosed\n');
    const r = await runCli(['token', '--config', broken], { env });
    expect(r, r.stderr).toMatchObject({ code: 2 });
    expect(r.stderr).toMatch(new RegExp(`^stagecoach: ${broken.replace(/[.]/g, '\\.')}:\\d+:\\d+: not valid YAML: `));
    const url = await runCli(['token', '--base-url', 'localhost'], { env });
    expect([url.code, url.stderr]).toEqual([
      2,
      'stagecoach: --base-url: expected an absolute URL such as http://127.0.0.1:8787, got "localhost"\n',
    ]);
  });
});
