/**
 * The end-of-run check of the source files (Resume.changedFiles, src/pipeline/runner/resume.ts):
 * a file is as the run found it only when its size, modification time and first 64 KiB are.
 * The e2e test (source-changed-while-read) cuts a file while a real run reads it; this one
 * covers the changes that keep the size.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { loadPipeline } from '../../src/pipeline/read-pipeline.js';
import { Resume } from '../../src/pipeline/runner/resume.js';
import { tempDir } from '../support/service.js';

const CASE = join(import.meta.dirname, '..', 'cases', 'reconcile', 'people');

describe('a source file checked again when reading ends', () => {
  let dir: string;
  let ledger: Ledger;
  let csv: string;
  const look = async () => Resume.look(await loadPipeline(join(dir, 'pipeline.yaml')), ledger, 'hash', { corrections: false });

  beforeEach(() => {
    dir = tempDir('stagecoach-changed-');
    for (const f of ['pipeline.yaml', 'people-mapping.yaml', 'people.csv']) copyFileSync(join(CASE, f), join(dir, f));
    csv = join(dir, 'people.csv');
    ledger = openLedger(join(dir, 'ledger.db'));
  });
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds nothing when nothing changed', async () => {
    expect(await (await look()).changedFiles()).toEqual([]);
  });

  it('names a file rewritten with the same size, one touched, one cut and one gone', async () => {
    const shown = (await look()).fingerprints[0]!.file;
    const before = statSync(csv);
    const text = readFileSync(csv);

    let resume = await look();
    const rewritten = Buffer.from(text);
    rewritten[text.indexOf(10) + 1] = rewritten[text.indexOf(10) + 1] === 0x39 ? 0x38 : 0x39; // a digit of the first row's key
    writeFileSync(csv, rewritten);
    utimesSync(csv, before.atime, before.mtime); // same size, same time: only the content tells
    expect(await resume.changedFiles()).toEqual([
      { file: shown, message: `${shown} changed while the run read it: its first 64 KiB differ from when the run started` },
    ]);

    resume = await look();
    const later = new Date(statSync(csv).mtimeMs + 5_000);
    utimesSync(csv, later, later);
    // as the file system keeps it (it may round the time set)
    const modified = new Date(statSync(csv).mtimeMs).toISOString();
    expect(await resume.changedFiles()).toEqual([
      { file: shown, message: `${shown} changed while the run read it: modified at ${modified}, after the run started` },
    ]);

    resume = await look();
    writeFileSync(csv, text.subarray(0, 100));
    expect(await resume.changedFiles()).toEqual([
      {
        file: shown,
        message: `${shown} changed while the run read it: ${text.length.toLocaleString('en-US')} bytes when the run started, 100 bytes now`,
      },
    ]);

    resume = await look();
    rmSync(csv);
    expect(await resume.changedFiles()).toEqual([
      { file: shown, message: `${shown} changed while the run read it: it cannot be opened any more (ENOENT)` },
    ]);
  });
});
