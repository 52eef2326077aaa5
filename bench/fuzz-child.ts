/**
 * One process of the fuzzer's bench form (fuzz.bench.ts): runs the seeds it is given, one JSON
 * line a case (`{"start":seed}` before it, its result after), so that the parent can tell which
 * case a crash or a hang that stops this process came from, and go on after it.
 * Usage: node fuzz-child.js <first seed> <last seed> <folder> <bound ms>
 */
import { fuzzCase } from './fuzz-cases.js';

const [from, to, dir, bound] = process.argv.slice(2);
for (let seed = Number(from); seed <= Number(to); seed++) {
  process.stdout.write(`${JSON.stringify({ start: seed })}\n`);
  process.stdout.write(`${JSON.stringify(await fuzzCase(seed, dir!, Number(bound)))}\n`);
}
