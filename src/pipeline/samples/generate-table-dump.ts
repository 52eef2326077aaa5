/**
 * A deterministic generator of a legacy table dump (issue 46): a core-banking system's
 * `klanten.csv` beside its child tables `adressen.csv` (`;`, an id per address) and
 * `telefoons.jsonl` (another format, no id), each child row carrying its customer's key, the
 * children in another order than their parents (two addresses and two phone numbers per
 * customer, each written in its own permutation of the customers). Seeded: the same options
 * give the same bytes; streamed with backpressure, so a million customers take constant memory.
 *
 * With `defects`, planted at known lines and listed in `defects.json` (what `plan` and `run`
 * must report there): orphans (a customer key no customer holds, an empty one), duplicates (an
 * address id twice, a phone row repeated exactly), an unreadable address row, a refused
 * customer (no surname) whose children are refused with it, and an address whose postcode
 * refuses its customer. With `flat`, also `klanten-plat.csv`: the same records as one flat
 * file (two address and two phone column groups per customer), for the bench's comparison.
 */
import { LANGUAGE_VERSION } from '../definition/language.js';
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng, Sink } from './generate-crm.js';

export interface GenerateTableDumpOptions {
  out: string;
  customers: number;
  seed?: number;
  /** Plant the defects (see the module comment); default true. */
  defects?: boolean;
  /** Also write the same records as one flat file, with its pipeline (`pipeline-flat.yaml`). */
  flat?: boolean;
}

/** A planted defect, or a row refused because of one, where `plan` must report it. */
export interface DumpDefect {
  kind:
    | 'refused-by-child'
    | 'orphan'
    | 'orphan-empty-key'
    | 'duplicate-id'
    | 'duplicate-row'
    | 'unreadable'
    | 'refused-parent'
    | 'bad-child-value'
    | 'child-of-refused-parent';
  source: 'klanten' | 'adressen' | 'telefoons';
  file: string;
  line: number;
  code: string;
}

export interface GenerateTableDumpResult {
  files: string[];
  defects: DumpDefect[];
  /** Rows written per file (what `plan` must read). */
  rows: Record<string, number>;
}

const SURNAMES = ['Jansen', 'de Vries', 'Bakker', 'Visser', 'Smit', 'Meijer', 'de Boer', 'Mulder', 'de Groot', 'Bos', 'Vos', 'Peters'];
const STREETS = ['Dorpsstraat', 'Kerkstraat', 'Molenweg', 'Stationsweg', 'Schoolstraat', 'Julianalaan', 'Beatrixstraat', 'Markt'];
const PLACES = ['Utrecht', 'Amersfoort', 'Zwolle', 'Delft', 'Haarlem', 'Leiden', 'Gouda', 'Ede'];

const PIPELINE = (flat: boolean) => `# yaml-language-server: $schema=../../schemas/pipeline.schema.json
# A table dump: customers, and two child tables joined into their records (docs/pipelines.md, "Child sources").
name: table-dump${flat ? '-flat' : ''}
language: ${LANGUAGE_VERSION}
sources:
  - name: klanten
    format: csv
    path: ${flat ? 'klanten-plat.csv' : 'klanten.csv'}
    csv: { delimiter: ';' }
    mapping: ${flat ? 'klant-plat.yaml' : 'klant.yaml'}
${
  flat
    ? ''
    : `  - name: adressen
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
`
}target: { referenceNamespace: 5b0c3a4e-6f1d-5a2b-9c8e-7d6f5e4a3b2c }
checks: { missingRelationTarget: allow }
`;

const CUSTOMER_FIELDS = `  initials: { column: VOORLETTERS, required: true }
  surname: { column: NAAM, required: true }
  dateOfBirth: { column: GEBDAT, transforms: [{ date: yyyymmdd }] }`;
const CUSTOMER_MAPPING = `# yaml-language-server: $schema=../../schemas/mapping.schema.json
type: person
key: { column: KLANTNR, scope: kernbank }
record:
${CUSTOMER_FIELDS}
`;
const ADDRESS_MAPPING = `# yaml-language-server: $schema=../../schemas/child-mapping.schema.json
# One row of adressen.csv: one address of its customer; {index} is its place in the customer's list.
item:
  object:
    referenceId: { referenceId: { suffix: 'address/{index}' } }
    type: { value: residential }
    addressLine1: STRAAT
    houseNumber: HUISNR
    postalCode: { column: PC, transforms: [postcode-nl] }
    locality: PLAATS
    countryCode: { value: NL }
`;
const PHONE_MAPPING = `# yaml-language-server: $schema=../../schemas/child-mapping.schema.json
item:
  object:
    type: { column: soort }
    number: { column: nummer, transforms: [{ phone: { region: NL } }] }
`;
const FLAT_MAPPING = `# yaml-language-server: $schema=../../schemas/mapping.schema.json
type: person
key: { column: KLANTNR, scope: kernbank }
record:
${CUSTOMER_FIELDS}
  addresses:
${[1, 2]
  .map(
    (n) => `    - object:
        referenceId: { referenceId: { suffix: 'address/${n - 1}' } }
        type: { value: residential }
        addressLine1: STRAAT${n}
        houseNumber: HUISNR${n}
        postalCode: { column: PC${n}, transforms: [postcode-nl] }
        locality: PLAATS${n}
        countryCode: { value: NL }`,
  )
  .join('\n')}
  telephoneNumbers:
${[1, 2]
  .map(
    (n) => `    - object:
        type: { column: SOORT${n} }
        number: { column: NUMMER${n}, transforms: [{ phone: { region: NL } }] }`,
  )
  .join('\n')}
`;

