/**
 * `npm run bench`: runs every compiled `*.bench.js` next to this file (or those named on the
 * command line) and prints one table. `--quick` uses small sizes.
 */
import { readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchModule, BenchRow } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.filter((a) => !a.startsWith('--'));
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const rows: BenchRow[] = [];
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  const workDir = mkdtempSync(join(tmpdir(), 'stagecoach-bench-'));
  process.stderr.write(`▶ ${mod.title}\n`);
  try {
    const got = await mod.run({ quick, workDir });
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
