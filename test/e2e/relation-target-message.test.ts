/**
 * A person whose partner row is refused before upload passes the local checks (the partner's
 * key is in the export), is staged, and validation refuses it with RELATION_TARGET_MISSING,
 * naming only a UUID. The report and the corrections file must name both legacy rows instead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('RELATION_TARGET_MISSING in the report and the corrections file', () => {
  it('names the row, its key, the missing target by its legacy key and row, why it is missing, and what to do', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-relation-');
    dirs.push(dir);
    expect((await runCli(['generate-samples', '--persons', '50', '--organisations', '0', '--out', dir])).code).toBe(0);
    const file = join(dir, 'klanten.csv');
    const cells = readFileSync(file, 'utf8')
      .split('\r\n')
      .map((l) => l.split(';'));
    // the first person with a partner (column partner_klantnr); the partner loses its surname
    const from = cells.findIndex((c, i) => i > 0 && c[17]);
    const to = cells.findIndex((c) => c[0] === cells[from]![17]);
    expect([from > 0, to > 0]).toEqual([true, true]);
    cells[to]![4] = '';
    writeFileSync(file, cells.map((c) => c.join(';')).join('\r\n'));

    const out = join(dir, 'report');
    const res = await runCli([
      'migrate',
      join(dir, 'pipeline.yaml'),
      '--drop-invalid',
      '--ledger',
      join(dir, 'ledger.db'),
      '--out',
      out,
      '--base-url',
      svc.url,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const message = new RegExp(
      `record ${cells[from]![0]} \\(\\S*klanten\\.csv:${from + 1}\\): relations\\.0\\.to \\(\\w+\\) points at legacy key ${cells[to]![0]} ` +
        `\\(\\S*klanten\\.csv:${to + 1}\\), refused before upload \\(MISSING_REQUIRED_FIELD\\) — fix that row first`,
    );
    const corrections = readFileSync(join(out, 'klanten.corrections.csv'), 'utf8');
    // After _origin, the export row it stands for.
    const row = corrections.split('\r\n').find((l) => l.includes(`klanten.csv:${from + 1};${cells[from]![0]};`));
    expect(row).toMatch(message);
    expect(row!.match(/ — /g)).toHaveLength(1);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(message);
  });
});
