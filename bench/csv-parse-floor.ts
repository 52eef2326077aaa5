/**
 * The floor the release guard measures every figure against, as a process of its own (so its
 * CPU and peak RSS are the operating system's accounting, like the commands it is paired with):
 * csv-parse reading the file into objects (`columns: true`), nothing else. Prints the rows read.
 * @example node dist/bench/csv-parse-floor.js klanten.csv
 */
import { csvParseAlone } from './harness.js';

const file = process.argv[2];
if (!file) throw new Error('usage: csv-parse-floor.js <file.csv>');
const { rows, ms } = await csvParseAlone(file);
process.stdout.write(`${JSON.stringify({ rows, ms })}\n`);
