import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadPipeline } from '../../src/pipeline/definition/load-pipeline.js';
import { readPipeline, readPipelineBatches, summarisePlan } from '../../src/pipeline/read-pipeline.js';
import { KeyIndex } from '../../src/pipeline/checks/key-index.js';
import { ReferenceIds } from '../../src/pipeline/mapping/reference-ids.js';
import type { FrontRow, MappedRow } from '../../src/pipeline/types.js';

const NS = '3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f';
const ids = new ReferenceIds(NS);
let dir: string;
let shown: string;

const MAPPING = `
type: person
key: { column: nr, scope: klant }
record:
  initials: { column: voornaam, transforms: [initials] }
  surname: { column: achternaam, required: true }
  dateOfBirth: { column: geboren, transforms: [{ date: dd-mm-yyyy }] }
  relations:
    - when: { column: partner, notEmpty: true }
      object:
        to: { referenceId: { column: partner } }
        type: { value: isSignificantOtherOf }
`;
const ORG_MAPPING = `
type: organisation
key: { column: kvk, scope: bedrijf }
record:
  organisationName: naam
  cocNumber: kvk
  relations:
    - when: { column: directeur, notEmpty: true }
      object:
        to: { referenceId: { column: directeur, scope: klant } }
        type: { value: isDirectorOf }
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pipeline-checks-'));
  shown = relative(process.cwd(), dir);
  if (shown.startsWith('..')) shown = dir;
  writeFileSync(join(dir, 'persons.yaml'), MAPPING);
  writeFileSync(join(dir, 'orgs.yaml'), ORG_MAPPING);
  // partners point forward and back; 1004 duplicates 1001; 1005's partner does not exist
  writeFileSync(
    join(dir, 'a.csv'),
    [
      'nr;voornaam;achternaam;geboren;partner',
      '1001;Jan;Jansen;01-02-1970;1003',
      '1002;Ans;;31-02-1980;',
      '1003;Els;Bos;;1001',
      '1001;Kees;Dubbel;;',
      '1005;Piet;Los;;9999',
      '',
    ].join('\r\n'),
  );
  writeFileSync(join(dir, 'b.csv'), ['nr;voornaam;achternaam;geboren;partner', '1006;Zoë;Smit;;1002', '1007;Bram'].join('\n'));
  writeFileSync(
    join(dir, 'orgs.jsonl'),
    [
      JSON.stringify({ kvk: '12345678', naam: 'Bakkerij Bos B.V.', directeur: '1003' }),
      JSON.stringify({ kvk: '87654321', naam: 'Garage Vos', directeur: '4242' }),
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'p.yaml'),
    `name: t\nlanguage: 2\nsources:\n  - { name: personen, format: csv, path: '*.csv', csv: { delimiter: ';' }, mapping: persons.yaml }\n  - { name: bedrijven, format: jsonl, path: orgs.jsonl, mapping: orgs.yaml }\ntarget: { referenceNamespace: ${NS} }\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function all(gen: AsyncIterable<MappedRow>): Promise<MappedRow[]> {
  const out: MappedRow[] = [];
  for await (const r of gen) out.push(r);
  return out;
}

