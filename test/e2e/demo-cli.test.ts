import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';
import { tempDir } from '../support/service.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const chromium = ['chromium', 'chromium-browser'].find((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status === 0);

describe('stagecoach demo', () => {
  it('runs the samples through the whole chain with no setting, prints a summary and writes a balanced report', async () => {
    const cwd = tempDir('stagecoach-demo-');
    dirs.push(cwd);
    const res = await runCli(['demo'], { cwd });
    expect(res.stderr).toMatch(/^› embedded lending service on http:\/\/127\.0\.0\.1:\d+ /);
    expect(res.code).toBe(0);
    const report = JSON.parse(readFileSync(join(cwd, '.stagecoach/reports/demo/report.json'), 'utf8'));
    expect(report.balanced).toBe(true);
    const t = report.totals;
    expect(res.stdout).toBe(
      [
        'stagecoach demo: the sample CRM export through the whole migration chain',
        `  ${t.sourceRows} legacy rows read, ${t.mapped} mapped, ${t.sourceRows - t.mapped} rejected before upload`,
        `  ${t.staged} staged, ${t.staged - t.valid} refused by validation (removed from staging), ${t.imported} imported`,
        '  reconciliation: balanced, 0 unaccounted',
        `  verification: Verified: ${t.imported} of ${t.imported} imported records identical on the platform (100%)`,
        '  report:      .stagecoach/reports/demo/report.html  (and report.md, report.json)',
        ...res.stdout.split('\n').filter((l) => l.startsWith('  corrections: ')),
        '',
      ].join('\n'),
    );
    expect(t.imported).toBeGreaterThan(0);
    expect(t.imported).toBe(t.valid);
    expect(report.jobs).toEqual({ validation: 'valid', import: 'done', counts: 'done' });
    // the demo's migration verifies 100% identical, and the report says so in its first lines
    expect(report.verification).toMatchObject({ passed: true, imported: t.imported, identical: t.imported, differing: 0 });
    const md = readFileSync(join(cwd, '.stagecoach/reports/demo/report.md'), 'utf8').split('\n');
    expect(md.slice(0, 10)).toContain(
      `**Verified: ${t.imported} of ${t.imported} imported records identical on the platform (100%)** (see Verification below).`,
    );
    // runs afresh each time: a second demo gives the same numbers
    const again = await runCli(['demo'], { cwd });
    expect(again.code).toBe(0);
    expect(JSON.parse(readFileSync(join(cwd, '.stagecoach/reports/demo/report.json'), 'utf8')).totals).toEqual(t);
  });

  it.skipIf(!chromium)('renders the report in headless Chromium (skipped when no chromium is installed)', async () => {
    const cwd = tempDir('stagecoach-demo-shot-');
    dirs.push(cwd);
    expect((await runCli(['demo'], { cwd })).code).toBe(0);
    const png = join(cwd, 'shot.png');
    execFileSync(join(ROOT, 'scripts/screenshot-report.sh'), [join(cwd, '.stagecoach/reports/demo/report.html'), png], {
      cwd,
      stdio: 'pipe',
    });
    expect(existsSync(png)).toBe(true);
    const head = readFileSync(png).subarray(0, 8);
    expect([...head]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(readFileSync(png).length).toBeGreaterThan(20_000);
  });
});
