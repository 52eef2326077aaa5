/**
 * Two rows of an export with one identity (surname, initials, date of birth): validation keeps
 * the record staged first and refuses the later one only, and the report and the corrections
 * file name the kept row by its legacy key and file:line, with the identity masked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, samplesWithSharedIdentity } from '../support/cli.js';
import { readCorrectionsCsv, rowWhere, setCell, writeCorrectionsCsv } from '../support/corrections.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

let svc: TestService;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = tempDir('stagecoach-duplicate-identity-');
});
afterAll(async () => {
  await svc.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('DUPLICATE_IDENTITY', () => {
  it('refuses the later of two rows only, naming the kept row and the identity masked', async () => {
    const cells = await samplesWithSharedIdentity(dir, 40); // line 10 repeats line 3's identity

    const out = join(dir, 'report');
    const r = await runCli([
      'migrate',
      join(dir, 'pipeline.yaml'),
      '--ledger',
      join(dir, 'ledger.db'),
      '--out',
      out,
      '--base-url',
      svc.url,
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('validation refused 1 record(s)');
    const message =
      `same surname, initials and dateOfBirth \\(\`[^\`]+\`\\) as record ${cells[2]![0]} \\(\\S*klanten\\.csv:3\\), ` +
      'staged first and kept — if both rows are one person, drop this one; if not, correct the identity';
    const corrections = readFileSync(join(out, 'klanten.corrections.csv'), 'utf8').split('\r\n');
    expect(corrections.filter((l) => l.includes('DUPLICATE_IDENTITY'))).toEqual([
      expect.stringMatching(new RegExp(`;${cells[9]![0]};.*;"${message}";validation;`)),
    ]);
    const masked = new RegExp(`\\(\`([^\`]+)\`\\) as record ${cells[2]![0]}`).exec(readFileSync(join(out, 'report.md'), 'utf8'))?.[1];
    // masked: neither the surname nor the date of birth shows
    expect(masked).toBeDefined();
    expect(masked).not.toContain(cells[2]![4]);
    const [d, m, y] = cells[2]![6]!.split('-');
    expect(masked).not.toContain(`${y}-${m!.padStart(2, '0')}-${d!.padStart(2, '0')}`);
    expect(masked).toMatch(/^\S\*+ .+ \d\*{3}-\d\*-\d\*$/);

    // Issue 40: the refused row given another key (and another surname) in the corrections file.
    // The platform holds it under its key: the corrected row would be a second record, the
    // 40-row export counted 41. Refused before anything is sent, and counted.
    const csv = readCorrectionsCsv(join(out, 'klanten.corrections.csv'));
    const row = rowWhere(csv, 'klantnr', cells[9]![0]!);
    setCell(csv, row, 'klantnr', '777777');
    setCell(csv, row, 'achternaam', 'Anders');
    writeCorrectionsCsv(join(dir, 'fixed.csv'), { header: csv.header, rows: [row] });
    const common = ['--ledger', join(dir, 'ledger.db'), '--base-url', svc.url];
    const fix = await runCli(['run', join(dir, 'pipeline.yaml'), '--corrections', join(dir, 'fixed.csv'), '--json', ...common]);
    expect(fix.code, fix.stderr).toBe(0);
    const o = JSON.parse(fix.stdout) as { sent: number; corrections: { refused: Array<{ reason: string }> } };
    expect([o.sent, o.corrections.refused.map((x) => x.reason)]).toEqual([0, ['key-change-held']]);
    const rep = await runCli(['report', join(dir, 'pipeline.yaml'), '--out', join(dir, 'report-2'), '--json', ...common]);
    expect((JSON.parse(rep.stdout) as { totals: { sourceRows: number } }).totals.sourceRows).toBe(40);

    // Removed from staging by --drop-invalid, the platform no longer holds it: the same row then
    // takes its new key, closing the refusal (one record, the export still 40 rows).
    const drop = await runCli([
      'migrate',
      join(dir, 'pipeline.yaml'),
      '--drop-invalid',
      '--no-verify',
      '--out',
      join(dir, 'report-3'),
      ...common,
    ]);
    expect(drop.code, drop.stderr).toBe(0);
    const again = await runCli(['run', join(dir, 'pipeline.yaml'), '--corrections', join(dir, 'fixed.csv'), '--json', ...common]);
    expect(again.code, again.stderr).toBe(0);
    const o2 = JSON.parse(again.stdout) as { sent: number; corrections: { refused?: unknown[] } };
    expect([o2.sent, o2.corrections.refused ?? []]).toEqual([1, []]);
    const rep2 = await runCli(['report', join(dir, 'pipeline.yaml'), '--out', join(dir, 'report-4'), '--json', ...common]);
    const r2 = JSON.parse(rep2.stdout) as { totals: { sourceRows: number; staged: number } };
    expect([r2.totals.sourceRows, r2.totals.staged]).toEqual([40, 1]);
  });
});
