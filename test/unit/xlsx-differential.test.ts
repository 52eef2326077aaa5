/**
 * The XLSX source read against a second, independent reader (SheetJS): generated workbooks
 * (bench/xlsx-generated.ts, development seeds only) read by both and every cell compared
 * (bench/xlsx-differential.ts). The bench form reads thousands, on the check seeds:
 * `npm run bench -- workbook-differential`.
 */
import { describe, expect, it } from 'vitest';
import { compareSeed } from '../../bench/xlsx-differential.js';
import { DEVELOPMENT_SEEDS } from '../../bench/xlsx-generated.js';

describe('the XLSX source against SheetJS', () => {
  it('reads every cell of 40 generated workbooks as SheetJS does (rich text, formulas, 1900 and 1904 dates, booleans, errors)', async () => {
    let cells = 0;
    let refused = 0;
    const mismatches: string[] = [];
    for (let seed = DEVELOPMENT_SEEDS.from; seed < DEVELOPMENT_SEEDS.from + 40; seed++) {
      const c = await compareSeed(seed);
      cells += c.cells;
      refused += c.refused;
      mismatches.push(...c.mismatches);
    }
    expect(mismatches).toEqual([]);
    expect(cells).toBeGreaterThan(3000); // the workbooks hold the cells the generator says
    expect(refused).toBeGreaterThan(300);
  }, 60_000);
});
