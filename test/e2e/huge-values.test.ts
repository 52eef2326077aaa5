/**
 * Huge values in a legacy export: a field of megabytes, a legacy key of megabytes, a value just
 * under the field limit that a transform refuses, and a record over the platform's per-record
 * limit. Each row is refused before upload with its code, every message, ledger row and report
 * stays small, and the other rows are imported.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const MiB = 1024 * 1024;
// Columns of the generated klanten.csv (generate-samples).
const COL = { key: 0, firstNames: 2, surname: 4, birthDate: 6, street: 8, city: 11, partner: 17 };

describe('huge values in the export', () => {
  it('refuses each row with its code before upload, keeps every message and the ledger small, and imports the rest', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-huge-');
    dirs.push(dir);
    const gen = await runCli(['generate-samples', '--persons', '40', '--organisations', '0', '--out', dir]);
    expect(gen.code).toBe(0);

    const file = join(dir, 'klanten.csv');
    const lines = readFileSync(file, 'utf8').split('\r\n');
    const cells = lines.map((l) => l.split(';'));
    const partners = new Set(cells.slice(1).map((c) => c[COL.partner]));
    // rows nobody points at and that point at nobody, so no relation check joins in
    const free = cells
      .map((c, i) => ({ c, i }))
      .filter(({ c, i }) => i > 0 && c.length > COL.partner && !c[COL.partner] && !partners.has(c[COL.key]))
      .map(({ i }) => i);
    expect(free.length).toBeGreaterThanOrEqual(4);
    const [bigField, bigKey, badDate, bigRecord] = free as [number, number, number, number];
    cells[bigField]![COL.surname] += 'x'.repeat(3 * MiB);
    cells[bigKey]![COL.key] += '7'.repeat(2 * MiB);
    cells[badDate]![COL.birthDate] += '9'.repeat(60_000);
    // three fields under the field limit whose JSON (\u0001 is six bytes) passes 1 MiB together
    for (const col of [COL.firstNames, COL.street, COL.city]) cells[bigRecord]![col] += '\u0001'.repeat(65_000);
    writeFileSync(file, cells.map((c) => c.join(';')).join('\r\n'));

    const ledger = join(dir, 'ledger.db');
    const out = join(dir, 'report');
    // Four huge rows among the sample's planted defects: more than 5% refused is expected here.
    const res = await runCli([
      'migrate',
      join(dir, 'pipeline.yaml'),
      '--expect-refused',
      '100%',
      '--ledger',
      ledger,
      '--out',
      out,
      '--base-url',
      svc.url,
    ]);
    expect(res.code, res.stderr.slice(0, 2000)).toBe(0);
    // nothing printed grows with the values
    expect(res.stdout.length + res.stderr.length).toBeLessThan(20_000);
    for (const line of `${res.stdout}\n${res.stderr}`.split('\n')) expect(line.length).toBeLessThan(2_000);

    const db = new Database(ledger, { readonly: true });
    try {
      const refused = db
        .prepare<[], { line: number; state: string; errors: string; key: string }>(
          "SELECT line, state, errors, legacy_key AS key FROM records WHERE state != 'imported' ORDER BY line",
        )
        .all();
      const codes = refused.map((r) => [r.line, r.state, (JSON.parse(r.errors) as Array<{ code: string }>).map((e) => e.code)]);
      expect(codes).toEqual(
        [
          [bigField + 1, 'rejected', ['INVALID_FIELD_VALUE']],
          [bigKey + 1, 'rejected', ['INVALID_FIELD_VALUE']],
          [badDate + 1, 'rejected', ['INVALID_FIELD_VALUE']],
          [bigRecord + 1, 'rejected', ['RECORD_TOO_LARGE']],
        ].sort((a, b) => (a[0] as number) - (b[0] as number)),
      );
      for (const r of refused) {
        expect(r.errors.length).toBeLessThan(2_000);
        expect(r.key.length).toBeLessThan(200);
      }
      const tooLarge = JSON.parse(refused.find((r) => r.line === bigRecord + 1)!.errors)[0] as { field: string; message: string };
      expect(tooLarge.message).toMatch(
        new RegExp(
          `klanten\\.csv:${bigRecord + 1}: record ${cells[bigRecord]![COL.key]} is \\d+ bytes as staged, expected at most 1048576 .*its largest field \\S+ holds 650\\d\\d characters`,
        ),
      );
      const imported = db.prepare("SELECT count(*) FROM records WHERE state = 'imported'").pluck().get();
      expect(imported).toBe(40 - 4);
    } finally {
      db.close();
    }
    // the ledger holds no copy of the values (without them it is well under a megabyte)
    const size = (f: string) => {
      try {
        return statSync(f).size;
      } catch {
        return 0;
      }
    };
    expect(size(ledger) + size(`${ledger}-wal`)).toBeLessThan(2 * MiB);
    // nor does the report (the corrections file holds the rows themselves: nothing is lost)
    expect(statSync(join(out, 'report.json')).size).toBeLessThan(200_000);
    expect(statSync(join(out, 'report.md')).size).toBeLessThan(50_000);
    expect(readFileSync(join(out, 'klanten.corrections.csv'), 'utf8')).toContain('x'.repeat(3 * MiB));
  });
});
