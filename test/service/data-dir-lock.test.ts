/**
 * One embedded service per data folder (src/service/store/data-dir-lock.ts): staging keeps where
 * each referenceId's row is in memory, so a second service on the same database is refused, and
 * the folder is free again once the first one stops or its process is gone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService } from '../../src/service/index.js';

const dirs: string[] = [];
const running: RunningService[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const folder = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  dirs.push(d);
  return d;
};
const start = async (dataDir: string) => {
  const s = await startService({ port: 0, dataDir, logLevel: 'silent' });
  running.push(s);
  return s;
};

describe('the data folder lock', () => {
  it('refuses a second service on the same folder and frees the folder when the first stops', async () => {
    const dataDir = folder();
    const first = await start(dataDir);
    expect(readFileSync(join(dataDir, 'service.lock'), 'utf8').trim()).toBe(String(process.pid));
    await expect(startService({ port: 0, dataDir, logLevel: 'silent' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining(`the data folder ${dataDir} is in use by another embedded service (process ${process.pid})`),
    });
    // Another folder is no problem.
    await start(folder());
    await first.close();
    running.splice(running.indexOf(first), 1);
    expect(existsSync(join(dataDir, 'service.lock'))).toBe(false);
    await start(dataDir);
  });

  it('takes over a lock left by a process that is gone, and refuses one held by a live process', async () => {
    const dataDir = folder();
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    writeFileSync(join(dataDir, 'service.lock'), `${gone.stdout.toString()}\n`);
    const s = await start(dataDir);
    expect(readFileSync(join(dataDir, 'service.lock'), 'utf8').trim()).toBe(String(process.pid));
    await s.close();
    running.splice(running.indexOf(s), 1);

    // PID 1 is always alive: a service of another process.
    writeFileSync(join(dataDir, 'service.lock'), '1\n');
    await expect(startService({ port: 0, dataDir, logLevel: 'silent' })).rejects.toThrow(
      'is in use by another embedded service (process 1)',
    );
  });
});
