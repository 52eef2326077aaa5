import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';

interface Defect {
  kind: string;
  file: string;
  line: number;
  key: string;
  code: string;
  field: string;
}
interface Summary {
  rowsRead: number;
  mapped: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  samples: { file: string; line: number; code: string; field: string; value?: unknown; message: string; legacyKey?: string }[];
}

const defects = JSON.parse(readFileSync(join(ROOT, 'samples', 'crm', 'defects.json'), 'utf8')) as Defect[];
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'cli-plan-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('stagecoach where code generation from strings is disallowed', () => {
  // Hardened deployments run node with --disallow-code-generation-from-strings: nothing in stagecoach may
  // depend on writing functions as source text (the CSV reader and the mapping build plain objects and closures).
  it('maps every sample row to the same record, and plans the same, as with generated code', async () => {
    const hardened = { NODE_OPTIONS: '--disallow-code-generation-from-strings' };
    const args = ['map', 'pipelines/crm.yaml', '--sample', '1000', '--json'];
    const [plain, strict] = await Promise.all([runCli(args), runCli(args, { env: hardened })]);
    expect(strict.stderr).toBe('');
    expect(strict.code).toBe(0);
    expect(strict.stdout.trim().split('\n')).toHaveLength(240);
    expect(strict.stdout).toBe(plain.stdout);
    const withoutTiming = (out: string) => ({ ...(JSON.parse(out) as Record<string, unknown>), elapsedMs: 0 });
    const [planPlain, planStrict] = await Promise.all([
      runCli(['plan', 'pipelines/crm.yaml', '--json']),
      runCli(['plan', 'pipelines/crm.yaml', '--json'], { env: hardened }),
    ]);
    expect(planStrict.code).toBe(0);
    expect(withoutTiming(planStrict.stdout)).toEqual(withoutTiming(planPlain.stdout));
  });
});

describe('stagecoach plan on the sample CRM exports', () => {
  it('reports every known defect at its file and line with the expected reason, and nothing else', async () => {
    const res = await runCli(['plan', 'pipelines/crm.yaml', '--json', '--samples', '50']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const s = JSON.parse(res.stdout) as Summary;
    expect([s.rowsRead, s.mapped, s.rejected]).toEqual([240, 228, 12]);
    expect(defects).toHaveLength(12);
    const reported = s.samples.map((x) => `${x.file}:${x.line} ${x.code} ${x.field}`).sort();
    const expected = defects.map((d) => `${join('samples', 'crm', d.file)}:${d.line} ${d.code} ${d.field}`).sort();
    expect(reported).toEqual(expected);
    const rows = s.samples.find((x) => x.code === 'DUPLICATE_LEGACY_KEY' && x.file.endsWith('klanten.csv'))!;
    expect(rows.message).toMatch(/^klantnr: duplicate legacy key crm-klant \d+, first seen at samples\/crm\/klanten\.csv:\d+$/);
  });

  it('prints the counts, the reasons and the examples for a person at a terminal, personal values masked', async () => {
    const res = await runCli(['plan', 'pipelines/crm.yaml']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      'Plan for pipelines/crm.yaml (Counterparties): read, mapped and checked, nothing sent\n  rows read       240   klanten 200, bedrijven 40\n  mapped          228\n  rejected         12\n',
    );
    const impossible = defects.find((d) => d.kind === 'impossible-date')!;
    expect(res.stdout).toContain(
      `  samples/crm/klanten.csv:${impossible.line}  INVALID_FIELD_VALUE  dateOfBirth = "**-**-19**"\n      dateOfBirth: not a date: February has 28 or 29 days, got \`**-**-19**\` in column geboortedatum\n`,
    );
    expect(res.stdout).toContain('Values of personal fields are masked; write a local working copy with --reveal.');
  });

  it('prints the values in the clear with --reveal', async () => {
    const res = await runCli(['plan', 'pipelines/crm.yaml', '--reveal']);
    expect(res.code).toBe(0);
    const impossible = defects.find((d) => d.kind === 'impossible-date')!;
    expect(res.stdout).toContain(
      `  samples/crm/klanten.csv:${impossible.line}  INVALID_FIELD_VALUE  dateOfBirth = "31-02-1980"\n      dateOfBirth: not a date: February has 28 or 29 days, got \`31-02-1980\` in column geboortedatum\n`,
    );
  });

  it('exits 2 with file:line:column when the pipeline is invalid', async () => {
    writeFileSync(join(work, 'bad.yaml'), 'name: bad\nsources: []\ntarget: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }\n');
    const res = await runCli(['plan', join(work, 'bad.yaml')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      `stagecoach: Invalid ${join(work, 'bad.yaml')}: ${join(work, 'bad.yaml')}:2:10: sources: expected array to have >=1 items, got []\n`,
    );
  });
});

describe('stagecoach map', () => {
  it('shows source rows next to their mapped records', async () => {
    const res = await runCli(['map', 'pipelines/crm.yaml', '--sample', '2', '--json']);
    expect(res.code).toBe(0);
    const lines = res.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            provenance: { file: string; line: number };
            values: Record<string, string>;
            kind: string;
            record: Record<string, unknown>;
          },
      );
    expect(lines).toHaveLength(2);
    expect(lines[0]!.provenance).toMatchObject({ file: 'samples/crm/klanten.csv', line: 2 });
    expect(lines[0]!.kind).toBe('mapped');
    expect(lines[0]!.record.surname).toBe(lines[0]!.values.achternaam);
  });

  it('shows the reasons of rejected rows, with the row as read', async () => {
    const res = await runCli(['map', 'pipelines/crm.yaml', '--rejected', '--sample', '1']);
    expect(res.code).toBe(0);
    const first = defects[0]!;
    expect(res.stdout).toContain(`── samples/crm/klanten.csv:${first.line} (klanten, key ${first.key})`);
    expect(res.stdout).toContain('rejected\n  MISSING_REQUIRED_FIELD  surname: required, got nothing in column achternaam\n');
  });
});

