/**
 * `init` on a few DEVELOPMENT seeds of the export personalities (src/pipeline/samples/
 * personalities/): every mapping init writes loads, at least 95% of the truth's mappable rows are
 * mapped by the untouched pipeline, and no staged value differs from the truth. The CHECK seeds are
 * only measured, by `npm run bench -- init` (bench/init-personalities.bench.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/service.js';
import { CHECK_SEEDS, DEV_SEEDS, drawPersonality } from '../../src/pipeline/samples/personalities/index.js';
import { scoreSeed } from '../../src/init/personality-score.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** One seed of each file format among the first development seeds. */
function seedsOfEachFormat(): number[] {
  const byFormat = new Map<string, number>();
  for (const s of DEV_SEEDS) {
    const f = drawPersonality(s).format;
    if (!byFormat.has(f)) byFormat.set(f, s);
  }
  return [...byFormat.values()];
}

describe('init on export personalities (development seeds)', () => {
  it('keeps the development and check seed ranges apart', () => {
    expect(DEV_SEEDS.some((s) => CHECK_SEEDS.includes(s))).toBe(false);
  });

  it.each(seedsOfEachFormat())('seed %i: every mapping loads, ≥ 95% mapped, no value differs from the truth', async (seed) => {
    const dir = tempDir(`stagecoach-personality-${seed}-`);
    dirs.push(dir);
    const score = await scoreSeed(seed, dir, 120);
    expect(score.failure).toBeUndefined();
    // A workbook's notes sheet is no second person source: left out, and the pipeline says why.
    if (drawPersonality(seed).format === 'xlsx') {
      const pipeline = readFileSync(join(dir, 'gen/pipeline.yaml'), 'utf8');
      expect(pipeline.match(/^ {2}- name: /gm)).toHaveLength(1);
      expect(pipeline).toMatch(/# sheet "\w+" left out: none of its columns names a person or a company/);
    }
    expect(score.wrong).toEqual({});
    expect(score.mapped / score.mappable).toBeGreaterThanOrEqual(0.95);
  });
});