describe('checks before upload', () => {
  it('yields every row in source order, mapped or rejected with file:line, field, value and reason', async () => {
    const rows = await all(readPipeline(await loadPipeline(join(dir, 'p.yaml'))));
    const a = join(shown, 'a.csv');
    const b = join(shown, 'b.csv');
    expect(
      rows.map(
        (r) =>
          `${r.row.provenance.file}:${r.row.provenance.line} ${r.kind}${r.kind === 'rejected' ? ` ${r.reasons.map((x) => `${x.code}@${x.field}=${JSON.stringify(x.value)}`).join(' ')}` : ''}`,
      ),
    ).toEqual([
      `${a}:2 mapped`,
      `${a}:3 rejected MISSING_REQUIRED_FIELD@surname="" INVALID_FIELD_VALUE@dateOfBirth="31-02-1980"`,
      `${a}:4 mapped`,
      `${a}:5 rejected DUPLICATE_LEGACY_KEY@nr="1001"`,
      `${a}:6 rejected RELATION_TARGET_MISSING@relations[0].to="9999"`,
      `${b}:2 mapped`,
      `${b}:3 rejected SOURCE_ROW_INVALID@="1007;Bram"`,
      `${join(shown, 'orgs.jsonl')}:1 mapped`,
      `${join(shown, 'orgs.jsonl')}:2 rejected RELATION_TARGET_MISSING@relations[0].to="4242"`,
    ]);
    const dup = rows[3] as Extract<MappedRow, { kind: 'rejected' }>;
    expect(dup.reasons[0]!.message).toBe(`nr: duplicate legacy key klant 1001, first seen at ${a}:2`);
    expect((rows[4] as Extract<MappedRow, { kind: 'rejected' }>).reasons[0]!.message).toBe(
      'relations[0].to: no source holds klant 9999 (column partner), expected the key of a row in this pipeline',
    );
    const jan = rows[0] as Extract<MappedRow, { kind: 'mapped' }>;
    expect(jan.record).toEqual({
      referenceId: ids.of('klant', '1001'),
      type: 'person',
      initials: 'J.',
      surname: 'Jansen',
      dateOfBirth: '1970-02-01',
      relations: [{ to: ids.of('klant', '1003'), type: 'isSignificantOtherOf' }],
    });
    expect([jan.legacyKey, jan.referenceId, jan.component]).toEqual(['1001', ids.of('klant', '1001'), 'Counterparties']);
    const org = rows[7] as Extract<MappedRow, { kind: 'mapped' }>;
    expect(org.record).toMatchObject({ type: 'organisation', relations: [{ to: ids.of('klant', '1003'), type: 'isDirectorOf' }] });
  });

  it('passes the records the staging schema refuses as rejects with its codes', async () => {
    writeFileSync(join(dir, 'bare.yaml'), 'type: person\nkey: { column: nr, scope: klant }\nrecord:\n  surname: achternaam\n');
    writeFileSync(
      join(dir, 'bare-p.yaml'),
      `name: t\nlanguage: 2\nsources:\n  - { name: personen, format: csv, path: a.csv, csv: { delimiter: ';' }, mapping: bare.yaml }\ntarget: { referenceNamespace: ${NS} }\n`,
    );
    const rows = await all(readPipeline(await loadPipeline(join(dir, 'bare-p.yaml'))));
    expect((rows[0] as Extract<MappedRow, { kind: 'rejected' }>).reasons).toEqual([
      { field: 'initials', value: undefined, code: 'MISSING_REQUIRED_FIELD', message: 'initials: required by staging, got nothing' },
    ]);
  });

  it('gives the same verdicts without keeping the records (plan), and keeps none', async () => {
    // The second pipeline's records all fail the staging schema itself (no initials).
    writeFileSync(join(dir, 'no-initials.yaml'), 'type: person\nkey: { column: nr, scope: klant }\nrecord:\n  surname: achternaam\n');
    writeFileSync(
      join(dir, 'no-initials-p.yaml'),
      `name: t\nlanguage: 2\nsources:\n  - { name: personen, format: csv, path: a.csv, csv: { delimiter: ';' }, mapping: no-initials.yaml }\ntarget: { referenceNamespace: ${NS} }\n`,
    );
    const verdict = (r: FrontRow) => [r.kind, r.row.provenance.line, r.kind === 'rejected' ? r.reasons : r.referenceId];
    for (const [file, mapped] of [
      ['p.yaml', 4],
      ['no-initials-p.yaml', 0],
    ] as const) {
      const def = await loadPipeline(join(dir, file));
      const kept = await all(readPipeline(def));
      const counted: FrontRow[] = [];
      for await (const rows of readPipelineBatches(def, { keepRecords: false })) counted.push(...rows);
      expect(counted.map(verdict)).toEqual(kept.map(verdict));
      expect(kept.filter((r) => r.kind === 'mapped' && r.record !== undefined)).toHaveLength(mapped);
      expect(counted.filter((r) => 'record' in r)).toEqual([]);
    }
  });

  it('allows relations to keys outside the pipeline when the pipeline says so', async () => {
    writeFileSync(
      join(dir, 'allow.yaml'),
      `name: t\nlanguage: 2\nsources:\n  - { name: bedrijven, format: jsonl, path: orgs.jsonl, mapping: orgs.yaml }\ntarget: { referenceNamespace: ${NS} }\nchecks: { missingRelationTarget: allow }\n`,
    );
    const rows = await all(readPipeline(await loadPipeline(join(dir, 'allow.yaml'))));
    expect(rows.map((r) => r.kind)).toEqual(['mapped', 'mapped']);
  });

  it('summarises a plan: counts, rejects by reason, examples', async () => {
    const s = await summarisePlan(await loadPipeline(join(dir, 'p.yaml')), { samplesPerReason: 1 });
    expect([s.rowsRead, s.mapped, s.rejected]).toEqual([9, 4, 5]);
    expect(s.rejectedByReason).toEqual({
      MISSING_REQUIRED_FIELD: 1,
      DUPLICATE_LEGACY_KEY: 1,
      RELATION_TARGET_MISSING: 2,
      SOURCE_ROW_INVALID: 1,
    });
    expect(s.reasons).toEqual({
      MISSING_REQUIRED_FIELD: 1,
      INVALID_FIELD_VALUE: 1,
      DUPLICATE_LEGACY_KEY: 1,
      RELATION_TARGET_MISSING: 2,
      SOURCE_ROW_INVALID: 1,
    });
    expect(s.bySource).toEqual({ personen: { rowsRead: 7, mapped: 3, rejected: 4 }, bedrijven: { rowsRead: 2, mapped: 1, rejected: 1 } });
    expect(s.samples.map((x) => `${x.code} ${x.line}`)).toEqual([
      'MISSING_REQUIRED_FIELD 3',
      'INVALID_FIELD_VALUE 3',
      'DUPLICATE_LEGACY_KEY 5',
      'RELATION_TARGET_MISSING 6',
      'SOURCE_ROW_INVALID 3',
    ]);
  });

  it('re-reads only the rows of a corrections file, still checking relations against all sources', async () => {
    writeFileSync(
      join(dir, 'fix.csv'),
      [
        '_source;nr;voornaam;achternaam;geboren;partner;_code',
        'personen;1002;Ans;Bakker;28-02-1980;;MISSING_REQUIRED_FIELD',
        'personen;1008;Kees;Dubbel;;1003;DUPLICATE_LEGACY_KEY',
      ].join('\n'),
    );
    const rows = await all(readPipeline(await loadPipeline(join(dir, 'p.yaml')), { corrections: join(dir, 'fix.csv') }));
    expect(rows.map((r) => [r.kind, r.legacyKey, r.row.provenance.line])).toEqual([
      ['mapped', '1002', 2],
      ['mapped', '1008', 3],
    ]);
    expect((rows[1] as Extract<MappedRow, { kind: 'mapped' }>).record.relations).toEqual([
      { to: ids.of('klant', '1003'), type: 'isSignificantOtherOf' },
    ]);
  });

  it('stops when the signal is aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(all(readPipeline(await loadPipeline(join(dir, 'p.yaml')), { signal: ac.signal }))).rejects.toThrow('Reading stopped');
  });
});

