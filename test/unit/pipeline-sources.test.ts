import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCsvFile, type CsvRange, type CsvReadOutcome } from '../../src/pipeline/source/csv/index.js';
import { jsonArrayBatches, readJsonArrayFile, readJsonLinesFile } from '../../src/pipeline/source/json/stream.js';
import { textChunks } from '../../src/pipeline/source/decoded-text.js';
import { scanCsvKeys } from '../../src/pipeline/source/csv/index.js';
import { detectEncoding, repairWindows1252 } from '../../src/pipeline/source/encoding.js';
import type { SourceEncoding } from '../../src/pipeline/definition/schema.js';
import type { SourceRow, SourceRowError } from '../../src/pipeline/types.js';

const CASES = join(import.meta.dirname, '..', 'cases', 'sources');
/** A row's hash: the first 128 bits of its sha256. */
const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32);
const fieldsHash = (...fields: string[]) => sha(fields.join('\u001f'));

async function all<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

function csv(name: string, encoding: SourceEncoding, delimiter = ';') {
  return all(readCsvFile({ source: 's', path: join(CASES, name), file: name, encoding, csv: { delimiter, quote: '"', header: true } }));
}

describe('CSV source', () => {
  const expected = (file: string, first: number, second: number) => [
    {
      source: 's',
      values: { nr: '1', naam: 'Zoë', plaats: 'Enschede' },
      provenance: { file, line: 2, byteOffset: first, hash: fieldsHash('1', 'Zoë', 'Enschede') },
    },
    {
      source: 's',
      values: { nr: '2', naam: 'Renée € Café', plaats: 'Liège' },
      provenance: { file, line: 3, byteOffset: second, hash: fieldsHash('2', 'Renée € Café', 'Liège') },
    },
  ];

  it('reads UTF-8 with exact line, byte offset and hash', async () => {
    expect(await csv('persons-utf8.csv', 'utf-8')).toEqual(expected('persons-utf8.csv', 16, 33));
  });

  it('skips a UTF-8 BOM and counts its bytes in the offsets', async () => {
    expect(await csv('persons-utf8-bom.csv', 'utf-8-bom')).toEqual(expected('persons-utf8-bom.csv', 19, 36));
    expect(await csv('persons-utf8-bom.csv', 'auto')).toEqual(expected('persons-utf8-bom.csv', 19, 36));
  });

  it('reads windows-1252 including € (0x80) and ë, one byte a character', async () => {
    expect(await csv('persons-windows-1252.csv', 'windows-1252')).toEqual(expected('persons-windows-1252.csv', 16, 32));
  });

  it('reads UTF-16LE and UTF-16BE with a BOM, declared or detected, offsets in file bytes', async () => {
    expect(await csv('persons-utf16le-bom.csv', 'utf-16le')).toEqual(expected('persons-utf16le-bom.csv', 34, 66));
    expect(await csv('persons-utf16le-bom.csv', 'auto')).toEqual(expected('persons-utf16le-bom.csv', 34, 66));
    expect(await csv('persons-utf16be-bom.csv', 'utf-16be')).toEqual(expected('persons-utf16be-bom.csv', 34, 66));
    expect(await csv('persons-utf16be-bom.csv', 'auto')).toEqual(expected('persons-utf16be-bom.csv', 34, 66));
  });

  it('handles CRLF, a quoted field over two lines, doubled quotes, blank lines, a short row and a last line without line end', async () => {
    const text = readFileSync(join(CASES, 'tricky-crlf.csv'));
    const at = (s: string) => text.indexOf(s);
    const rows = await csv('tricky-crlf.csv', 'utf-8');
    expect(rows.map((r) => [r.provenance.line, r.provenance.byteOffset])).toEqual([
      [2, at('1;Jan')],
      [5, at('2;Piet')],
      [6, at('3;kort')],
      [9, at('4;Kees')],
      [10, at('5;Ans')],
    ]);
    expect((rows[0] as SourceRow).values).toEqual({ nr: '1', naam: 'Jan', opmerking: 'eerste regel\r\ntweede regel' });
    expect((rows[1] as SourceRow).values).toEqual({ nr: '2', naam: 'Piet', opmerking: 'zegt "hallo"' });
    expect(rows[2]).toEqual({
      source: 's',
      provenance: { file: 'tricky-crlf.csv', line: 6, byteOffset: at('3;kort'), hash: fieldsHash('3', 'kort') },
      code: 'SOURCE_ROW_INVALID',
      message: 'tricky-crlf.csv:6: wrong number of columns, expected 3 (as the header), got 2',
      raw: '3;kort',
    } satisfies SourceRowError);
    expect((rows[3] as SourceRow).values).toEqual({ nr: '4', naam: 'Kees', opmerking: 'a;b' });
    expect((rows[4] as SourceRow).values).toEqual({ nr: '5', naam: 'Ans', opmerking: 'laatste zonder regeleinde' });
  });

  it('numbers the lines after a multi-line LF field correctly', async () => {
    const rows = await csv('multiline-lf.csv', 'utf-8', ',');
    expect(rows.map((r) => [r.provenance.line, r.provenance.byteOffset, (r as SourceRow).values.nr])).toEqual([
      [2, 8, '1'],
      [5, 29, '2'],
    ]);
  });

  it('numbers lines by the line breaks in the file: CRLF lines in a file of LF lines, CRLF inside quotes, an unclosed quote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-lines-'));
    const read = async (body: string) => {
      writeFileSync(join(dir, 'f.csv'), body);
      const rows = await all(
        readCsvFile({
          source: 's',
          path: join(dir, 'f.csv'),
          file: 'f.csv',
          encoding: 'utf-8',
          csv: { delimiter: ';', quote: '"', header: true },
        }),
      );
      return rows.map((r) => [r.provenance.line, 'message' in r ? r.message : (r as SourceRow).values.a]);
    };
    // The first line decides the record delimiter (LF): csv-parse counted each CRLF line as two.
    expect(await read('a;b\n1;2\r\n3;4\r\n5;6\n')).toEqual([
      [2, '1'],
      [3, '3'],
      [4, '5'],
    ]);
    expect(await read('a;b\r\n"x\r\ny";1\r\n"p\r\nq\r\nr";2\r\n3;3\r\n')).toEqual([
      [2, 'x\r\ny'],
      [4, 'p\r\nq\r\nr'],
      [7, '3'],
    ]);
    expect(await read('a;b\r\n1;x\r\n"open;\r\n2;x\r\n3;x\r\n')).toEqual([
      [2, '1'],
      [3, 'f.csv:3–5: a quote opened on line 3 is not closed before the file ends; 2 following rows were read as part of this one'],
    ]);
  });

  it('keeps header names exactly, whatever characters they hold (they are written into the row builder)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-names-'));
    const names = ['nr', "it's", '"quoted"', 'back\\slash', '}; throw 1; ({', '${x}', 'constructor'];
    const header = names.map((n) => (/[";]/.test(n) ? `"${n.replace(/"/g, '""')}"` : n)).join(';');
    writeFileSync(join(dir, 'odd.csv'), `${header}\n1;a;b;c;d;e;f\n`);
    const rows = await all(
      readCsvFile({
        source: 's',
        path: join(dir, 'odd.csv'),
        file: 'odd.csv',
        encoding: 'utf-8',
        csv: { delimiter: ';', quote: '"', header: true },
      }),
    );
    const values = (rows[0] as SourceRow).values;
    expect(Object.keys(values)).toEqual(names);
    expect(Object.values(values)).toEqual(['1', 'a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('refuses a header that lacks a column the mapping reads, naming file, line and the columns it has', async () => {
    const gen = readCsvFile({
      source: 's',
      path: join(CASES, 'persons-utf8.csv'),
      file: 'persons-utf8.csv',
      encoding: 'utf-8',
      csv: { delimiter: ';', quote: '"', header: true },
      requiredColumns: new Set(['nr', 'achternaam']),
    });
    await expect(all(gen)).rejects.toThrow(
      'persons-utf8.csv:1: the mapping reads column "achternaam" that the header lacks; expected one of "nr", "naam", "plaats"',
    );
  });
});

describe('CSV plain-line fast path', () => {
  it('reads exactly what csv-parse alone reads: rows, errors, lines, offsets, wherever the reads end', async () => {
    // Seeded random files: runs of well-formed rows (the fast path) around pieces that are not
    // plain (quotes, lone CRs, bare LFs in CRLF files, bytes that are not UTF-8, NULs, BOMs), with blank and
    // whitespace lines, short and long rows, a BOM, a last line without a line end. Each is read
    // whole and as a range, with the fast path in reads of 1, 3 and 64 bytes and the default, and
    // compared with csv-parse reading all of it.
    let seed = 11;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const dir = mkdtempSync(join(tmpdir(), 'plain-lines-'));
    const differing: string[] = [];
    let plainRead = 0;
    let referencePlain = 0;
    for (let f = 0; f < 30; f++) {
      const d = pick([';', ',', '\t']);
      // Old-Mac CR lines (and CR CR LF) are csv-parse's throughout: no line of them is plain.
      const eol = pick(['\n', '\r\n', '\n', '\r\n', '\r', '\r\r\n']);
      const encoding = pick<SourceEncoding>(['utf-8', 'windows-1252', 'auto']);
      const header = random() < 0.8;
      // The last three are text defects a row is refused for: a NUL, a BOM inside a line, a byte that is not UTF-8.
      const pieces: (string | Buffer)[] = [
        'a',
        'é',
        'Zoë',
        d,
        d + d,
        '"',
        '""',
        '"x"',
        `"q${d}\n"`,
        '\n',
        '\r\n',
        '\r',
        '\n\n',
        `${eol}${eol}`,
        ' ',
        '  ',
        '\u0080',
        '\t',
        '\u0000',
        '\ufeff',
        Buffer.from([0xff]),
      ];
      const parts: Buffer[] = [];
      const lineStarts: { at: number; line: number }[] = [];
      let at = 0;
      let line = 1;
      const add = (text: string | Buffer, isRow = false) => {
        const b = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
        if (isRow) lineStarts.push({ at, line });
        parts.push(b);
        at += b.length;
      };
      if (random() < 0.2) add(Buffer.from([0xef, 0xbb, 0xbf]));
      if (header) add(`k${d}naam${d}plaats${eol}`), line++;
      const plainRows = (n: number) => {
        for (let r = 0; r < n; r++) {
          const kind = random();
          if (kind < 0.05)
            add(eol), line++; // blank
          else if (kind < 0.08)
            add(`   ${eol}`), line++; // whitespace only
          else if (kind < 0.11)
            add(`${r}${d}kort${eol}`, true), line++; // short row
          else if (kind < 0.14)
            add(`${r}${d}a${d}b${d}c${eol}`, true), line++; // long row
          else add(`${1000 + r}${d}naam ${pick(['Zoë', 'Müller', 'x', ''])}${d}plaats${eol}`, true), line++;
        }
      };
      plainRows(Math.floor(random() * 60));
      for (let episode = 0, episodes = Math.floor(random() * 4); episode < episodes; episode++) {
        for (let p = 0, n = 1 + Math.floor(random() * 30); p < n; p++) add(pick(pieces));
        add(eol);
        plainRows(Math.floor(random() * 40));
      }
      if (random() < 0.3) add(`9999${d}laatste${d}zonder regeleinde`);
      const path = join(dir, `f${f}.csv`);
      writeFileSync(path, Buffer.concat(parts));
      const csvOptions = header
        ? { delimiter: d, quote: '"', header: true }
        : { delimiter: d, quote: '"', header: false, columns: ['k', 'naam', 'plaats'] };
      const read = async (plainLines: boolean, readBytes: number | undefined, range: CsvRange | undefined, hashRows = true) => {
        const outcome: CsvReadOutcome = { endLine: 0, endByte: 0, endedAtRecord: true };
        let result: unknown;
        try {
          result = await all(
            readCsvFile({
              source: 's',
              path,
              file: 'f.csv',
              encoding,
              csv: csvOptions,
              plainLines,
              outcome,
              hashRows,
              ...(readBytes ? { readBytes } : {}),
              ...(range ? { range } : {}),
            }),
          );
        } catch (err) {
          result = (err as Error).message;
        }
        const { plainRecords = 0, ...rest } = outcome;
        return { text: JSON.stringify({ result, outcome: rest }), plainRecords };
      };
      const middle = lineStarts.length > 2 ? lineStarts[Math.floor(lineStarts.length / 2)]! : undefined;
      const ranges: (CsvRange | undefined)[] = [undefined];
      if (middle && (eol === '\n' || eol === '\r\n'))
        ranges.push({
          start: middle.at,
          line: middle.line,
          columns: ['k', 'naam', 'plaats'],
          recordDelimiter: eol === '\n' ? '\n' : '\r\n',
        });
      for (const range of ranges) {
        const reference = await read(false, undefined, range);
        referencePlain += reference.plainRecords;
        for (const readBytes of [undefined, 1, 3, 64]) {
          const got = await read(true, readBytes, range);
          plainRead += got.plainRecords;
          if (got.text !== reference.text)
            differing.push(
              `f${f} (${JSON.stringify(d)}, ${JSON.stringify(eol)}, ${encoding}, header ${header}), ${range ? `range from ${range.start}` : 'whole'}, reads of ${readBytes ?? 'default'}:\n${got.text}\n${reference.text}`,
            );
        }
        // Without row hashes (plan), a plain line's defects are looked for in its text, not in its joined fields.
        const [unhashed, unhashedReference] = await Promise.all([
          read(true, undefined, range, false),
          read(false, undefined, range, false),
        ]);
        if (unhashed.text !== unhashedReference.text)
          differing.push(
            `f${f} without row hashes, ${range ? `range from ${range.start}` : 'whole'}:\n${unhashed.text}\n${unhashedReference.text}`,
          );
      }
    }
    expect(differing).toEqual([]);
    expect(referencePlain).toBe(0);
    expect(plainRead).toBeGreaterThan(5_000);
  });

  it('reads plain lines again after a quoted field: the sample export, with one quoted field over two lines', async () => {
    const path = join(import.meta.dirname, '..', '..', 'samples', 'crm', 'klanten.csv');
    const read = async (plainLines: boolean) => {
      const outcome: CsvReadOutcome = { endLine: 0, endByte: 0, endedAtRecord: true };
      const rows = await all(
        readCsvFile({
          source: 's',
          path,
          file: 'klanten.csv',
          encoding: 'windows-1252',
          csv: { delimiter: ';', quote: '"', header: true },
          plainLines,
          outcome,
        }),
      );
      return { rows, plainRecords: outcome.plainRecords };
    };
    const fast = await read(true);
    const reference = await read(false);
    expect(fast.rows).toEqual(reference.rows);
    const quoted = fast.rows.find((r) => 'values' in r && String(r.values['straat']).includes('\n'));
    expect(quoted?.provenance.line).toBe(69);
    // Every record but the quoted one and the few csv-parse read before it ended a record.
    expect(fast.plainRecords).toBeGreaterThan(fast.rows.length - 5);
  });
});

describe('windows-1252 repair', () => {
  it('maps the bytes 0x80–0x9F read as latin1 to their windows-1252 characters', () => {
    expect(repairWindows1252('\u0080 \u0092t \u0099 é')).toBe('€ ’t ™ é');
    expect(repairWindows1252('plain')).toBe('plain');
  });

  it('detects encodings from the BOM, and UTF-8 without one', async () => {
    expect((await detectEncoding(join(CASES, 'persons-utf16be-bom.csv'), 'x', 'auto')).name).toBe('utf-16be');
    expect((await detectEncoding(join(CASES, 'persons-utf8.csv'), 'x', 'auto')).name).toBe('utf-8');
  });
});

describe('CSV key scan', () => {
  it('finds the same key values as the full reader, across quotes, line breaks and blank lines', async () => {
    const keys: string[] = [];
    const enc = await detectEncoding(join(CASES, 'tricky-crlf.csv'), 'x', 'utf-8');
    await scanCsvKeys(
      { path: join(CASES, 'tricky-crlf.csv'), file: 'tricky-crlf.csv', enc, delimiter: ';', quote: '"', header: true, column: 'opmerking' },
      (k) => keys.push(k),
    );
    // the short row has no third column: the scan reads its record but finds no value there
    expect(keys).toEqual(['eerste regel\r\ntweede regel', 'zegt "hallo"', 'a;b', 'laatste zonder regeleinde']);
    const names: string[] = [];
    const enc1252 = await detectEncoding(join(CASES, 'persons-windows-1252.csv'), 'x', 'windows-1252');
    await scanCsvKeys(
      {
        path: join(CASES, 'persons-windows-1252.csv'),
        file: 'p.csv',
        enc: enc1252,
        delimiter: ';',
        quote: '"',
        header: true,
        column: 'naam',
      },
      (k) => names.push(k),
    );
    expect(names).toEqual(['Zoë', 'Renée € Café']);
  });

  it('reads the keys of plain lines exactly as csv-parse reads them, wherever the chunks end', async () => {
    // Seeded random files built from the pieces that change a CSV reader's state, each scanned for
    // its first, second and last column with and without the plain-line path, in chunks of 1 to 64 bytes
    // and whole, so that every piece sometimes straddles a chunk's end.
    const pieces = ['a', 'bc', 'é', ';', ';;', '"', '""', '"x"', '"q;\n"', '\n', '\r\n', '\r', '\n\n', ' ', '1001'];
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const dir = mkdtempSync(join(tmpdir(), 'scan-keys-'));
    const enc = await detectEncoding(join(CASES, 'persons-utf8.csv'), 'x', 'utf-8');
    const differing: string[] = [];
    let keysSeen = 0;
    for (let f = 0; f < 40; f++) {
      let body = 'k;naam;plaats\n';
      for (let p = 0, n = 20 + Math.floor(random() * 200); p < n; p++) body += pieces[Math.floor(random() * pieces.length)];
      // Mostly well-formed rows too, so the fast path is taken often.
      for (let r = 0; r < 5; r++) body += `${1000 + r};naam ${r};plaats\n`;
      const path = join(dir, `f${f}.csv`);
      writeFileSync(path, body);
      for (const column of ['k', 'naam', 'plaats']) {
        const scan = async (everyByte: boolean, chunkBytes?: number) => {
          const keys: string[] = [];
          await scanCsvKeys(
            {
              path,
              file: 'f.csv',
              enc,
              delimiter: ';',
              quote: '"',
              header: true,
              column,
              plainLines: !everyByte,
              ...(chunkBytes ? { chunkBytes } : {}),
            },
            (k) => keys.push(k),
          );
          return JSON.stringify(keys);
        };
        const reference = await scan(true);
        keysSeen += (JSON.parse(reference) as string[]).length;
        for (const chunkBytes of [undefined, 1, 2, 3, 7, 64]) {
          if ((await scan(false, chunkBytes)) !== reference)
            differing.push(`${JSON.stringify(body)} column ${column}, chunks of ${chunkBytes ?? 'default'}`);
        }
      }
    }
    expect(differing).toEqual([]);
    expect(keysSeen).toBeGreaterThan(1000);
  });
});

describe('JSON sources', () => {
  it('reads a top-level array with the line and byte offset of each opening brace', async () => {
    const text = readFileSync(join(CASES, 'array-top.json'), 'utf8');
    const rows = await all(
      readJsonArrayFile({ source: 'j', path: join(CASES, 'array-top.json'), file: 'array-top.json', encoding: 'auto' }),
    );
    const bytes = Buffer.from(text);
    expect(rows).toEqual([
      {
        source: 'j',
        values: { nr: '1', naam: 'Zoë' },
        provenance: { file: 'array-top.json', line: 2, byteOffset: bytes.indexOf('{"nr": "1"'), hash: sha('{"nr":"1","naam":"Zoë"}') },
      },
      {
        source: 'j',
        values: { nr: '2', naam: 'Piet' },
        provenance: { file: 'array-top.json', line: 3, byteOffset: bytes.indexOf('{"nr": "2"'), hash: sha('{"nr":"2","naam":"Piet"}') },
      },
      {
        source: 'j',
        values: { nr: '3', naam: 'Ans' },
        provenance: { file: 'array-top.json', line: 4, byteOffset: bytes.indexOf('{"nr": "3"'), hash: sha('{"nr":"3","naam":"Ans"}') },
      },
    ]);
  });

  it('reads the array at a dotted path and ignores arrays elsewhere', async () => {
    const rows = (await all(
      readJsonArrayFile({
        source: 'j',
        path: join(CASES, 'array-at-path.json'),
        file: 'a.json',
        encoding: 'utf-8',
        arrayPath: 'export.bedrijven',
      }),
    )) as SourceRow[];
    expect(rows.map((r) => [r.provenance.line, r.values])).toEqual([
      [2, { kvk: '12345678', adres: { plaats: 'Zwolle' } }],
      [3, { kvk: '87654321', adres: { plaats: 'Utrecht' } }],
    ]);
  });

  it('says so when the path holds no array', async () => {
    const rows = await all(
      readJsonArrayFile({
        source: 'j',
        path: join(CASES, 'array-at-path.json'),
        file: 'a.json',
        encoding: 'utf-8',
        arrayPath: 'export.nergens',
      }),
    );
    expect(rows).toEqual([
      {
        source: 'j',
        provenance: { file: 'a.json', line: 1, byteOffset: 0, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: 'a.json:1: no array at export.nergens, expected an object holding an array at export.nergens',
      },
    ]);
  });

  it('yields the elements before the file is cut off, then one read failure where it stopped', async () => {
    const rows = await all(readJsonArrayFile({ source: 'j', path: join(CASES, 'truncated.json'), file: 't.json', encoding: 'utf-8' }));
    expect(rows).toHaveLength(2);
    expect((rows[0] as SourceRow).values).toEqual({ nr: '1' });
    expect(rows[1]).toMatchObject({ code: 'SOURCE_READ_FAILED', provenance: { line: 1 } });
    expect((rows[1] as SourceRowError).message).toBe(
      't.json:1: the file ends inside element 2 of the array, which starts on line 1, expected the element and the array to close; 1 complete element read, the export looks cut off',
    );
  });

  it('yields the elements before a syntax error, then one error where reading stopped', async () => {
    const rows = await all(
      jsonArrayBatches(textChunks('[{"nr": "1"},\n{"nr": "2" "naam": "x"}]'), { source: 'j', file: 's.json', hashRows: false }),
    );
    const flat = rows.flat();
    expect(flat).toHaveLength(2);
    expect((flat[0] as SourceRow).values).toEqual({ nr: '1' });
    expect(flat[1]).toMatchObject({ code: 'SOURCE_READ_FAILED', provenance: { line: 2 } });
    expect((flat[1] as SourceRowError).message).toMatch(/^s\.json:2: the rest of the file cannot be read: /);
  });

  it('reads JSON Lines: blank lines skipped, a broken line and a non-object are row errors, the file goes on', async () => {
    const text = readFileSync(join(CASES, 'lines.jsonl'));
    const rows = await all(readJsonLinesFile({ source: 'l', path: join(CASES, 'lines.jsonl'), file: 'lines.jsonl', encoding: 'auto' }));
    expect(rows.map((r) => [r.provenance.line, r.provenance.byteOffset, 'code' in r ? r.code : (r as SourceRow).values.nr])).toEqual([
      [1, 0, '1'],
      [3, text.indexOf('{"nr": "2"'), 'SOURCE_ROW_INVALID'],
      [4, text.indexOf('[1, 2]'), 'SOURCE_ROW_INVALID'],
      [5, text.indexOf('{"nr": "3"'), '3'],
    ]);
    expect(rows[0]!.provenance.hash).toBe(sha('{"nr": "1", "naam": "Zoë"}'));
    expect((rows[2] as SourceRowError).message).toBe('lines.jsonl:4: expected a JSON object on the line, got [1, 2]');
    expect((rows[1] as SourceRowError).message).toMatch(/^lines\.jsonl:3: not a JSON object: /);
  });
});
