import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { readRowAt } from '../../src/reconcile/source-rows.js';

const dir = mkdtempSync(join(tmpdir(), 'stagecoach-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('re-reading a legacy row by its byte offset', () => {
  it('reads one CSV record in the header columns, quoted newlines and legacy encodings included', async () => {
    const text = 'klantnr;naam;notitie\r\n1;Jansen;"twee\r\nregels"\r\n2;Müller €;"zegt ""ja"""\r\n';
    const file = join(dir, 'persons.csv');
    const bytes = iconv.encode(text, 'windows-1252');
    writeFileSync(file, bytes);
    const second = iconv.encode('klantnr;naam;notitie\r\n1;Jansen;"twee\r\nregels"\r\n', 'windows-1252').length;
    const format = { format: 'csv', encoding: 'windows-1252', csv: { delimiter: ';' } } as const;
    expect(await readRowAt(file, 22, format)).toEqual({
      columns: ['klantnr', 'naam', 'notitie'],
      values: { klantnr: '1', naam: 'Jansen', notitie: 'twee\r\nregels' },
      width: 3,
    });
    expect(await readRowAt(file, second, format)).toEqual({
      columns: ['klantnr', 'naam', 'notitie'],
      values: { klantnr: '2', naam: 'Müller €', notitie: 'zegt "ja"' },
      width: 3,
    });
  });

  it('rejects, without ending the process, when the file is gone since (a report after the export moved)', async () => {
    const gone = join(dir, 'moved-away.json');
    await expect(readRowAt(gone, 0, { format: 'json', encoding: 'utf-8' })).rejects.toThrow(/ENOENT/);
    await expect(readRowAt(gone, 0, { format: 'csv', encoding: 'windows-1252', csv: { delimiter: ';' } })).rejects.toThrow(/ENOENT/);
  });

  it('reads one object of a JSON array, braces inside strings included', async () => {
    const text = '{"export":{"bedrijven":[\n  {"kvk":"1","naam":"A } B","adres":{"plaats":"Delft"}},\n  {"kvk":"2","naam":"C"}\n]}}\n';
    const file = join(dir, 'orgs.json');
    writeFileSync(file, text);
    const offset = Buffer.byteLength(text.slice(0, text.indexOf('{"kvk":"2"')));
    expect(await readRowAt(file, text.indexOf('{"kvk":"1"'), { format: 'json', encoding: 'auto' })).toEqual({
      columns: ['kvk', 'naam', 'adres'],
      values: { kvk: '1', naam: 'A } B', adres: { plaats: 'Delft' } },
    });
    expect((await readRowAt(file, offset, { format: 'json', encoding: 'auto' })).values).toEqual({ kvk: '2', naam: 'C' });
  });

  it('reads one line of a JSON Lines file after a UTF-8 byte-order mark', async () => {
    const file = join(dir, 'rows.jsonl');
    const body = '{"a":1}\n{"a":"é"}\n';
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
    expect((await readRowAt(file, 3 + Buffer.byteLength('{"a":1}\n'), { format: 'jsonl', encoding: 'auto' })).values).toEqual({ a: 'é' });
  });
});
