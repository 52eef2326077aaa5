/**
 * JSON accounting: every array item (and JSON Lines line) counted apart from the parser, and an
 * export cut off or without rows is a read failure with its exact message and tally.
 */
import { describe, expect, it } from 'vitest';
import { jsonArrayBatches, jsonLinesBatches } from '../../src/pipeline/source/json/stream.js';
import { textChunks, UTF8 } from '../../src/pipeline/source/decoded-text.js';
import { JsonArrayCore, JsonLinesCore } from '../../src/pipeline/source/json/core.js';
import { newTally, tallyDisagreement, type SourceTally } from '../../src/pipeline/source/tally.js';
import type { SourceRow, SourceRowError } from '../../src/pipeline/types.js';

type Core = typeof jsonArrayBatches;

async function read(core: Core, file: string, texts: string[], arrayPath?: string) {
  const tally = newTally('s', file, core === jsonArrayBatches ? 'json' : 'jsonl');
  const rows: (SourceRow | SourceRowError)[] = [];
  for await (const batch of core(textChunks(...texts), { source: 's', file, hashRows: false, tally, ...(arrayPath ? { arrayPath } : {}) }))
    rows.push(...batch);
  const shown = rows.map((r) => ('code' in r ? `${r.code} ${r.message}` : `row ${r.provenance.line} ${JSON.stringify(r.values)}`));
  return { shown, tally };
}

const counts = (t: SourceTally) => ({
  physicalLines: t.physicalLines,
  blankLines: t.blankLines,
  items: t.items,
  rowsRead: t.rowsRead,
  rowErrors: t.rowErrors,
  truncated: t.truncated,
});

const ARRAY = '[\n  {"nr": "1"},\n  {"nr": "2"},\n  {"nr": "3"}\n]\n';

