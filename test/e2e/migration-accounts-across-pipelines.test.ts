/**
 * Issue 40, items 3 and 5: several pipelines, one truth. The two sample pipelines (core-banking,
 * a fixed-width export, and crm, CSV and JSON) on one ledger and one real embedded service,
 * through the real CLI:
 * - `run A; migrate B; run B`: the completed migration imported A's and B's records; B's re-run
 *   goes into a new migration and says so, and the completed migration's report stays balanced
 *   (what it imported stays counted for it: it said "NOT BALANCED, the platform reports 4
 *   imported, the ledger 2");
 * - `verify` before any import says there is nothing to verify yet (exit 0), never "FAILED 0 of
 *   0", and the tenant's seeded counterparties are not strays;
 * - `migrate B; migrate A; run B; verify A`: no false alarm (B's records, live from B's first
 *   migration, were strays), and the verdict says which pipelines and migration it is about.
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const A = 'pipelines/core-banking.yaml';
const B = 'pipelines/crm.yaml';

interface Two {
  svc: TestService;
  dir: string;
  cli(args: string[]): ReturnType<typeof runCli>;
  migrations(): string[];
}

const open: Two[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) {
    await t.svc.dispose();
    rmSync(t.dir, { recursive: true, force: true });
  }
});

async function twoPipelines(): Promise<Two> {
  const svc = await startTestService();
  const dir = tempDir('stagecoach-two-pipelines-');
  for (const sub of ['pipelines', 'mappings', 'samples/crm', 'samples/core-banking'])
    cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  const ledger = join(dir, 'ledger.db');
  const t: Two = {
    svc,
    dir,
    cli: (args) => runCli([...args, '--ledger', ledger, '--base-url', svc.url], { cwd: dir }),
    migrations() {
      const db = new Database(ledger, { readonly: true });
      try {
        return (db.prepare('SELECT reference_id FROM migrations ORDER BY id').all() as Array<{ reference_id: string }>).map(
          (m) => m.reference_id,
        );
      } finally {
        db.close();
      }
    },
  };
  open.push(t);
  return t;
}

const ok = (res: { code: number | null; stdout: string; stderr: string }) => expect(res.code, res.stdout + res.stderr).toBe(0);

describe('several pipelines into one migration, and re-runs after it completed', () => {
  it('run A; migrate B; run B: the re-run says where its records go, and the completed migration’s report stays balanced', async () => {
    const t = await twoPipelines();
    ok(await t.cli(['run', A]));
    ok(await t.cli(['migrate', B, '--drop-invalid', '--no-verify', '--out', 'r1']));
    const [m1] = t.migrations();
    const rerun = await t.cli(['run', B]);
    ok(rerun);
    const [, m2] = t.migrations();
    expect(m2).toBeDefined();
    expect(rerun.stdout).toContain(`into migration ${m2}`);
    expect(rerun.stdout).toContain(
      `not into ${m1}, the migration of crm's last run (no longer active): what it imported stays counted for it`,
    );

    const rep = await t.cli(['report', 'core-banking', '--out', 'r2', '--json']);
    ok(rep);
    const report = JSON.parse(rep.stdout) as {
      balanced: boolean;
      problems: string[];
      run: { migrationId: string };
      totals: { imported: number };
    };
    expect(report.run.migrationId).toBe(m1);
    expect([report.balanced, report.problems]).toEqual([true, []]);
    // A's 299 and B's 228 (the samples' refused rows left out), as the platform counts them.
    expect(report.totals.imported).toBe(527);
  });

  it('verify before any import has nothing to verify yet; migrate B; migrate A; run B; verify A raises no false alarm', async () => {
    const t = await twoPipelines();
    ok(await t.cli(['run', B]));
    const before = await t.cli(['verify', 'crm']);
    ok(before);
    expect(before.stdout).toMatch(/^Nothing to verify yet: no record of crm is imported \(migration \S+\)\n/);
    expect(before.stdout).not.toMatch(/VERIFICATION FAILED|strays/);
    expect(before.stdout).toContain('live counterparties from before the migration');

    ok(await t.cli(['migrate', B, '--drop-invalid', '--out', 'r1']));
    ok(await t.cli(['migrate', A, '--drop-invalid', '--out', 'r2']));
    ok(await t.cli(['run', B]));
    const [, m2] = t.migrations();
    const v = await t.cli(['verify', 'core-banking']);
    ok(v);
    expect(v.stdout).toMatch(
      /^Verified: 299 of 299 imported records identical on the platform \(100%\)\n {2}pipeline core-banking · migration /,
    );
    expect(v.stdout).toContain(`migration ${m2}`);
    expect(v.stdout).not.toContain('strays');
    expect(v.stdout).toContain('228 live counterparties imported by other pipelines of this ledger, verified with their own migrations');
  });
});
