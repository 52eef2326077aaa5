import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';

// `plan` through the real CLI on a JSON export as lenders' systems write it: numbers where
// staging takes text (KvK and house numbers), a boolean flag, and an array of directors that
// `each` turns into relations. Before `each` and coercion, every organisation was refused
// ("refused by the staging schema, got `3`") and the directors had no declarative mapping.

interface Sample {
  file: string;
  line: number;
  code: string;
  field: string;
  message: string;
  trace?: string;
}

let work: string;

const organisations = [
  {
    kvk: 30000017,
    naam: 'Garage Vries V.O.F.',
    actief: true,
    adres: { straat: 'Schoolstraat', huisnummer: 3, postcode: '1386 BE', plaats: 'Almere' },
    bestuurders: [{ klantnr: 100054 }, { klantnr: '100085' }],
  },
  {
    kvk: 30000034,
    naam: 'Drukkerij Mulder',
    actief: false,
    adres: { straat: 'Dorpsstraat', huisnummer: 12, postcode: '6547 HW', plaats: 'Nijmegen' },
    bestuurders: [{ klantnr: '100054' }, { naam: 'zonder nummer' }, { klantnr: '999999' }],
  },
  {
    kvk: 30000051,
    naam: 'Bakkerij Smit',
    actief: true,
    adres: { straat: 'Kerkweg', huisnummer: true, postcode: '1234 AB', plaats: 'Ede' },
    bestuurders: [],
  },
];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'cli-plan-json-'));
  mkdirSync(join(work, 'export'));
  // one object per line, so each organisation's line is known: 2, 3, 4
  writeFileSync(join(work, 'export', 'organisaties.json'), `[\n${organisations.map((o) => JSON.stringify(o)).join(',\n')}\n]\n`);
  writeFileSync(
    join(work, 'export', 'personen.json'),
    JSON.stringify([
      { nr: 100054, naam: 'Jansen' },
      { nr: 100085, naam: 'Pietersen' },
    ]),
  );
  writeFileSync(
    join(work, 'personen.yaml'),
    `type: person
key: { column: nr, scope: persoon }
record:
  initials: { value: J. }
  surname: naam
`,
  );
  writeFileSync(
    join(work, 'organisaties.yaml'),
    `type: organisation
key: { column: kvk, scope: organisatie }
record:
  organisationName: naam
  cocNumber: kvk
  isActive: actief
  addresses:
    - object:
        referenceId: { referenceId: { suffix: address/main } }
        type: { value: main }
        addressLine1: adres.straat
        houseNumber: adres.huisnummer
        postalCode: { column: adres.postcode, transforms: [postcode-nl] }
        locality: adres.plaats
        countryCode: { value: NL }
  relations:
    each: bestuurders
    item:
      when: { column: klantnr, notEmpty: true }
      object:
        to: { referenceId: { column: klantnr, scope: persoon } }
        type: { value: isDirectorOf }
`,
  );
  writeFileSync(
    join(work, 'pipeline.yaml'),
    `name: json-export
language: 2
component: Counterparties
sources:
  - { name: personen, format: json, path: export/personen.json, mapping: personen.yaml }
  - { name: organisaties, format: json, path: export/organisaties.json, mapping: organisaties.yaml }
target:
  referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f
`,
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('stagecoach plan on a JSON export with numbers and an array of directors', () => {
  it('stages numeric values as text, maps each director to a relation, and names file:line, field, item and value of each refusal', async () => {
    const res = await runCli(['plan', join(work, 'pipeline.yaml'), '--json', '--reveal']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const s = JSON.parse(res.stdout) as { rowsRead: number; mapped: number; rejected: number; samples: Sample[] };
    expect([s.rowsRead, s.mapped, s.rejected]).toEqual([5, 3, 2]);
    const file = join(work, 'export', 'organisaties.json');
    expect(s.samples.map((x) => ({ ...x, file: x.file.endsWith('organisaties.json') ? file : x.file }))).toEqual([
      {
        source: 'organisaties',
        file,
        line: 3,
        legacyKey: '30000034',
        field: 'relations[1].to',
        value: '999999',
        code: 'RELATION_TARGET_MISSING',
        message:
          'relations[1].to: no source holds persoon 999999 (column bestuurders[2].klantnr), expected the key of a row in this pipeline',
      },
      {
        source: 'organisaties',
        file,
        line: 4,
        legacyKey: '30000051',
        field: 'addresses[0].houseNumber',
        value: 'true', // as the report shows it
        code: 'INVALID_FIELD_VALUE',
        message:
          'addresses[0].houseNumber: expected a string, got the boolean `true` (a { code: … } table can say what it stands for) in column adres.huisnummer',
        trace: 'column "adres.huisnummer" `true` → string: refused',
      },
    ]);
  });

  it('prints how a refused value was made under its example, masked like the message', async () => {
    const res = await runCli(['plan', join(work, 'pipeline.yaml')]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('      made by: column "adres.huisnummer" `t***` → string: refused\n');
  });
});
