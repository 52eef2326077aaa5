/**
 * The read limits (src/pipeline/read-limits.ts) are configurable: past each one the read stops
 * with the file, the row and the limit named (issue 41). Here the JSON ones, set low through
 * their environment variables; the YAML and layout ones have their own tests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textChunks } from '../../src/pipeline/source/decoded-text.js';
import { jsonArrayBatches, jsonLinesBatches } from '../../src/pipeline/source/json/stream.js';
import { readLimits, readLimitsSchema } from '../../src/pipeline/read-limits.js';

afterEach(() => {
  for (const k of Object.keys(readLimitsSchema.shape)) delete process.env[k];
});

async function messages(core: typeof jsonArrayBatches, text: string): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of core(textChunks(text), { source: 's', file: 'f', hashRows: false }))
    for (const r of batch) out.push('code' in r ? r.message : `row ${r.provenance.line}`);
  return out;
}

describe('read limits', () => {
  it('has a documented default for every limit', () => {
    expect(readLimits({})).toEqual({
      STAGECOACH_YAML_MAX_ALIASES: 100,
      STAGECOACH_LAYOUT_MAX_FIELD: 65_536,
      STAGECOACH_JSON_MAX_LINE_CHARS: 16_777_216,
      STAGECOACH_JSON_MAX_DEPTH: 100,
    });
  });

  it('stops a JSON element past STAGECOACH_JSON_MAX_DEPTH at its line, naming the limit', async () => {
    process.env.STAGECOACH_JSON_MAX_DEPTH = '3';
    expect(await messages(jsonArrayBatches, '[\n{"a":{"b":{"c":1}}},\n{"a":{"b":{"c":{"d":1}}}}\n]\n')).toEqual([
      'row 2',
      'f:3: the element is nested deeper than 3 levels (STAGECOACH_JSON_MAX_DEPTH), expected a flat record',
    ]);
  });

  it('stops a JSON Lines line past STAGECOACH_JSON_MAX_LINE_CHARS at its line, naming the limit, and reads on', async () => {
    process.env.STAGECOACH_JSON_MAX_LINE_CHARS = '1024';
    expect(await messages(jsonLinesBatches, `{"a":"${'x'.repeat(2000)}"}\n{"a":"b"}\n`)).toEqual([
      'f:1: the line is longer than 1024 characters (STAGECOACH_JSON_MAX_LINE_CHARS), expected one JSON object a line',
      'row 2',
    ]);
  });
});