/** A bijection of 0..n-1 (multiplier coprime to n): a customer order unlike the file's, streamed. */
function permutation(n: number, rng: Rng): (i: number) => number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let a = rng.int(Math.floor(n / 3), Math.max(Math.floor(n / 3), n - 1)) | 1;
  while (n > 1 && gcd(a, n) !== 1) a++;
  const c = rng.int(0, Math.max(0, n - 1));
  return (i) => (a * i + c) % n;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

interface Customer {
  key: string;
  initials: string;
  surname: string;
  born: string;
  addresses: { id: string; street: string; no: string; pc: string; place: string }[];
  phones: { soort: string; nummer: string }[];
}

/** Customer i, the same for the same seed and i (so the child files can be written apart from it). */
function customer(seed: number, i: number): Customer {
  const rng = new Rng(seed * 1_000_003 + i);
  const letters = (n: number) => String.fromCharCode(65 + (n % 26));
  // Initials from i and the surname from its high digits: no two customers are one identity.
  const initials = `${letters(i)}.${letters(Math.floor(i / 26))}.${letters(Math.floor(i / 676))}.`;
  const surname = `${SURNAMES[Math.floor(i / 17_576) % SURNAMES.length]}${i >= 17_576 * SURNAMES.length ? `-${Math.floor(i / (17_576 * SURNAMES.length))}` : ''}`;
  const born = `${rng.int(1940, 2002)}${pad(rng.int(1, 12), 2)}${pad(rng.int(1, 28), 2)}`;
  const pc = () => `${rng.int(1000, 9999)} ${String.fromCharCode(65 + rng.int(0, 17))}${String.fromCharCode(65 + rng.int(0, 25))}`;
  const addresses = [0, 1].map((k) => ({
    id: `A${100000 + i}-${k + 1}`,
    street: rng.pick(STREETS),
    no: String(rng.int(1, 250)),
    pc: pc().replace(/^(\d{4}) S[ADS]$/, '$1 AB'),
    place: rng.pick(PLACES),
  }));
  const phones = [
    { soort: 'mobile', nummer: `06-1${pad(rng.int(0, 9_999_999), 7)}` },
    { soort: 'home', nummer: `010-${rng.int(2, 5)}${pad(rng.int(0, 999_999), 6)}` },
  ];
  return { key: String(100000 + i), initials, surname, born, addresses, phones };
}

/** Which customers carry which planted defect (none without `defects`). */
function plantedAt(n: number, rng: Rng, defects: boolean) {
  if (!defects || n < 10) return { refused: -1, badPostcode: -1, dupAddress: -1, dupPhone: -1, unreadable: -1 };
  const pick = new Set<number>();
  const one = () => {
    let i = rng.int(0, n - 1);
    while (pick.has(i)) i = (i + 1) % n;
    pick.add(i);
    return i;
  };
  return { refused: one(), badPostcode: one(), dupAddress: one(), dupPhone: one(), unreadable: one() };
}

/**
 * Writes the dump, `pipeline.yaml` with its mappings, and `defects.json`.
 * @example await generateTableDump({ out: 'samples/table-dump', customers: 60, seed: 46 })
 */
