/**
 * UTF-16 declared as a one-byte encoding or UTF-8 (item 7 of issue 28): read as declared, every
 * other byte is a NUL and the line count doubles. `auto` reads such a file as UTF-16 even
 * without a byte-order mark; a declaration that contradicts it is refused with the file's name.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTally, tallyDisagreement } from '../../src/pipeline/source/tally.js';
import { readCsvFile } from '../../src/pipeline/source/csv/index.js';
import { detectEncoding, resolveEncoding, utf16Pattern } from '../../src/pipeline/source/encoding.js';

const dir = mkdtempSync(join(tmpdir(), 'stagecoach-encoding-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// generated, with a truth known here: 40 rows of names with letters beyond ASCII
const rows = Array.from({ length: 40 }, (_, i) => `${1000 + i};Zoë ${i};Ærø`);
const text = `nr;naam;plaats\r\n${rows.join('\r\n')}\r\n`;
const file = (name: string, bytes: Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const le = file('le.csv', Buffer.from(text, 'utf16le'));
const leBom = file('le-bom.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
const be = file('be.csv', Buffer.from(text, 'utf16le').swap16());

describe('UTF-16 told apart from what is declared', () => {
  it('refuses UTF-16 declared utf-8 or windows-1252, naming the file and what it looks like', async () => {
    await expect(detectEncoding(le, 'exports/le.csv', 'utf-8')).rejects.toThrow(
      `exports/le.csv looks like UTF-16LE, declared utf-8: a NUL byte is every other byte of its first ${Buffer.byteLength(text, 'utf16le').toLocaleString('en-US')} bytes; declare encoding: utf-16le (or auto)`,
    );
    await expect(detectEncoding(leBom, 'le-bom.csv', 'windows-1252')).rejects.toThrow(
      'le-bom.csv looks like UTF-16LE, declared windows-1252: it starts with a UTF-16LE byte-order mark (FF FE); declare encoding: utf-16le (or auto)',
    );
    await expect(detectEncoding(be, 'be.csv', 'utf-8-bom')).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/^be\.csv looks like UTF-16BE, declared utf-8-bom: a NUL byte is every other byte/),
    });
  });

  it('reads UTF-16 without a byte-order mark under auto, every row and line accounted for', async () => {
    expect((await detectEncoding(le, 'le.csv', 'auto')).name).toBe('utf-16le');
    expect((await detectEncoding(be, 'be.csv', 'auto')).name).toBe('utf-16be');
    for (const path of [le, be]) {
      const tally = newTally('s', path, 'csv');
      const read = [];
      for await (const r of readCsvFile({
        source: 's',
        path,
        file: path,
        encoding: 'auto',
        csv: { delimiter: ';', quote: '"', header: true },
        tally,
        hashRows: false,
      }))
        read.push('values' in r ? Object.values(r.values).join(';') : r.message);
      expect(read).toEqual(rows);
      expect(tallyDisagreement(tally)).toBeUndefined();
      expect(tally).toMatchObject({ physicalLines: 41, headerLines: 1, rowsRead: 40, linesInRows: 40 });
    }
  });

  it('takes no UTF-8 text, binary data or short head for UTF-16', () => {
    expect(utf16Pattern(Buffer.from(text))).toBeUndefined();
    expect(
      utf16Pattern(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 1, 0])),
    ).toBeUndefined();
    expect(utf16Pattern(Buffer.from('nr;n', 'utf16le'))).toBeUndefined();
    expect(resolveEncoding('utf-8', Buffer.from(text)).name).toBe('utf-8');
  });
});
