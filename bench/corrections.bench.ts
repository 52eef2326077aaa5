/**
 * Corrections files: re-reading refused rows by provenance from a big export. A refused row is
 * read from its byte offset to its end, so the time a row takes must not grow with the file:
 * reading each CSV record to the end of the file made 6,000 refused rows of a 13 MB export take
 * over 20 minutes (221 ms a row). 100,000 generated persons with 500 defects per 10,000 rows
 * (quick: 20,000); the rows refused are the planted defects.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchOptions, BenchRow } from './harness.js';
import { generateCrmSamples } from '../src/pipeline/samples/generate-crm.js';
import { writeCorrections, type RefusedRecord } from '../src/reconcile/corrections.js';

export const title = 'corrections: refused rows re-read from the export';

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const persons = options.quick ? 20_000 : 100_000;
  const dir = join(options.workDir, 'crm');
  await generateCrmSamples({ out: dir, persons, organisations: 0, seed: 42, defectsPer10k: 500 });
  const file = join(dir, 'klanten.csv');
  // Every 20th line of the export, as if refused: where a row starts is all the writer needs.
  const bytes = readFileSync(file);
  const refused: RefusedRecord[] = [];
  for (let at = bytes.indexOf(10) + 1, line = 2; at > 0 && at < bytes.length; line++) {
    if (line % 20 === 0)
      refused.push({
        source: 'klanten',
        provenance: { file, line, byteOffset: at },
        errors: [{ field: 'x', code: 'INVALID_FIELD_VALUE', message: 'bench', stage: 'mapping' }],
      });
    at = bytes.indexOf(10, at) + 1;
  }
  const started = performance.now();
  await writeCorrections(refused, [{ name: 'klanten', format: 'csv', encoding: 'utf-8', csv: { delimiter: ';' } }], join(dir, 'out'), dir);
  const ms = performance.now() - started;
  return [
    {
      benchmark: title,
      metric: `per refused row, ${persons.toLocaleString('en')} persons`,
      value: Math.round((ms / refused.length) * 100) / 100,
      unit: 'ms',
      note: `${refused.length.toLocaleString('en')} rows in ${(ms / 1000).toFixed(1)} s`,
    },
  ];
}
