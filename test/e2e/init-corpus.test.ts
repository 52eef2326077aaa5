/**
 * The corpus of foreign exports (src/pipeline/samples/foreign/): `init` runs untouched on each
 * generated export through the real CLI, and its pipeline must (a) map at least 90% of the rows
 * a hand-fixed pipeline (test/fixtures/foreign/) maps, and (b) map no value that differs from the
 * generator's truth: birth dates, phone numbers in E.164, countries and incomes, value by value,
 * read from the mapped records through the library (the same reading `plan` and `run` do).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';
import { tempDir } from '../support/service.js';
import { loadPipeline } from '../../src/pipeline/definition/load-pipeline.js';
import { readPipeline } from '../../src/pipeline/read-pipeline.js';
import { generateForeignExport, type ForeignKind, type TruthRow } from '../../src/pipeline/samples/foreign/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Mapped {
  key: string;
  record: Record<string, unknown>;
}

/** Every mapped row of a pipeline, with its legacy key and record. */
async function mappedRows(pipelineFile: string): Promise<{ read: number; mapped: Mapped[] }> {
  const def = await loadPipeline(pipelineFile);
  const mapped: Mapped[] = [];
  let read = 0;
  for await (const row of readPipeline(def)) {
    read++;
    if (row.kind === 'mapped') mapped.push({ key: row.legacyKey, record: row.record as unknown as Record<string, unknown> });
  }
  return { read, mapped };
}

/** The values of a mapped record the truth speaks about, each compared with it: a list of differences. */
function differences(m: Mapped, truth: TruthRow | undefined): string[] {
  if (!truth) return [`${m.key}: mapped, but the generator wrote no such key`];
  const r = m.record as {
    dateOfBirth?: string;
    telephoneNumbers?: Array<{ number: string }>;
    countryCode?: string;
    addresses?: Array<{ countryCode: string }>;
    income?: { amount: number };
  };
  const out: string[] = [];
  const check = (what: string, got: unknown, want: unknown) => {
    if (got !== undefined && got !== want) out.push(`${m.key}: ${what} ${JSON.stringify(got)}, truth ${JSON.stringify(want)}`);
  };
  check('dateOfBirth', r.dateOfBirth, truth.dateOfBirth);
  check('phone', r.telephoneNumbers?.[0]?.number, truth.phone);
  check('countryCode', r.countryCode, truth.country);
  check('address country', r.addresses?.[0]?.countryCode, truth.country);
  check('income', r.income?.amount, truth.income);
  return out;
}

const CSV_KINDS: Array<{ kind: ForeignKind; file: string; source: string }> = [
  { kind: 'uk-core-banking', file: 'customers.csv', source: 'customers' },
  { kind: 'us-crm', file: 'contacts.csv', source: 'contacts' },
  { kind: 'german-latin1', file: 'kunden.csv', source: 'kunden' },
  { kind: 'french-belgian', file: 'clients.csv', source: 'clients' },
];

