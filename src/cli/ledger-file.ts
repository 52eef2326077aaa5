/**
 * The ledger file a reading command works on. Commands that only read or clean up a ledger
 * (`status`, `purge`) must not create an empty one where there was none: they say so instead.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { StagecoachError } from '../contract/errors.js';
import { DEFAULT_LEDGER_FILE } from '../ledger/types.js';

/** The absolute path of the ledger `--ledger` names (or the default), which must exist. */
export function existingLedgerFile(given: string | undefined): string {
  const file = resolve(given ?? DEFAULT_LEDGER_FILE);
  if (!existsSync(file))
    throw new StagecoachError(
      'CONFIG_INVALID',
      `no ledger at ${file}: run a pipeline first (stagecoach run <pipeline>) or name the ledger with --ledger <file>`,
      { file },
    );
  return file;
}