describe('key index', () => {
  it('remembers the first location of a key and reports it for the next', () => {
    const index = new KeyIndex(4);
    for (let i = 0; i < 5000; i++) expect(index.add('k', String(i), 0, i + 1)).toBeUndefined();
    expect(index.add('k', '17', 1, 9)).toEqual({ fileIndex: 0, line: 18 });
    expect(index.add('other-scope', '17', 1, 9)).toBeUndefined();
    expect([index.has('k', '4999'), index.has('k', '5000'), index.size]).toEqual([true, false, 5001]);
  });

  it('lets a key pass mark keys whose first location the second pass then records', () => {
    const index = new KeyIndex();
    index.mark('k', 'a');
    index.mark('k', 'a');
    expect(index.has('k', 'a')).toBe(true);
    expect(index.add('k', 'a', 2, 7)).toBeUndefined();
    expect(index.add('k', 'a', 2, 9)).toEqual({ fileIndex: 2, line: 7 });
  });

  it('keeps file indexes once a second file appears, across growth (they take no room before)', () => {
    const index = new KeyIndex(4);
    for (let i = 0; i < 3000; i++) index.add('k', `a${i}`, 0, i + 1);
    const oneFile = index.bytes;
    for (let i = 0; i < 3000; i++) index.add('k', `b${i}`, 2, i + 1);
    expect(index.add('k', 'a2999', 5, 1)).toEqual({ fileIndex: 0, line: 3000 });
    expect(index.add('k', 'b0', 5, 1)).toEqual({ fileIndex: 2, line: 1 });
    expect(index.add('k', 'b2999', 5, 1)).toEqual({ fileIndex: 2, line: 3000 });
    expect(oneFile / 8192).toBe(10);
    expect(index.bytes / 16384).toBe(12);
  });
});