describe('init on a corpus of foreign exports', () => {
  it.each(CSV_KINDS)(
    '$kind: the untouched pipeline maps ≥ 90% of what a hand-fixed one maps, and no value differs from the truth',
    async ({ kind, file, source }) => {
      const dir = tempDir(`stagecoach-corpus-${kind}-`);
      dirs.push(dir);
      const exp = await generateForeignExport(kind, { out: join(dir, 'export'), rows: 1200, seed: 2911, defectsPer1000: 6 });
      expect(Object.keys(exp.defects).length).toBeGreaterThanOrEqual(4);

      const init = await runCli(['init', join('export', file), '--out', 'gen', '--json'], { cwd: dir });
      expect(init.code, init.stderr).toBe(0);
      const result = JSON.parse(init.stdout) as { todos: string[]; plan: { rowsRead: number; mapped: number } };
      expect(result.plan.rowsRead).toBe(1200);
      // The planted unknown country values are named with their row counts, never guessed.
      expect(result.todos.some((t) => /countryCode: values .*`(Atlantis|Narnia|XX)` \(\d+ rows?\)/.test(t))).toBe(true);
      expect(result.todos.join('\n')).not.toMatch(/\(required/);

      // The hand-fixed pipeline: the fixture mapping on the same file.
      copyFileSync(join(ROOT, 'test/fixtures/foreign', `${kind}.yaml`), join(dir, 'hand-mapping.yaml'));
      writeFileSync(
        join(dir, 'hand.yaml'),
        [
          'language: 2',
          'name: hand',
          'component: Counterparties',
          'sources:',
          `  - { name: ${source}, format: csv, path: ${JSON.stringify(join('export', file))}, encoding: ${kind === 'german-latin1' ? 'windows-1252' : 'utf-8'}, csv: { delimiter: ${JSON.stringify(kind === 'uk-core-banking' || kind === 'us-crm' ? ',' : ';')}, header: true }, mapping: hand-mapping.yaml }`,
          'target: { migration: current, referenceNamespace: 6e54ebc8-885f-489a-a721-c73903a19b0a }',
          '',
        ].join('\n'),
      );
      const hand = await mappedRows(join(dir, 'hand.yaml'));
      const gen = await mappedRows(join(dir, 'gen/pipeline.yaml'));
      expect(gen.read).toBe(1200);
      expect(gen.mapped.length).toBe(result.plan.mapped);
      expect(hand.mapped.length).toBeGreaterThan(1100);
      expect(gen.mapped.length / hand.mapped.length).toBeGreaterThanOrEqual(0.9);

      // Zero mapped values that differ from the truth, in both pipelines (the hand one checks the fixture).
      expect(gen.mapped.flatMap((m) => differences(m, exp.truth.get(m.key)))).toEqual([]);
      expect(hand.mapped.flatMap((m) => differences(m, exp.truth.get(m.key)))).toEqual([]);
      // And the values are there to compare: birth dates and phone numbers of nearly every row.
      expect(gen.mapped.filter((m) => (m.record as { dateOfBirth?: string }).dateOfBirth).length).toBeGreaterThan(0.95 * gen.mapped.length);
      expect(gen.mapped.filter((m) => (m.record as { telephoneNumbers?: unknown[] }).telephoneNumbers?.length).length).toBeGreaterThan(
        0.95 * gen.mapped.length,
      );
      // Every planted defect row is refused or maps without the broken value (checked above): none of
      // the impossible dates is mapped at all.
      const mappedKeys = new Set(gen.mapped.map((m) => m.key));
      for (const key of exp.defects['impossible-date'] ?? [])
        expect(
          mappedKeys.has(key) ? (gen.mapped.find((m) => m.key === key)!.record as { dateOfBirth?: string }).dateOfBirth : undefined,
        ).toBeUndefined();
    },
  );

  it('reads the US birth dates month-first because the values prove it, and says so with the counts', async () => {
    const dir = tempDir('stagecoach-corpus-us-');
    dirs.push(dir);
    await generateForeignExport('us-crm', { out: join(dir, 'export'), rows: 300, seed: 7 });
    const init = await runCli(['init', 'export/contacts.csv', '--out', 'gen', '--no-plan'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    const mapping = readFileSync(join(dir, 'gen/mappings/contacts.yaml'), 'utf8');
    expect(mapping).toContain('dateOfBirth: { column: Birthdate, transforms: [{ date: [mm/dd/yyyy] }] }');
    expect(mapping).toMatch(
      /# Birthdate: 100% of its values are dates in mm\/dd\/yyyy: 300 in n\/n\/yyyy \(0 with a first part over 12 \(day-first\), \d+ with a second part over 12 \(month-first\), \d+ either way\)/,
    );
    expect(mapping).toMatch(/# {3}Lead Source: header not recognised/);
  });

  it('fixed-width: recognised without a layout (columns proposed, a TODO to name them); with the copybook it maps ≥ 90% of the hand-fixed rows, no value differs from the truth, and the trailer count is checked', async () => {
    const dir = tempDir('stagecoach-corpus-fixed-');
    dirs.push(dir);
    const exp = await generateForeignExport('fixed-width', { out: join(dir, 'export'), rows: 1200, seed: 2911, defectsPer1000: 6 });

    const bare = await runCli(['init', 'export/CUSTMAST.DAT', '--out', 'bare', '--json', '--no-plan'], { cwd: dir });
    expect(bare.code, bare.stderr).toBe(0);
    const bareJson = JSON.parse(bare.stdout) as {
      todos: string[];
      sources: Array<{ dialect: { kind: string; header: number; trailer?: unknown } }>;
    };
    expect(bareJson.sources[0]!.dialect).toMatchObject({ kind: 'fixed-width', header: 1, trailer: { count: { start: 4, length: 9 } } });
    expect(bareJson.todos[0]).toMatch(
      /^CUSTMAST: the columns of this fixed-width file are only proposed from the data \(column1 1-8, .*\); name them: stagecoach init <file> --layout <COBOL copybook or name,start,length CSV>$/,
    );

    const init = await runCli(['init', 'export/CUSTMAST.DAT', '--layout', 'export/customers.cpy', '--out', 'gen', '--json'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    const result = JSON.parse(init.stdout) as { plan: { rowsRead: number; mapped: number } };
    expect(result.plan.rowsRead).toBe(1200);

    const pipeline = readFileSync(join(dir, 'gen/pipeline.yaml'), 'utf8');
    copyFileSync(join(ROOT, 'test/fixtures/foreign/fixed-width.yaml'), join(dir, 'hand-mapping.yaml'));
    // The hand-fixed pipeline: the same source (the copybook's columns, header and trailer), the fixture mapping.
    writeFileSync(
      join(dir, 'hand.yaml'),
      pipeline
        .replace(/mapping: mappings\/CUSTMAST.yaml/, 'mapping: hand-mapping.yaml')
        .replaceAll('../export/', 'export/')
        .replace(/^name: .*$/m, 'name: hand'),
    );
    const hand = await mappedRows(join(dir, 'hand.yaml'));
    const gen = await mappedRows(join(dir, 'gen/pipeline.yaml'));
    expect(hand.mapped.length).toBeGreaterThan(1100);
    expect(gen.mapped.length / hand.mapped.length).toBeGreaterThanOrEqual(0.9);
    expect(gen.mapped.flatMap((m) => differences(m, exp.truth.get(m.key)))).toEqual([]);
    expect(hand.mapped.flatMap((m) => differences(m, exp.truth.get(m.key)))).toEqual([]);

    // A trailer that states another count than the records read is reported by plan like a cut-off file.
    const file = join(dir, 'export/CUSTMAST.DAT');
    writeFileSync(file, readFileSync(file, 'utf8').replace('TRL000001200', 'TRL000001201'));
    const plan = await runCli(['plan', 'gen/pipeline.yaml', '--stage-undecided'], { cwd: dir });
    expect(plan.stdout + plan.stderr).toContain(
      'export/CUSTMAST.DAT:1202: the trailer states 1201 records, expected the 1200 records read; the export looks cut off or padded',
    );
  });
});
