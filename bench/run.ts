/**
 * `npm run bench`: runs every compiled `*.bench.js` next to this file (or those named on the
 * command line) and prints one table. `--quick` uses small sizes; `--rows N`, `--rounds N`,
 * `--cli PATH` and `--record` go to the benches that take them (the guard: guard.bench.ts).
 */
import { readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchModule, BenchRow } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values: flags, positionals: only } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    rows: { type: 'string' },
    rounds: { type: 'string' },
    cli: { type: 'string' },
    record: { type: 'boolean', default: false },
  },
});
const count = (name: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text.replaceAll('_', '').replaceAll(',', ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} ${text}: expected a whole number of at least 1`);
  return n;
};
const options = {
  quick: flags.quick,
  rows: count('rows', flags.rows),
  rounds: count('rounds', flags.rounds),
  cli: flags.cli === undefined ? undefined : resolve(flags.cli),
  record: flags.record,
};
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  // The guard measures the others' figures again, for minutes: it runs only when named.
  .filter((f) => (only.length === 0 ? !f.startsWith('guard.') : only.some((o) => f.includes(o))))
  .sort();

const rows: BenchRow[] = [];
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  const workDir = mkdtempSync(join(tmpdir(), 'stagecoach-bench-'));
  process.stderr.write(`▶ ${mod.title}\n`);
  try {
    const got = await mod.run({ ...options, workDir });
    for (const r of got) process.stderr.write(`  ${r.metric}: ${r.value} ${r.unit}${r.note ? ` (${r.note})` : ''}\n`);
    rows.push(...got);
  } catch (err) {
    process.stderr.write(`  failed: ${(err as Error).stack}\n`);
    rows.push({ benchmark: mod.title, metric: 'FAILED', value: NaN, unit: '', note: (err as Error).message });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

const header = ['benchmark', 'metric', 'value', 'unit', 'note'];
const table = [header, ...rows.map((r) => [r.benchmark, r.metric, Number.isFinite(r.value) ? String(r.value) : '-', r.unit, r.note ?? ''])];
const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(table[0]!));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const row of table.slice(1)) console.log(line(row));
if (rows.some((r) => r.metric === 'FAILED')) process.exitCode = 1;
