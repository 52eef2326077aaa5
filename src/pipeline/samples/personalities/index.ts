/**
 * A corpus of export *personalities* `init` was never tuned on (issue 39): each seed draws a
 * language, a naming style, a file format and the notations of dates, amounts, countries and
 * phone numbers (personality.ts), and writes the export with the truth of every row (writers.ts).
 * Two seed ranges: DEVELOPMENT seeds to look at while building, CHECK seeds only measured
 * (`npm run bench -- init`), never tuned on. Seeded: the same seed gives the same bytes.
 */
import { mkdir } from 'node:fs/promises';
import { drawPersonality, type Personality } from './personality.js';
import { type WrittenExport, writeCsv, writeFixedWidth, writeJsonLines, writeWorkbook } from './writers.js';

export { drawPersonality, type Personality, type PersonalityTruth } from './personality.js';
export type { WrittenExport } from './writers.js';

/** Seeds to develop on: look at their failures freely. */
export const DEV_SEEDS: readonly number[] = Array.from({ length: 40 }, (_, i) => 1001 + i);
/**
 * Seeds to check on: only their figures are looked at. Whenever a failure of this range is
 * looked at, move the range (and say so in the commit), so no code is tuned on it.
 */
export const CHECK_SEEDS: readonly number[] = Array.from({ length: 40 }, (_, i) => 880_001 + i);

export interface GeneratedPersonality extends WrittenExport {
  personality: Personality;
}

/**
 * @example const g = await generatePersonality(1001, { out: 'corpus/1001', rows: 300 });
 *          g.files[0] // 'corpus/1001/export-1001.csv'; g.truth[0].dateOfBirth // '1971-09-25'
 */
export async function generatePersonality(seed: number, options: { out: string; rows: number }): Promise<GeneratedPersonality> {
  const p = drawPersonality(seed);
  await mkdir(options.out, { recursive: true });
  const write = { csv: writeCsv, jsonl: writeJsonLines, xlsx: writeWorkbook, 'fixed-width': writeFixedWidth }[p.format];
  return { personality: p, ...(await write(p, options.out, options.rows)) };
}
