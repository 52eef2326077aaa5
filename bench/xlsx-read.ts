/**
 * The child process of the XLSX bench (xlsx.bench.ts): reads one workbook's sheet through the
 * XLSX source, as `run` reads it (row hashes, the independent count), and prints what it read as
 * JSON, so the bench measures this process's own time and peak RSS.
 * Usage: node dist/bench/xlsx-read.js <workbook> <sheet>
 */
import { newTally, readSourceBatches, tallyDisagreement } from '../src/pipeline/source/index.js';
import { xlsxOptionsSchema } from '../src/pipeline/source/xlsx/options.js';

const [path, sheet] = process.argv.slice(2);
if (!path || !sheet) throw new Error('usage: xlsx-read.js <workbook> <sheet>');
const tally = newTally('bench', path, 'xlsx');
const source = {
  name: 'bench',
  format: 'xlsx' as const,
  encoding: 'auto' as const,
  xlsx: xlsxOptionsSchema.parse({ sheet, headerRow: 1 }),
};
const started = performance.now();
let rows = 0;
let errors = 0;
for await (const batch of readSourceBatches(source, { path, file: path }, { tally }))
  for (const row of batch) 'code' in row ? errors++ : rows++;
const ms = performance.now() - started;
process.stdout.write(
  `${JSON.stringify({ rows, errors, ms, disagreement: tallyDisagreement(tally) ?? null, sheetRows: tally.physicalLines })}\n`,
);