export async function generateTableDump(options: GenerateTableDumpOptions): Promise<GenerateTableDumpResult> {
  const { out, customers: n } = options;
  const seed = options.seed ?? 46;
  const rng = new Rng(seed);
  await mkdir(out, { recursive: true });
  const at = plantedAt(n, rng, options.defects !== false);
  const defects: DumpDefect[] = [];
  const rows: Record<string, number> = {};
  const open = (name: string) => new Sink(createWriteStream(join(out, name)), 'utf-8');

  // Customers, in key order (and the flat file beside them).
  const klanten = open('klanten.csv');
  const flat = options.flat ? open('klanten-plat.csv') : undefined;
  await klanten.write('KLANTNR;VOORLETTERS;NAAM;GEBDAT\n');
  await flat?.write(
    'KLANTNR;VOORLETTERS;NAAM;GEBDAT;STRAAT1;HUISNR1;PC1;PLAATS1;STRAAT2;HUISNR2;PC2;PLAATS2;SOORT1;NUMMER1;SOORT2;NUMMER2\n',
  );
  let line = 1;
  for (let i = 0; i < n; i++) {
    const c = customer(seed, i);
    line++;
    const surname = i === at.refused ? '' : c.surname;
    if (i === at.refused)
      defects.push({ kind: 'refused-parent', source: 'klanten', file: 'klanten.csv', line, code: 'MISSING_REQUIRED_FIELD' });
    if (i === at.badPostcode)
      defects.push({ kind: 'refused-by-child', source: 'klanten', file: 'klanten.csv', line, code: 'INVALID_FIELD_VALUE' });
    await klanten.write(`${c.key};${c.initials};${surname};${c.born}\n`);
    if (flat) {
      const a = c.addresses.flatMap((x) => [x.street, x.no, x.pc, x.place]);
      const p = c.phones.flatMap((x) => [x.soort, x.nummer]);
      await flat.write(`${[c.key, c.initials, c.surname, c.born, ...a, ...p].join(';')}\n`);
    }
  }
  rows['klanten.csv'] = n;
  await klanten.close();
  await flat?.close();

  // Addresses: the first of every customer in one order, the second in another.
  const adressen = open('adressen.csv');
  await adressen.write('ADRESNR;KLANTNR;STRAAT;HUISNR;PC;PLAATS\n');
  line = 1;
  let written = 0;
  const refusedParent = (i: number) => i === at.refused || i === at.badPostcode;
  for (const k of [0, 1]) {
    const order = permutation(n, rng);
    for (let j = 0; j < n; j++) {
      const i = order(j);
      const c = customer(seed, i);
      const a = c.addresses[k]!;
      const bad = i === at.badPostcode && k === 1;
      const text = `${a.id};${c.key};${a.street};${a.no};${bad ? '0123 AB' : a.pc};${a.place}\n`;
      line++;
      written++;
      await adressen.write(text);
      if (bad) defects.push({ kind: 'bad-child-value', source: 'adressen', file: 'adressen.csv', line, code: 'INVALID_FIELD_VALUE' });
      else if (refusedParent(i))
        defects.push({ kind: 'child-of-refused-parent', source: 'adressen', file: 'adressen.csv', line, code: 'CHILD_PARENT_REFUSED' });
      if (i === at.dupAddress && k === 0) {
        line++;
        written++;
        await adressen.write(text);
        defects.push({ kind: 'duplicate-id', source: 'adressen', file: 'adressen.csv', line, code: 'CHILD_DUPLICATE' });
      }
      if (i === at.unreadable && k === 1) {
        line++;
        written++;
        await adressen.write(`${a.id}-X;${c.key};${a.street}\n`);
        defects.push({ kind: 'unreadable', source: 'adressen', file: 'adressen.csv', line, code: 'SOURCE_ROW_INVALID' });
      }
    }
  }
  if (at.refused >= 0) {
    line++;
    written++;
    await adressen.write(`A999999-1;999999;Nergensweg;1;1234 AB;Utrecht\n`);
    defects.push({ kind: 'orphan', source: 'adressen', file: 'adressen.csv', line, code: 'CHILD_ORPHAN' });
  }
  rows['adressen.csv'] = written;
  await adressen.close();

  // Phone numbers, JSON Lines, without an id: a repeated row is the duplicate.
  const telefoons = open('telefoons.jsonl');
  line = 0;
  written = 0;
  for (const k of [0, 1]) {
    const order = permutation(n, rng);
    for (let j = 0; j < n; j++) {
      const i = order(j);
      const c = customer(seed, i);
      const text = `${JSON.stringify({ klant: c.key, ...c.phones[k]! })}\n`;
      line++;
      written++;
      await telefoons.write(text);
      if (refusedParent(i))
        defects.push({ kind: 'child-of-refused-parent', source: 'telefoons', file: 'telefoons.jsonl', line, code: 'CHILD_PARENT_REFUSED' });
      if (i === at.dupPhone && k === 1) {
        line++;
        written++;
        await telefoons.write(text);
        defects.push({ kind: 'duplicate-row', source: 'telefoons', file: 'telefoons.jsonl', line, code: 'CHILD_DUPLICATE' });
      }
    }
  }
  if (at.refused >= 0) {
    line++;
    written++;
    await telefoons.write(`${JSON.stringify({ klant: '', soort: 'home', nummer: '010-4000000' })}\n`);
    defects.push({ kind: 'orphan-empty-key', source: 'telefoons', file: 'telefoons.jsonl', line, code: 'CHILD_ORPHAN' });
  }
  rows['telefoons.jsonl'] = written;
  await telefoons.close();

  const files = ['klanten.csv', 'adressen.csv', 'telefoons.jsonl', ...(flat ? ['klanten-plat.csv'] : [])];
  const text: Record<string, string> = {
    'pipeline.yaml': PIPELINE(false),
    'klant.yaml': CUSTOMER_MAPPING,
    'adres.yaml': ADDRESS_MAPPING,
    'telefoon.yaml': PHONE_MAPPING,
    ...(flat ? { 'pipeline-flat.yaml': PIPELINE(true), 'klant-plat.yaml': FLAT_MAPPING } : {}),
    'defects.json': `${JSON.stringify({ seed, customers: n, rows, defects }, null, 2)}\n`,
  };
  for (const [name, body] of Object.entries(text)) await writeFile(join(out, name), body);
  return { files, defects, rows };
}