describe('JSON array accounting', () => {
  it('a whole array: items counted by the scanner agree with the rows, in any pieces', async () => {
    for (const cut of [0, 1, 7, 17, ARRAY.length - 1]) {
      const { shown, tally } = await read(jsonArrayBatches, 'a.json', [ARRAY.slice(0, cut), ARRAY.slice(cut)]);
      expect(shown).toEqual(['row 2 {"nr":"1"}', 'row 3 {"nr":"2"}', 'row 4 {"nr":"3"}']);
      expect(counts(tally)).toEqual({ physicalLines: 5, blankLines: 0, items: 3, rowsRead: 3, rowErrors: 0, truncated: undefined });
      expect(tallyDisagreement(tally)).toBeUndefined();
    }
  });

  it('cut inside an element: the elements before it, then a read failure naming file:line and the element', async () => {
    const { shown, tally } = await read(jsonArrayBatches, 'a.json', [ARRAY.slice(0, ARRAY.indexOf('"2"'))]);
    expect(shown).toEqual([
      'row 2 {"nr":"1"}',
      'SOURCE_READ_FAILED a.json:3: the file ends inside element 2 of the array, which starts on line 3, expected the element and the array to close; 1 complete element read, the export looks cut off',
    ]);
    expect(counts(tally)).toEqual({
      physicalLines: 3,
      blankLines: 0,
      items: 1,
      rowsRead: 1,
      rowErrors: 0,
      truncated: 'the file ends inside element 2 of the array (it starts on line 3), after 1 complete element: the export looks cut off',
    });
    expect(tallyDisagreement(tally)).toBe(
      'a.json: the file ends inside element 2 of the array (it starts on line 3), after 1 complete element: the export looks cut off',
    );
  });

  it('cut inside a string of the first element', async () => {
    const { shown, tally } = await read(jsonArrayBatches, 'a.json', ['[\n  {"nr": "1', '2']);
    expect(shown).toEqual([
      'SOURCE_READ_FAILED a.json:2: the file ends inside element 1 of the array, which starts on line 2, expected the element and the array to close; 0 complete elements read, the export looks cut off',
    ]);
    expect(counts(tally)).toMatchObject({ items: 0, rowsRead: 0 });
  });

  it('cut between elements, or before the closing bracket', async () => {
    const between = await read(jsonArrayBatches, 'a.json', [ARRAY.slice(0, ARRAY.indexOf('{"nr": "3"'))]);
    expect(between.shown).toEqual([
      'row 2 {"nr":"1"}',
      'row 3 {"nr":"2"}',
      'SOURCE_READ_FAILED a.json:4: the file ends inside the array after 2 complete elements, expected "]"; the export looks cut off',
    ]);
    expect(counts(between.tally)).toMatchObject({ items: 2, rowsRead: 2 });
    const beforeBracket = await read(jsonArrayBatches, 'a.json', [ARRAY.slice(0, ARRAY.lastIndexOf(']'))]);
    expect(beforeBracket.shown.at(-1)).toBe(
      'SOURCE_READ_FAILED a.json:5: the file ends inside the array after 3 complete elements, expected "]"; the export looks cut off',
    );
    expect(counts(beforeBracket.tally)).toMatchObject({ items: 3, rowsRead: 3 });
  });

  it('cut inside the array at json.path (100 of 200 organisations, in small)', async () => {
    const { shown, tally } = await read(
      jsonArrayBatches,
      'b.json',
      ['{"export": {"datum": "2024-01-31", "bedrijven": [{"kvk": "1"}, {"kvk": "2"}, {"kvk": "3", "naam": "Ba'],
      'export.bedrijven',
    );
    expect(shown).toEqual([
      'row 1 {"kvk":"1"}',
      'row 1 {"kvk":"2"}',
      'SOURCE_READ_FAILED b.json:1: the file ends inside element 3 of the array at export.bedrijven, which starts on line 1, expected the element and the array to close; 2 complete elements read, the export looks cut off',
    ]);
    expect(counts(tally)).toMatchObject({ items: 2, rowsRead: 2 });
  });

  it('an empty array, an empty file and a blank file are read failures (no rows)', async () => {
    const empty = await read(jsonArrayBatches, 'a.json', ['[]\n']);
    expect(empty.shown).toEqual([
      'SOURCE_READ_FAILED a.json:1: the array is empty, expected at least one record; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    expect(counts(empty.tally)).toEqual({
      physicalLines: 1,
      blankLines: 0,
      items: 0,
      rowsRead: 0,
      rowErrors: 0,
      truncated: 'the array is empty: no rows',
    });
    const atPath = await read(jsonArrayBatches, 'b.json', ['{"export": {"bedrijven": []}}'], 'export.bedrijven');
    expect(atPath.shown).toEqual([
      'SOURCE_READ_FAILED b.json:1: the array at export.bedrijven is empty, expected at least one record; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    const nothing = await read(jsonArrayBatches, 'a.json', []);
    expect(nothing.shown).toEqual([
      'SOURCE_READ_FAILED a.json:1: the file is empty, expected a JSON array; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    expect(counts(nothing.tally)).toEqual({
      physicalLines: 0,
      blankLines: 0,
      items: 0,
      rowsRead: 0,
      rowErrors: 0,
      truncated: 'the file is empty: no rows',
    });
    const blank = await read(jsonArrayBatches, 'a.json', ['  \n\n']);
    expect(blank.shown).toEqual([
      'SOURCE_READ_FAILED a.json:1: the file holds 2 blank lines and no JSON, expected a JSON array; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    expect(blank.tally.truncated).toBe('the file holds 2 blank lines and no JSON: no rows');
  });

  it('brackets, braces, commas and escaped quotes inside strings and keys do not fool the scanner, wherever the text is split', async () => {
    const text = '{"ex\\"port": 1, "lijst": [{"naam": "a],\\"{b"}, {"n\\\\": "[x\\\\"}, {"naam": "c"}]}';
    for (let cut = 0; cut <= text.length; cut++) {
      const { shown, tally } = await read(jsonArrayBatches, 'a.json', [text.slice(0, cut), text.slice(cut)], 'lijst');
      expect(shown).toHaveLength(3);
      expect(counts(tally)).toEqual({ physicalLines: 1, blankLines: 0, items: 3, rowsRead: 3, rowErrors: 0, truncated: undefined });
    }
  });

  it('a scalar element is a row error and still an item: the counts agree', async () => {
    const { shown, tally } = await read(jsonArrayBatches, 'a.json', ['[{"nr": "1"}, 7, "x"]']);
    expect(shown).toEqual([
      'row 1 {"nr":"1"}',
      'SOURCE_ROW_INVALID a.json:1: expected an object in the array, got 7',
      'SOURCE_ROW_INVALID a.json:1: expected an object in the array, got "x"',
    ]);
    expect(counts(tally)).toEqual({ physicalLines: 1, blankLines: 0, items: 3, rowsRead: 3, rowErrors: 2, truncated: undefined });
    expect(tallyDisagreement(tally)).toBeUndefined();
  });
});

describe('JSON Lines accounting', () => {
  it('physical and blank lines are counted apart and agree with the rows', async () => {
    const { shown, tally } = await read(jsonLinesBatches, 'c.jsonl', ['{"nr":"1"}\r\n\r\n{"nr":', '"2"}\r\n']);
    expect(shown).toEqual(['row 1 {"nr":"1"}', 'row 3 {"nr":"2"}']);
    expect(counts(tally)).toEqual({ physicalLines: 3, blankLines: 1, items: undefined, rowsRead: 2, rowErrors: 0, truncated: undefined });
    expect(tallyDisagreement(tally)).toBeUndefined();
  });

  it('a broken line in the middle is a row error; a broken last line without a line feed is a cut-off export', async () => {
    const { shown, tally } = await read(jsonLinesBatches, 'c.jsonl', ['{"nr":"1"}\n{"nr":\n{"nr":"2"}\n{"nr":"3","na']);
    expect(shown).toEqual([
      'row 1 {"nr":"1"}',
      'SOURCE_ROW_INVALID c.jsonl:2: not a JSON object: Unexpected end of JSON input',
      'row 3 {"nr":"2"}',
      'SOURCE_READ_FAILED c.jsonl:4: the file ends inside the JSON object on its last line, expected a complete object and a line feed; the export looks cut off',
    ]);
    expect(counts(tally)).toEqual({
      physicalLines: 4,
      blankLines: 0,
      items: undefined,
      rowsRead: 4,
      rowErrors: 2,
      truncated: 'the file ends inside the JSON object on its last line (4): the export looks cut off',
    });
    expect(tallyDisagreement(tally)).toBe('c.jsonl: the file ends inside the JSON object on its last line (4): the export looks cut off');
  });

  it('a complete last line without a line feed is fine', async () => {
    const { shown, tally } = await read(jsonLinesBatches, 'c.jsonl', ['{"nr":"1"}\n{"nr":"2"}']);
    expect(shown).toEqual(['row 1 {"nr":"1"}', 'row 2 {"nr":"2"}']);
    expect(tallyDisagreement(tally)).toBeUndefined();
  });

  it('an empty or blank file is a read failure (no rows)', async () => {
    const empty = await read(jsonLinesBatches, 'c.jsonl', ['']);
    expect(empty.shown).toEqual([
      'SOURCE_READ_FAILED c.jsonl:1: the file is empty, expected one JSON object a line; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    expect(empty.tally.truncated).toBe('the file is empty: no rows');
    const blank = await read(jsonLinesBatches, 'c.jsonl', ['\n\n']);
    expect(blank.shown).toEqual([
      'SOURCE_READ_FAILED c.jsonl:1: the file holds 2 blank lines and no object, expected one JSON object a line; an empty export is refused unless truncated files are allowed (--allow-truncated)',
    ]);
    expect(counts(blank.tally)).toMatchObject({ physicalLines: 2, blankLines: 2, rowsRead: 0 });
  });
});

describe('the JSON cores, pushed by hand', () => {
  const chunk = (text: string) => ({ text, enc: UTF8 });
  const shownOf = (items: (SourceRow | SourceRowError)[]) =>
    items.map((r) =>
      'code' in r ? `${r.code} ${r.message}` : `row ${r.provenance.line}@${r.provenance.byteOffset} ${JSON.stringify(r.values)}`,
    );

  it('an array: each push hands back the elements it completed, end() the cut-off export', () => {
    const core = new JsonArrayCore({ source: 's', file: 'a.json', hashRows: false });
    expect(shownOf(core.push(chunk('[\n  {"nr": "1"},\n  {"nr"')))).toEqual(['row 2@4 {"nr":"1"}']);
    expect(shownOf(core.push(chunk(': "é"},\n  {"nr": "3"')))).toEqual(['row 3@19 {"nr":"é"}']);
    expect(shownOf(core.end())).toEqual([
      'SOURCE_READ_FAILED a.json:4: the file ends inside element 3 of the array, which starts on line 4, expected the element and the array to close; 2 complete elements read, the export looks cut off',
    ]);
  });

  it('JSON Lines: each push hands back the lines it completed, end() the last line without a line feed', () => {
    const core = new JsonLinesCore({ source: 's', file: 'c.jsonl', hashRows: false });
    expect(shownOf(core.push(chunk('{"nr":"é"}\n{"nr":')))).toEqual(['row 1@0 {"nr":"é"}']);
    expect(shownOf(core.push(chunk('"2"}')))).toEqual([]);
    expect(shownOf(core.end())).toEqual(['row 2@12 {"nr":"2"}']);
  });
});