describe('key index after a key pass (marked keys, spilled past their buffer)', () => {
  /** A seeded stream of keys with repeats, and the truth a Map of strings gives. */
  function keysWithRepeats(n: number, seed: number): string[] {
    let x = seed;
    const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 1_000_000) / 1_000_000;
    const keys: string[] = [];
    for (let i = 0; i < n; i++) keys.push(i > 0 && next() < 0.02 ? keys[Math.floor(next() * i)]! : `K${Math.floor(next() * 1e9)}-${i}`);
    return keys;
  }

  for (const [label, lengths] of [
    ['held in memory', {}],
    ['spilled to scratch runs', { run: 97, block: 8 }],
  ] as const) {
    it(`reports exactly the rows a Map of every key reports (${label})`, () => {
      const keys = keysWithRepeats(5000, 7);
      const index = new KeyIndex(1024, lengths);
      for (const k of keys) index.mark('klant', k);
      const truth = new Map<string, number>();
      const reported: Array<[number, number | undefined]> = [];
      const expected: Array<[number, number | undefined]> = [];
      keys.forEach((k, i) => {
        const first = index.add('klant', k, 0, i + 1);
        reported.push([i + 1, first?.line]);
        expected.push([i + 1, truth.get(k)]);
        if (!truth.has(k)) truth.set(k, i + 1);
      });
      expect(expected.filter(([, f]) => f !== undefined).length).toBeGreaterThan(50);
      expect(reported).toEqual(expected);
      expect(index.spilled).toBe(label === 'spilled to scratch runs');
      const present = keys.filter((_, i) => i % 7 === 0);
      expect(present.every((k) => index.has('klant', k))).toBe(true);
      expect(['K-1', 'nope', ...present.map((k) => `${k}x`)].some((k) => index.has('klant', k))).toBe(false);
      expect(index.has('relatie', keys[0]!)).toBe(false);
      index.close();
    });
  }

  it('gives a marked key not yet added line 0, takes keys marked after sealing, and removes its scratch files on close', () => {
    const index = new KeyIndex(1024, { run: 4, block: 2 });
    for (const k of ['a', 'b', 'c', 'd', 'e', 'a', 'f', 'g', 'h', 'i']) index.mark('k', k);
    expect(index.get('k', 'c')).toEqual({ fileIndex: 0, line: 0 });
    expect(index.add('k', 'a', 3, 12)).toBeUndefined();
    expect(index.get('k', 'a')).toEqual({ fileIndex: 3, line: 12 });
    expect(index.add('k', 'a', 4, 2)).toEqual({ fileIndex: 3, line: 12 });
    expect(index.get('k', 'z')).toBeUndefined();
    index.mark('k', 'z');
    expect([index.has('k', 'z'), index.get('k', 'z')]).toEqual([true, { fileIndex: 0, line: 0 }]);
    const scratch = readdirSync(tmpdir()).filter((d) => d.startsWith('stagecoach-keys-'));
    index.close();
    const after = readdirSync(tmpdir()).filter((d) => d.startsWith('stagecoach-keys-'));
    expect(scratch.length - after.length).toBe(1);
  });
});