describe('stagecoach generate-samples', () => {
  it('writes the same files for the same seed, and a pipeline that plans its planted defects', async () => {
    const a = join(work, 'a');
    const b = join(work, 'b');
    for (const out of [a, b]) {
      const res = await runCli([
        'generate-samples',
        '--persons',
        '2000',
        '--organisations',
        '100',
        '--out',
        out,
        '--seed',
        '9',
        '--defects-per-10k',
        '40',
      ]);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^Wrote 2000 persons, 100 organisations, 8 planted defects/);
    }
    expect(readFileSync(join(a, 'klanten.csv')).equals(readFileSync(join(b, 'klanten.csv')))).toBe(true);
    expect(readFileSync(join(a, 'bedrijven.json')).equals(readFileSync(join(b, 'bedrijven.json')))).toBe(true);
    const planted = JSON.parse(readFileSync(join(a, 'defects.json'), 'utf8')) as Defect[];
    const res = await runCli(['plan', join(a, 'pipeline.yaml'), '--json', '--samples', '100']);
    expect(res.code).toBe(0);
    const s = JSON.parse(res.stdout) as Summary;
    expect(s.rejected).toBe(planted.length);
    expect(s.samples.map((x) => `${x.file}:${x.line} ${x.code}`).sort()).toEqual(
      planted.map((d) => `${join(a, d.file)}:${d.line} ${d.code}`).sort(),
    );
  });

  it('plans a big export with a reader worker exactly as on one thread, every planted defect at its line', async () => {
    // 20,000 persons: 2.5 MB, over the 2 MiB from which a CSV file is read in parallel.
    const dir = join(work, 'big');
    const gen = await runCli([
      'generate-samples',
      '--persons',
      '20000',
      '--organisations',
      '0',
      '--out',
      dir,
      '--seed',
      '11',
      '--defects-per-10k',
      '30',
    ]);
    expect(gen.code).toBe(0);
    const planted = JSON.parse(readFileSync(join(dir, 'defects.json'), 'utf8')) as Defect[];
    const pipeline = readFileSync(join(dir, 'pipeline.yaml'), 'utf8');
    writeFileSync(join(dir, 'one-thread.yaml'), `${pipeline}concurrency: { workers: 0 }\n`);
    writeFileSync(join(dir, 'two-workers.yaml'), `${pipeline}concurrency: { workers: 2 }\n`);
    const plans: Summary[] = [];
    for (const file of ['one-thread.yaml', 'two-workers.yaml']) {
      const res = await runCli(['plan', join(dir, file), '--json', '--samples', '1000']);
      expect(res.code).toBe(0);
      // The same rows, the same verdicts and the same two-way count of the file, whether it was
      // read on one thread or in ranges on workers (each range counts its lines; they add up).
      const {
        elapsedMs: _elapsed,
        pipeline: _pipeline,
        ...summary
      } = JSON.parse(res.stdout) as Summary & { elapsedMs: number; pipeline: string };
      plans.push(summary);
    }
    expect((plans[0] as unknown as { files: Array<{ physicalLines: number }> }).files.map((f) => f.physicalLines)).toEqual([20001]);
    expect(plans[0]!.rowsRead).toBe(20000);
    expect(plans[0]!.rejected).toBe(planted.length);
    expect(plans[0]!.samples.map((x) => `${x.file}:${x.line} ${x.code}`).sort()).toEqual(
      planted.map((d) => `${join(dir, d.file)}:${d.line} ${d.code}`).sort(),
    );
    expect(plans[1]).toEqual(plans[0]);
  });
});
