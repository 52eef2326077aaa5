/**
 * Duplicated JSON keys (issue 41): `{"id":"2","id":"3"}` and its class — a key repeated at any
 * depth, in an object inside an array, with escapes or colons in the strings around it — are
 * refused at the element's line with the key's path named, in a JSON array and in JSON Lines.
 * Keys repeated in different objects, and colons inside values, are no duplicates.
 */
import { describe, expect, it } from 'vitest';
import { textChunks } from '../../src/pipeline/source/decoded-text.js';
import { duplicatedKey, duplicateKeyIn } from '../../src/pipeline/source/json/duplicate-keys.js';
import { jsonArrayBatches, jsonLinesBatches } from '../../src/pipeline/source/json/stream.js';
import { newTally } from '../../src/pipeline/source/tally.js';

async function read(core: typeof jsonArrayBatches, text: string): Promise<string[]> {
  const tally = newTally('s', 'f', 'json');
  const out: string[] = [];
  for await (const batch of core(textChunks(text), { source: 's', file: 'f', hashRows: false, tally }))
    for (const r of batch) out.push('code' in r ? r.message : `row ${r.provenance.line}`);
  return out;
}

const CASES: Array<[string, string, string]> = [
  ['the key column', '{"id":"2","id":"3"}', 'id'],
  ['a key apart from the key column', '{"id":"2","naam":"a","naam":"b"}', 'naam'],
  ['a nested key', '{"id":"2","adres":{"straat":"a","straat":"b"}}', 'adres.straat'],
  ['a key in an object inside an array', '{"id":"2","tel":[{"nr":"1"},{"nr":"2","nr":"3"}]}', 'tel[1].nr'],
  ['the same key with colons and escapes around it', '{"t":"12:30","id":"a\\"b:","id":"x"}', 'id'],
  ['two keys that differ only as written', '{"id":"2","\\u0069d":"3"}', 'id'],
  ['a colon written as an escape elsewhere', '{"x":"\\u003a","id":1,"id":2}', 'id'],
];

describe('duplicated JSON keys', () => {
  it.each(CASES)('JSON Lines: refuses %s at its line, naming the key', async (_, obj, path) => {
    const out = await read(jsonLinesBatches, `{"id":"1"}\n${obj}\n{"id":"4"}\n`);
    expect(out).toEqual([
      'row 1',
      `f:2: key ${JSON.stringify(path)} appears more than once in one object, expected each key once (which value is meant?)`,
      'row 3',
    ]);
  });

  it.each(CASES)('JSON array: refuses %s at its line, naming the key', async (_, obj, path) => {
    const out = await read(jsonArrayBatches, `[\n{"id":"1"},\n${obj},\n{"id":"4"}\n]\n`);
    expect(out).toEqual([
      'row 2',
      `f:3: key ${JSON.stringify(path)} appears more than once in one object, expected each key once (which value is meant?)`,
      'row 4',
    ]);
  });

  it('reads keys repeated in different objects, and colons inside values, as they are', async () => {
    const line = '{"id":"1","a":{"id":"x:y"},"b":[{"id":1},{"id":2}],"url":"http://x:80/"}';
    expect(await read(jsonLinesBatches, `${line}\n`)).toEqual(['row 1']);
    expect(await read(jsonArrayBatches, `[${line}]`)).toEqual(['row 1']);
    expect(duplicatedKey(line, JSON.parse(line))).toBeUndefined();
    expect(duplicateKeyIn(line)).toBeUndefined();
  });
});
