/**
 * Child sources (issue 46): a parent file and child files whose rows carry the parent's key,
 * joined into the parent's lists whatever their order, each child row accounted for: attached,
 * or refused with its file:line as an orphan, a duplicate, or a child of a refused parent.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline, readPipeline } from '../../src/pipeline/read-pipeline.js';
import type { ChildTally } from '../../src/pipeline/checks/child-tally.js';
import type { SourceTally } from '../../src/pipeline/source/index.js';

const PIPELINE = `name: dump
language: 2
sources:
  - name: klanten
    format: csv
    path: klanten.csv
    mapping: klanten.yaml
  - name: adressen
    format: csv
    path: adressen.csv
    csv: { delimiter: ';' }
    mapping: adres.yaml
    child: { of: klanten, key: KLANTNR, into: addresses, id: ADRESNR }
  - name: telefoons
    format: jsonl
    path: telefoons.jsonl
    mapping: telefoon.yaml
    child: { of: klanten, key: klant, into: telephoneNumbers }
target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }
checks: { missingRelationTarget: allow }
`;
const PARENT_MAPPING = `type: person
key: { column: nr, scope: klant }
record:
  surname: { column: naam, required: true }
  initials: { column: init, required: true }
`;
const ADDRESS_MAPPING = `item:
  object:
    referenceId: { referenceId: { suffix: 'address/{index}' } }
    type: { value: main }
    addressLine1: STRAAT
    postalCode: { column: PC, transforms: [postcode-nl] }
    locality: PLAATS
    countryCode: { column: LAND, transforms: [{ code: land }] }
codes:
  land: { NL: NL, NEDERLAND: NL, B: BE }
`;
const PHONE_MAPPING = `item:
  object:
    type: { value: home }
    number: { column: nummer, transforms: [{ phone: { region: NL } }] }
`;

function dump(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'children-'));
  const all = {
    'pipeline.yaml': PIPELINE,
    'klanten.yaml': PARENT_MAPPING,
    'adres.yaml': ADDRESS_MAPPING,
    'telefoon.yaml': PHONE_MAPPING,
    ...files,
  };
  for (const [name, text] of Object.entries(all)) writeFileSync(join(dir, name), text);
  return join(dir, 'pipeline.yaml');
}

const KLANTEN = 'nr,naam,init\n1,Jansen,J.\n2,Bakker,B.\n3,Visser,V.\n';
// Unsorted, an orphan (9), a duplicate id (A2 twice for klant 1), and a bad postcode for klant 3.
const ADRESSEN = [
  'ADRESNR;KLANTNR;STRAAT;PC;PLAATS;LAND',
  'A3;2;Kade 1;1234 AB;Delft;NL',
  'A1;1;Dorpsstraat 1;1111 AA;Ede;NEDERLAND',
  'A9;9;Nergens 9;9999 ZZ;Weert;NL',
  'A2;1;Markt 2;2222 BB;Gent;B',
  'A2;1;Markt 2;2222 BB;Gent;B',
  'A4;3;Laan 4;0123 XY;Zeist;NL',
  '',
].join('\n');
const TELEFOONS = [
  '{"klant":"2","nummer":"010-1234567"}',
  '{"klant":"1","nummer":"06-12345678"}',
  '{"klant":"1","nummer":"06-12345678"}',
  '',
].join('\n');

async function readAll(path: string) {
  const def = await loadPipeline(path);
  const childTallies: ChildTally[] = [];
  const tallies: SourceTally[] = [];
  const rows = [];
  for await (const r of readPipeline(def, { childTallies, tallies })) rows.push(r);
  return { rows, childTallies, tallies };
}

describe('child sources', () => {
  it('joins unsorted children into their parents, in file order, and refuses what cannot join with file:line', async () => {
    const { rows, childTallies, tallies } = await readAll(
      dump({ 'klanten.csv': KLANTEN, 'adressen.csv': ADRESSEN, 'telefoons.jsonl': TELEFOONS }),
    );
    const mapped = rows.filter((r) => r.kind === 'mapped');
    expect(mapped.map((r) => r.legacyKey)).toEqual(['1', '2']);
    const jansen = mapped[0]!.record!;
    expect(jansen.addresses?.map((a) => [a.addressLine1, a.countryCode])).toEqual([
      ['Dorpsstraat 1', 'NL'],
      ['Markt 2', 'BE'],
    ]);
    expect(jansen.telephoneNumbers).toEqual([{ type: 'home', number: '+31612345678' }]);
    // The join columns never reach what is kept of a row.
    expect(Object.keys(mapped[0]!.row.values!)).toEqual(['nr', 'naam', 'init']);

    const refused = rows
      .filter((r) => r.kind === 'rejected')
      .map((r) => [r.row.source, `${r.row.provenance.file.split('/').pop()}:${r.row.provenance.line}`, r.reasons[0]!.code]);
    expect(refused).toEqual([
      ['adressen', 'adressen.csv:6', 'CHILD_DUPLICATE'],
      ['telefoons', 'telefoons.jsonl:3', 'CHILD_DUPLICATE'],
      ['klanten', 'klanten.csv:4', 'INVALID_FIELD_VALUE'],
      ['adressen', 'adressen.csv:7', 'INVALID_FIELD_VALUE'],
      ['adressen', 'adressen.csv:4', 'CHILD_ORPHAN'],
    ]);
    const visser = rows.find((r) => r.kind === 'rejected' && r.row.source === 'klanten')!;
    expect(visser.kind === 'rejected' && visser.reasons[0]!.message).toMatch(/in column PC of .*adressen\.csv:7/);
    const orphan = rows.at(-1)!;
    expect(orphan.kind === 'rejected' && orphan.reasons[0]!.message).toMatch(/no row of klanten holds the key 9/);
    expect('values' in orphan.row && orphan.row.values).toEqual({
      ADRESNR: 'A9',
      KLANTNR: '9',
      STRAAT: 'Nergens 9',
      PC: '9999 ZZ',
      PLAATS: 'Weert',
      LAND: 'NL',
    });

    const adressen = childTallies.find((t) => t.source === 'adressen')!;
    expect(adressen).toMatchObject({ rowsRead: 6, attached: 4, withMappedParent: 3, withRefusedParent: 1, orphans: 1, duplicates: 1 });
    const telefoons = childTallies.find((t) => t.source === 'telefoons')!;
    expect(telefoons).toMatchObject({ rowsRead: 3, attached: 2, withMappedParent: 2, orphans: 0, duplicates: 1 });
    // Child files are counted twice like any file.
    expect(tallies.map((t) => [t.source, t.rowsRead])).toEqual([
      ['adressen', 6],
      ['telefoons', 3],
      ['klanten', 3],
    ]);
  });
});

describe('formats', () => {
  it('takes any registered format as parent and as child: a JSON Lines parent, a fixed-width child in windows-1252', async () => {
    const pipeline = `name: formats
language: 2
sources:
  - name: klanten
    format: jsonl
    path: klanten.jsonl
    mapping: klanten.yaml
  - name: adressen
    format: fixed-width
    path: adressen.txt
    encoding: windows-1252
    fixedWidth:
      columns:
        - { name: KLANTNR, start: 1, length: 4 }
        - { name: STRAAT, start: 5, length: 12 }
        - { name: PC, start: 17, length: 7 }
        - { name: PLAATS, start: 24, length: 10 }
        - { name: LAND, start: 34, length: 2 }
    mapping: adres.yaml
    child: { of: klanten, key: KLANTNR, into: addresses }
target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }
`;
    const path = dump({
      'pipeline.yaml': pipeline,
      'klanten.jsonl': '{"nr":"2","naam":"Bakker","init":"B.","@opmerking":"vip"}\n{"nr":"1","naam":"Jansen","init":"J."}\n',
    });
    // 'Café' in windows-1252: é is one byte, 0xE9.
    const fixed = ['1   Caféstraat 11111 AAEde       NL', '2   Kade 1      1234 ABDelft     NL', ''].join('\r\n');
    writeFileSync(join(path, '..', 'adressen.txt'), Buffer.from(fixed, 'latin1'));
    const { rows, childTallies } = await readAll(path);
    const records = rows.map((r) => (r.kind === 'mapped' ? [r.legacyKey, r.record!.addresses?.map((a) => a.addressLine1)] : r.kind));
    expect(records).toEqual([
      ['2', ['Kade 1']],
      ['1', ['Caféstraat 1']],
    ]);
    expect(childTallies[0]).toMatchObject({ rowsRead: 2, attached: 2, withMappedParent: 2 });
    // Only the join's columns are taken off a row: an export's own @-column stays.
    expect('values' in rows[0]!.row && rows[0]!.row.values).toEqual({ nr: '2', naam: 'Bakker', init: 'B.', '@opmerking': 'vip' });
  });
});

describe('child mapping files', () => {
  it('holds an item to the fields of the list it goes into, at its line, as a mapping file is held', async () => {
    const misspelt = ADDRESS_MAPPING.replace('addressLine1: STRAAT', 'addresLine1: STRAAT');
    await expect(loadPipeline(dump({ 'adres.yaml': misspelt }))).rejects.toThrow(
      /adres\.yaml:5:\d+: item\.object\.addresLine1: addresses \(an object\) has no field "addresLine1": staging would drop it/,
    );
    const noTable = ADDRESS_MAPPING.replace('{ code: land }', '{ code: landen }');
    await expect(loadPipeline(dump({ 'adres.yaml': noTable }))).rejects.toThrow(
      /adres\.yaml:8:\d+: item\.object\.countryCode\.transforms\[0\]: unknown code table "landen"/,
    );
  });
});

describe('children of children, and declarations', () => {
  const GRAND = `name: dump
language: 2
sources:
  - name: klanten
    format: csv
    path: klanten.csv
    mapping: klanten.yaml
  - name: contacten
    format: json
    path: contacten.json
    mapping: contact.yaml
    child: { of: klanten, key: klant, into: associatedParties, id: id }
  - name: contacttelefoons
    format: csv
    path: ct.csv
    mapping: ct.yaml
    child: { of: contacten, key: contact, into: phones }
target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }
`;
  const files = {
    'pipeline.yaml': GRAND,
    'klanten.csv': KLANTEN,
    'contacten.json': JSON.stringify([
      { id: 'C2', klant: '2', naam: 'Piet' },
      { id: 'C1', klant: '1', naam: 'Anna' },
      { id: 'C3', klant: '1', naam: 'Bert' },
    ]),
    'ct.csv': 'contact,nr\nC3,0301\nC1,0101\nC9,0909\nC1,0102\n',
    'contact.yaml': 'item:\n  object:\n    name: naam\n',
    'ct.yaml': 'item: { column: nr }\n',
  };

  it('joins a child of a child into the list of its parent item, and reports its orphans', async () => {
    const { rows, childTallies } = await readAll(dump(files));
    const jansen = rows.find((r) => r.kind === 'mapped' && r.legacyKey === '1');
    expect(jansen?.kind === 'mapped' && jansen.record!.associatedParties).toEqual([
      { name: 'Anna', phones: ['0101', '0102'] },
      { name: 'Bert', phones: ['0301'] },
    ]);
    const orphan = rows.find((r) => r.row.source === 'contacttelefoons');
    expect(orphan?.kind === 'rejected' && orphan.reasons[0]!.message).toMatch(/no row of contacten holds the key C9/);
    expect(childTallies.find((t) => t.source === 'contacttelefoons')).toMatchObject({ rowsRead: 4, attached: 3, orphans: 1 });
  });

  it('refuses declarations that cannot join, at their line', async () => {
    const bad = GRAND.replace('of: klanten, key: klant, into: associatedParties, id: id', 'of: klant, key: klant, into: associatedParties');
    await expect(loadPipeline(dump({ ...files, 'pipeline.yaml': bad }))).rejects.toThrow(
      /pipeline\.yaml:12:\d+: sources\[1\]\.child\.of: no source "klant" in this pipeline, expected one of klanten, contacttelefoons/,
    );
    const noId = GRAND.replace(', id: id }', ' }');
    await expect(loadPipeline(dump({ ...files, 'pipeline.yaml': noId }))).rejects.toThrow(
      /sources\[2\]\.child\.of: contacten is a child source without an id, so no row can name one of its rows as parent; declare child\.id on contacten/,
    );
    const cycle = GRAND.replace('of: klanten, key: klant', 'of: contacttelefoons, key: klant');
    await expect(loadPipeline(dump({ ...files, 'pipeline.yaml': cycle }))).rejects.toThrow(/contacten is its own ancestor/);
  });
});
