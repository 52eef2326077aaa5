/**
 * The corrections round trip on the sample pipeline's two sources (a windows-1252 CSV with `;`
 * and a JSON export): the report writes the refused rows, they come back through `run
 * --corrections` (several files, a folder), and a second report written from rows that were
 * themselves re-staged from a corrections file keeps the original columns and characters.
 * Real service, real CLI.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import type { ReconciliationReport } from '../../src/reconcile/index.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The sample pipeline in a folder of its own, with an accented surname on a refused row (line 46). */
function copySamples(dir: string): void {
  for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  const file = join(dir, 'samples/crm/klanten.csv');
  const lines = readFileSync(file, 'latin1').split('\n');
  const f = lines[45]!.split(';');
  f[4] = 'Boër';
  lines[45] = f.join(';');
  writeFileSync(file, Buffer.from(lines.join('\n'), 'latin1'));
}

const record = (ledger: string, key: string) =>
  new Database(ledger, { readonly: true })
    .prepare<[string], { state: string; file: string; line: number; errors: string | null }>(
      'SELECT state, file, line, errors FROM records WHERE legacy_key = ? ORDER BY rowid',
    )
    .all(key);

describe('corrections round trip', () => {
  it('reads each corrections file in its own dialect, never lets an unedited duplicate replace the row that staged, and keeps a wrong-width row refused', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-corrections-');
    dirs.push(dir);
    copySamples(dir);
    const ledger = join(dir, 'ledger.db');
    const common = ['--ledger', ledger, '--base-url', svc.url];

    const run1 = await runCli(['run', 'pipelines/crm.yaml', ...common], { cwd: dir });
    expect(run1.code, run1.stderr).toBe(0);
    const rep1 = await runCli(['report', 'crm', '--out', 'r1', ...common], { cwd: dir });
    expect(rep1.stdout).toContain('corrections: r1/klanten.corrections.csv');
    expect(rep1.stdout.split('\n')[0]).toBe(
      'Reconciliation (tolerance 0): nothing imported yet: 228 of 240 source rows staged, 12 not staged (refused, see below), 0 imported; validation has not run. Every row is accounted for so far.',
    );
    const first = readFileSync(join(dir, 'r1/klanten.corrections.csv'), 'utf8');
    expect(statSync(join(dir, 'r1/klanten.corrections.csv')).mode & 0o777).toBe(0o600);
    expect(first).toContain('Boër');

    // Everything handed back unedited, as a folder: the duplicates stay refused and are not sent.
    const run2 = await runCli(['run', 'pipelines/crm.yaml', '--corrections', 'r1', ...common], { cwd: dir });
    expect(run2.code, run2.stdout + run2.stderr).toBe(0);
    expect(run2.stdout).toContain('2 duplicate-key row(s) came back unedited: left refused, not sent');
    const dup = record(ledger, '100081');
    expect(dup.find((r) => r.state === 'staged')).toMatchObject({ file: 'samples/crm/klanten.csv', line: 84 });
    // The row with a column too few is still refused for it, not trimmed to fit.
    expect(run2.stdout).toContain('SOURCE_ROW_INVALID');

    // The second report re-reads the rows re-staged from the corrections files in their dialect.
    const rep2 = await runCli(['report', 'crm', '--out', 'r2', ...common], { cwd: dir });
    expect(rep2.stdout).toContain('corrections: r2/klanten.corrections.csv');
    const second = readFileSync(join(dir, 'r2/klanten.corrections.csv'), 'utf8');
    expect(second.split('\r\n')[0]).toBe(first.split('\r\n')[0]);
    expect(second).toContain('Boër');
    expect(second).not.toContain('Ã');
    expect(second.match(/_source/g)).toHaveLength(1);

    // The engineer fixes rows in both files; handed back with two --corrections flags, they stage.
    const fixedCsv = readFileSync(join(dir, 'r2/klanten.corrections.csv'), 'utf8')
      .replace(/;31-02-1980;/, ';28-02-1980;')
      .replace(/^(klanten;[^;]*);100081;S\.P\./m, '$1;199999;S.P.');
    writeFileSync(join(dir, 'klanten-fixed.csv'), fixedCsv);
    const orgs = readFileSync(join(dir, 'r2/bedrijven.corrections.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const nameless = orgs.find((o) => o.naam === '' || o.naam === undefined)!;
    nameless.naam = 'Hersteld BV';
    writeFileSync(join(dir, 'bedrijven-fixed.jsonl'), `${orgs.map((o) => JSON.stringify(o)).join('\n')}\n`);
    const run3 = await runCli(
      ['run', 'pipelines/crm.yaml', '--corrections', 'klanten-fixed.csv', '--corrections', 'bedrijven-fixed.jsonl', ...common],
      {
        cwd: dir,
      },
    );
    expect(run3.code, run3.stdout + run3.stderr).toBe(0);
    expect(record(ledger, '100044').map((r) => r.state)).toEqual(['staged']);
    expect(record(ledger, '199999').map((r) => r.state)).toEqual(['staged']);
    expect(record(ledger, String(nameless.kvk_nummer))[0]?.state).toBe('staged');
    // The first occurrence of 100081 still holds its key and its row.
    expect(record(ledger, '100081').find((r) => r.state === 'staged')).toMatchObject({ line: 84 });
    // The report tells each such row's story: refused, read again (unedited, still refused), fixed and staged.
    const rep3 = await runCli(['report', 'crm', '--out', 'r3', ...common], { cwd: dir });
    expect(rep3.code, rep3.stderr).not.toBe(2);
    const stories = (JSON.parse(readFileSync(join(dir, 'r3/report.json'), 'utf8')) as ReconciliationReport).rowStories;
    const story = stories.stories.find((s) => s.legacyKey === '100044');
    expect(story?.steps.map((s) => [s.state, s.run, s.file])).toEqual([
      ['rejected', 1, 'samples/crm/klanten.csv'],
      ['rejected', 2, 'r1/klanten.corrections.csv'],
      ['staged', 3, 'klanten-fixed.csv'],
    ]);
    expect(story?.steps[0]?.codes.length).toBeGreaterThan(0);
    expect(story?.steps[2]?.codes).toEqual([]);
    expect(readFileSync(join(dir, 'r3/report.md'), 'utf8')).toMatch(
      /\| 100044 \| rejected in run 1 at samples\/crm\/klanten\.csv:\d+ \(\w+.*\) → .* → staged, read in run 3 from klanten-fixed\.csv:\d+ \|/,
    );
    // The duplicate returned unedited never changed state or row: it has no story.
    expect(stories.stories.some((s) => s.legacyKey === '100081')).toBe(false);
    expect(
      readdirSync(join(dir, 'r2'))
        .filter((f) => f.endsWith('.corrections.csv') || f.endsWith('.corrections.jsonl'))
        .sort(),
    ).toEqual(['bedrijven.corrections.jsonl', 'klanten.corrections.csv']);
  });
});
