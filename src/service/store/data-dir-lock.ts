/**
 * One service per data folder. Staging finds a referenceId's row through a table it keeps in
 * memory (migration/store-staging.ts), not through a unique index, so a second service writing
 * the same database would not see the first one's rows and could stage a record twice. Reading
 * the database from elsewhere (a test, the sqlite3 shell) is fine; a second service is refused.
 *
 * The lock is `service.lock` in the data folder, holding the owner's process id. A lock left by a
 * process that is gone (`kill -9`, a crash) is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StagecoachError } from '../../contract/errors.js';

/** Locks which data folders this process holds (two services in one process count as two). */
const heldHere = new Set<string>();

/**
 * Takes the data folder for this service; returns the release.
 * @example const release = lockDataDir('/tmp/svc'); … release();
 */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'service.lock');
  if (heldHere.has(file)) throw inUse(dataDir, process.pid, file);
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      heldHere.add(file);
      return () => {
        if (heldHere.delete(file)) rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number.parseInt(readOwner(file), 10);
      if (owner > 0 && owner !== process.pid && running(owner)) throw inUse(dataDir, owner, file);
      rmSync(file, { force: true }); // left by a process that is gone: take it over
    }
  }
}

function inUse(dataDir: string, pid: number, file: string): StagecoachError {
  return new StagecoachError(
    'CONFIG_INVALID',
    `the data folder ${dataDir} is in use by another embedded service (process ${pid}); stop that one first, or give this one another data folder`,
    { file },
  );
}

function readOwner(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Whether a process with this id exists (EPERM: it does, under another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return true;
}
