/**
 * A ledger file that cannot be written, in a folder that can (issue 41): opening it for a run
 * says so, naming the file, instead of SQLite's bare "attempt to write a readonly database" at
 * the first write. Root may write any file, so as root the check runs as the user nobody.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const asRoot = process.getuid?.() === 0;

describe('a read-only ledger file', () => {
  it('is refused when opened for writing, with the file named; read-only commands still open it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-ro-'));
    chmodSync(dir, 0o777);
    const file = join(dir, 'ledger.db');
    openLedger(file).close();
    chmodSync(file, 0o444);
    const script = `
      const { openLedger } = await import(${JSON.stringify(join(ROOT, 'dist/src/ledger/index.js'))});
      openLedger(${JSON.stringify(file)}, { readonly: true }).close();
      try { const l = openLedger(${JSON.stringify(file)}); l.close(); console.log('opened'); }
      catch (e) { console.log(e.code + ': ' + e.message); }`;
    const command = ['node', '--input-type=module', '-e', script];
    const run = asRoot
      ? spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...command], { encoding: 'utf8' })
      : spawnSync(command[0]!, command.slice(1), { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(
      `LEDGER_ERROR: cannot open the ledger ${file}: no permission to write ${file} (EACCES); SQLite writes the ledger and its -wal and -shm files in that folder, also to read it; name a ledger on a writable disk with --ledger <file> (a copy of ${file} keeps its history)`,
    );
  });
});
