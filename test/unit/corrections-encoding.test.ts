/**
 * A corrections file saved as windows-1252 (a spreadsheet's "CSV" on Windows) (issue 41): it
 * cannot declare its encoding, so it was refused row by row with "declare its encoding", which a
 * corrections file cannot do. The documented rule now: UTF-8 throughout (or a BOM) is read as
 * such, any other file as windows-1252 — wherever in the file the first non-UTF-8 byte is.
 */
import iconv from 'iconv-lite';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { correctionsFormatOf } from '../../src/pipeline/checks/corrections.js';
import { readSourceFile, type ReadableSource } from '../../src/pipeline/source/index.js';

const dir = mkdtempSync(join(tmpdir(), 'corr-enc-'));
const HEAD = '_origin;nr;naam;error_field;error_code;error_message;error_stage;_row_hash\r\n';
const row = (n: number, name: string) => `k.csv:${n};${n};${name};naam;X;m;mapping;h\r\n`;

async function names(file: string): Promise<unknown[]> {
  const format = (await correctionsFormatOf(file))!;
  const source = { ...format, name: 'c', json: {} } as unknown as ReadableSource;
  const out: unknown[] = [];
  for await (const r of readSourceFile(source, { path: file, file: 'c.csv' })) out.push('code' in r ? r.message : r.values.naam);
  return out;
}

describe('corrections file encoding', () => {
  it('reads a windows-1252 corrections file as windows-1252, even when its first odd byte is far in', async () => {
    const file = join(dir, 'k.corrections.csv');
    const rows = Array.from({ length: 5000 }, (_, i) => row(i + 2, 'Visser')).join('');
    writeFileSync(file, iconv.encode(`${HEAD}${rows}${row(9999, 'Zoë Müller')}`, 'windows-1252'));
    expect((await correctionsFormatOf(file))?.encoding).toBe('windows-1252');
    expect((await names(file)).at(-1)).toBe('Zoë Müller');
  });

  it('reads UTF-8 (with or without a BOM) as UTF-8', async () => {
    const plain = join(dir, 'u.corrections.csv');
    writeFileSync(plain, `${HEAD}${row(2, 'Zoë')}`);
    expect(await names(plain)).toEqual(['Zoë']);
    const bom = join(dir, 'b.corrections.csv');
    writeFileSync(bom, `\ufeff${HEAD}${row(2, 'Zoë')}`);
    expect(await names(bom)).toEqual(['Zoë']);
  });
});
