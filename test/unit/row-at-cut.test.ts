/**
 * A refused row read back for the corrections file and the report (issue 41): a row with a quote
 * that never closes, over 1 MiB on its first line (the was 52 MB), is never passed off
 * as the whole row: its `extra` (the corrections file's `_extra` column) says it is cut and where.
 * A short unreadable row says that only its first line is shown; a fixed-width line too long
 * says it is cut.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRowAt } from '../../src/pipeline/source/index.js';
import { MAX_ROW_CHARS } from '../../src/pipeline/source/row-at.js';

const dir = mkdtempSync(join(tmpdir(), 'row-at-cut-'));
const HEAD = 'nr;naam;plaats\n1;Jan;Delft\n';

describe('a refused row read back whole or marked', () => {
  it('marks an unclosed-quote row longer than the limit as cut', async () => {
    const file = join(dir, 'long.csv');
    writeFileSync(file, `${HEAD}2;"${'x'.repeat(3 * 1024 * 1024)}`);
    const row = await readRowAt(file, HEAD.length, { format: 'csv', encoding: 'utf-8', csv: { delimiter: ';' } });
    expect(String(row.values.nr).length).toBe(MAX_ROW_CHARS);
    expect(row.extra).toMatch(/only its first 1,048,576 characters are shown here/);
  });

  it('says that only the first line of a short unclosed-quote row is shown', async () => {
    const file = join(dir, 'short.csv');
    writeFileSync(file, `${HEAD}2;"Pie\nt;Ede\n3;Kees;Gouda\n`);
    const row = await readRowAt(file, HEAD.length, { format: 'csv', encoding: 'utf-8', csv: { delimiter: ';' } });
    expect(row.values.nr).toBe('2;"Pie');
    expect(row.extra).toMatch(/a quote that never closes\): only its first line is shown here/);
  });

  it('marks a fixed-width line longer than the limit as cut', async () => {
    const file = join(dir, 'long.txt');
    writeFileSync(file, `${'y'.repeat(2 * 1024 * 1024)}\n`);
    const fixedWidth = { columns: [{ name: 'a', start: 1, length: 4 }] };
    const row = await readRowAt(file, 0, { format: 'fixed-width', encoding: 'utf-8', fixedWidth });
    expect(row.extra).toMatch(/^the line is longer than 4 characters; only its first 1,048,576 characters/);
  });
});
