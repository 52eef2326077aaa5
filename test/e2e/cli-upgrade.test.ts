/**
 * `stagecoach upgrade` through the real CLI: a pipeline written for language 1 is refused by
 * `plan` (exit 2, each changed place at its line, nothing read), `upgrade --dry-run` writes
 * nothing, `upgrade` rewrites it, and `plan` then reads the Dutch numbers as language 1 did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';

const MAPPING = `type: person
key: { column: id, scope: p }
record:
  initials: { column: voorletters, required: true }
  surname: { column: naam, required: true }   # the family name
  telephoneNumbers:
    - object:
        type: { value: home }
        number: { column: tel, transforms: [phone] }   # Dutch numbers
`;

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'cli-upgrade-'));
  writeFileSync(join(work, 'p.csv'), 'id;voorletters;naam;tel\n1;J.;Jansen;06-12345678\n2;P.;Smit;+44 20 7946 0958\n');
  writeFileSync(join(work, 'persons.yaml'), MAPPING);
  writeFileSync(
    join(work, 'old.yaml'),
    "name: old\nsources:\n  - { name: p, format: csv, path: p.csv, csv: { delimiter: ';' }, mapping: persons.yaml }\ntarget: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }\n",
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('stagecoach upgrade', () => {
  it('refuses the old pipeline at load time, upgrades it keeping its meaning, then plans it', async () => {
    const refused = await runCli(['plan', 'old.yaml'], { cwd: work });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('old.yaml: written for pipeline language 1 (it states no language:)');
    expect(refused.stderr).toContain('persons.yaml:9:45: phone without a region');
    expect(refused.stderr).toContain('old.yaml:3:24: CSV source: language 1 read a stray quote inside a field as text');
    expect(refused.stderr).toContain('`stagecoach upgrade old.yaml` rewrites the files to language 2');

    const dry = await runCli(['upgrade', 'old.yaml', '--dry-run'], { cwd: work });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would upgrade (--dry-run, nothing written) old.yaml from pipeline language 1 to 2');
    expect(readFileSync(join(work, 'persons.yaml'), 'utf8')).toBe(MAPPING);

    const done = await runCli(['upgrade', 'old.yaml', '--json'], { cwd: work });
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ from: 1, to: 2, written: true });
    expect(readFileSync(join(work, 'old.yaml'), 'utf8')).toContain('quotes: relaxed');
    expect(readFileSync(join(work, 'persons.yaml'), 'utf8')).toBe(
      MAPPING.replace('transforms: [phone] }', 'transforms: [{ phone: { region: NL, check: possible } }] }'),
    );

    const plan = await runCli(['plan', 'old.yaml', '--json'], { cwd: work });
    expect(plan.code).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ rowsRead: 2, mapped: 2, rejected: 0 });
    const again = await runCli(['upgrade', 'old.yaml'], { cwd: work });
    expect(again.stdout).toBe('old.yaml is written for pipeline language 2: nothing to upgrade\n');
  });
});
