/**
 * The hostile-input fuzzer's CI form (bench/fuzz-cases.ts; the bench form runs 10,000 CHECK
 * seeds: `npm run bench -- fuzz`): the first DEVELOPMENT seeds, damaged CSV, JSON, JSON Lines,
 * fixed-width, copybook, pipeline, mapping and corrections files read in-process through the
 * library's read entry. Every case must end within its bound and either read (each refused row
 * naming the file) or be refused with a stagecoach error naming the file. The undamaged file of
 * each kind must read, so that the cases do not test refusals alone.
 *
 * XLSX cases run too, since the workbook reader of its own (zip parts inflated within limits,
 * CRC-checked) landed: before it, damaged workbooks hung or failed without naming the file.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_SEEDS, fuzzCase, KINDS, readBase, type CaseResult, type Kind } from '../../bench/fuzz-cases.js';

const dir = mkdtempSync(join(tmpdir(), 'fuzz-'));
const BOUND_MS = 5_000;
const CASES = 400;
const TEXT_KINDS = KINDS.filter((k) => k !== 'xlsx');

async function run(from: number, count: number, kinds: readonly Kind[]): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (let seed = from; seed < from + count; seed++) results.push(await fuzzCase(seed, dir, BOUND_MS, kinds));
  return results;
}

describe('fuzzed hostile input', () => {
  it.each(KINDS)('reads the undamaged %s file', async (kind) => {
    expect(await readBase(kind, dir)).toBeUndefined();
  });

  it(`ends every one of ${CASES} damaged text files within ${BOUND_MS} ms, read or refused naming the file`, async () => {
    const results = await run(DEVELOPMENT_SEEDS.from, CASES, TEXT_KINDS);
    expect(results.filter((r) => r.outcome === 'failed')).toEqual([]);
    // every kind met, and both outcomes: the damage reaches the readers
    expect(new Set(results.map((r) => r.kind)).size).toBe(TEXT_KINDS.length);
    expect(results.some((r) => r.outcome === 'refused')).toBe(true);
    expect(results.some((r) => r.outcome === 'read')).toBe(true);
  }, 120_000);

  it('ends every damaged workbook within its bound, read or refused naming the file', async () => {
    const results = await run(DEVELOPMENT_SEEDS.from, 60, ['xlsx']);
    expect(results.filter((r) => r.outcome === 'failed')).toEqual([]);
  }, 600_000);
});
