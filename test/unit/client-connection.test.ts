/** Connection settings of the CLI: flag > environment > config file > demo defaults. */
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConnection } from '../../src/cli/connection.js';
import { tempDir } from '../support/service.js';

describe('connection settings', () => {
  it('falls back to the demo identity on 127.0.0.1:8787', () => {
    const c = resolveConnection({}, {}, tempDir());
    expect(c).toEqual({
      baseUrl: 'http://127.0.0.1:8787',
      clientId: 'demo-client',
      clientSecret: 'demo-secret',
      brokerKey: 'demo-broker',
      labelReferenceId: 'demo-label',
      sources: { baseUrl: 'default', clientId: 'default', clientSecret: 'default', brokerKey: 'default', labelReferenceId: 'default' },
    });
  });

  it('takes a flag over the environment over the config file, setting by setting', () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'stagecoach.config.json'),
      JSON.stringify({
        baseUrl: 'http://file:1',
        clientId: 'file-id',
        clientSecret: 'file-secret',
        label: 'file-label',
        retry: { retries: 1 },
      }),
    );
    const c = resolveConnection({ clientId: 'flag-id' }, { STAGECOACH_CLIENT_ID: 'env-id', STAGECOACH_CLIENT_SECRET: 'env-secret' }, cwd);
    expect(c).toMatchObject({
      baseUrl: 'http://file:1',
      clientId: 'flag-id',
      clientSecret: 'env-secret',
      brokerKey: 'demo-broker',
      labelReferenceId: 'file-label',
      retry: { retries: 1 },
    });
    expect(c.sources).toEqual({
      baseUrl: 'config',
      clientId: 'flag',
      clientSecret: 'env',
      brokerKey: 'default',
      labelReferenceId: 'config',
    });
    expect(c.configFile).toBe(join(cwd, 'stagecoach.config.json'));
  });

  it('reads a YAML file given with --config, and ignores empty environment variables', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'conn.yml'), 'baseUrl: https://lending.example.com\nbrokerKey: acme\nlabelReferenceId: retail\n');
    const c = resolveConnection({ config: 'conn.yml' }, { STAGECOACH_BROKER_KEY: '' }, cwd);
    expect(c).toMatchObject({ baseUrl: 'https://lending.example.com', brokerKey: 'acme', labelReferenceId: 'retail' });
  });

  it('names the file, line and column of broken YAML, a missing --config file and a wrong type', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'bad.yaml'), 'baseUrl: http://x\nclientId: [unclosed\n');
    expect(() => resolveConnection({ config: 'bad.yaml' }, {}, cwd)).toThrow(/^.*bad\.yaml:\d+:\d+: not valid YAML: /);
    expect(() => resolveConnection({ config: 'nope.json' }, {}, cwd)).toThrow(
      `--config nope.json: file not found (looked at ${join(cwd, 'nope.json')})`,
    );
    writeFileSync(join(cwd, 'typed.json'), JSON.stringify({ clientId: 42 }));
    expect(() => resolveConnection({ config: 'typed.json' }, {}, cwd)).toThrow(
      `${join(cwd, 'typed.json')}: clientId: Invalid input: expected string, received number`,
    );
  });

  it('refuses a misspelt key with the file, its line (YAML), the key and the closest known one; x- keys are left alone', () => {
    const cwd = tempDir();
    const keys = 'baseUrl, clientId, clientSecret, brokerKey, labelReferenceId, label, timeouts, retry, versions';
    writeFileSync(join(cwd, 'typo.yaml'), 'baseUrl: http://x\nclientSecert: s3cret\n');
    expect(() => resolveConnection({ config: 'typo.yaml' }, {}, cwd)).toThrow(
      `${join(cwd, 'typo.yaml')}:2: unknown key clientSecert (did you mean clientSecret?); the keys are ${keys} (a key starting with x- is ignored)`,
    );
    writeFileSync(join(cwd, 'nested.yaml'), 'retry:\n  retries: 2\n  maxDelayMS: 10\n');
    expect(() => resolveConnection({ config: 'nested.yaml' }, {}, cwd)).toThrow(
      `${join(cwd, 'nested.yaml')}:3: unknown key retry.maxDelayMS (did you mean retry.maxDelayMs?); the keys of retry are retries, baseDelayMs, maxDelayMs, maxRetryTimeMs`,
    );
    writeFileSync(join(cwd, 'typo.json'), JSON.stringify({ lable: 'x', zzzzzzzz: 1 }));
    expect(() => resolveConnection({ config: 'typo.json' }, {}, cwd)).toThrow(
      `${join(cwd, 'typo.json')}: unknown key lable (did you mean label?); the keys are ${keys} (a key starting with x- is ignored)`,
    );
    writeFileSync(join(cwd, 'ext.yaml'), 'x-note: shared with the ops team\nbrokerKey: acme\n');
    expect(resolveConnection({ config: 'ext.yaml' }, {}, cwd).brokerKey).toBe('acme');
  });

  it('refuses a base URL that is not absolute, saying where it came from', () => {
    expect(() => resolveConnection({}, { STAGECOACH_BASE_URL: '127.0.0.1:8787' }, tempDir())).toThrow(
      'STAGECOACH_BASE_URL: expected an absolute URL such as http://127.0.0.1:8787, got "127.0.0.1:8787"',
    );
  });
});
