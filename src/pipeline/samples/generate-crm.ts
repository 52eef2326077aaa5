/**
 * A deterministic generator of legacy CRM exports (a Dutch lender's `klanten.csv` and
 * `bedrijven.json`), for samples, tests and benchmarks of any size. Seeded: the same options
 * give the same bytes. Streamed: rows are written in chunks with backpressure, so a million
 * persons take constant memory. Defects of known kinds are planted at known lines and listed
 * (`defects.json`, and `DEFECTS.md` for the committed samples), so tests can check that every
 * one is reported where it is.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { LANGUAGE_VERSION } from '../definition/language.js';

export const PERSON_COLUMNS = [
  'klantnr',
  'voorletters',
  'voornamen',
  'tussenvoegsel',
  'achternaam',
  'geslacht',
  'geboortedatum',
  'nationaliteit',
  'straat',
  'huisnummer',
  'postcode',
  'woonplaats',
  'land',
  'telefoon',
  'email',
  'inkomen',
  'inkomen_frequentie',
  'partner_klantnr',
] as const;

export const PERSON_DEFECTS = [
  'missing-surname',
  'impossible-date',
  'unknown-nationality',
  'duplicate-klantnr',
  'partner-missing',
  'wrong-column-count',
  'bad-postcode',
  'invalid-email',
] as const;
export const ORGANISATION_DEFECTS = ['director-missing', 'invalid-email', 'missing-name', 'duplicate-kvk'] as const;
export type DefectKind = (typeof PERSON_DEFECTS)[number] | (typeof ORGANISATION_DEFECTS)[number];

/** What a defect is expected to produce in `plan`. */
export const DEFECT_EXPECTATIONS: Record<DefectKind, { code: string; field: string; description: string }> = {
  'missing-surname': { code: 'MISSING_REQUIRED_FIELD', field: 'surname', description: 'achternaam is empty' },
  'impossible-date': { code: 'INVALID_FIELD_VALUE', field: 'dateOfBirth', description: 'geboortedatum 31-02-1980 does not exist' },
  'unknown-nationality': {
    code: 'UNKNOWN_CODE',
    field: 'nationalities[0]',
    description: 'nationaliteit MARSIAANS is not in the code table',
  },
  'duplicate-klantnr': { code: 'DUPLICATE_LEGACY_KEY', field: 'klantnr', description: 'klantnr repeats an earlier row' },
  'partner-missing': {
    code: 'RELATION_TARGET_MISSING',
    field: 'relations[0].to',
    description: 'partner_klantnr points at a klantnr no row has',
  },
  'wrong-column-count': { code: 'SOURCE_ROW_INVALID', field: '', description: 'the row has one column too few' },
  'bad-postcode': { code: 'INVALID_FIELD_VALUE', field: 'addresses[0].postalCode', description: 'postcode 123 AB is not a Dutch postcode' },
  'invalid-email': { code: 'INVALID_FIELD_VALUE', field: 'emailAddress', description: 'e-mail address without a domain' },
  'director-missing': {
    code: 'RELATION_TARGET_MISSING',
    field: 'relations[0].to',
    description: 'directeur_klantnr points at a klantnr no row has',
  },
  'missing-name': { code: 'MISSING_REQUIRED_FIELD', field: 'organisationName', description: 'naam is empty' },
  'duplicate-kvk': { code: 'DUPLICATE_LEGACY_KEY', field: 'kvk_nummer', description: 'kvk_nummer repeats an earlier organisation' },
};

export interface Defect {
  kind: DefectKind;
  file: string;
  line: number;
  key: string;
  code: string;
  field: string;
  description: string;
}

export interface GenerateCrmOptions {
  /** Folder to write into (created). */
  out: string;
  persons: number;
  /** Organisations in bedrijven.json; default persons / 5, 0 writes no JSON file. */
  organisations?: number;
  seed?: number;
  /** Defects planted per 10,000 rows, kinds in turn; default 0. */
  defectsPer10k?: number;
  /** One defect of each kind at fixed places (the committed samples). */
  everyDefectOnce?: boolean;
  /** Encoding of klanten.csv; default utf-8. */
  encoding?: 'utf-8' | 'windows-1252';
  /** Also write a pipeline file and copies of the mappings, so the folder runs as is; default true. */
  pipeline?: boolean;
}

export interface GenerateCrmResult {
  files: string[];
  persons: number;
  organisations: number;
  defects: Defect[];
  bytes: number;
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness (Rng is also the seeded generator of the tests) and Dutch-looking data

/** A seeded generator of numbers in [0, 1): the same seed, the same sequence. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MALE = [
  'Jan',
  'Pieter',
  'Hendrik',
  'Willem',
  'Johannes',
  'Cornelis',
  'Gerrit',
  'Dirk',
  'Kees',
  'Bram',
  'Daan',
  'Sem',
  'Lucas',
  'Thijs',
  'Ruud',
  'Joost',
  'IJsbrand',
  'André',
  'Noël',
  'Björn',
  'Jürgen',
  'Maarten',
  'Sjoerd',
  'Wouter',
  'Bart',
];
const FEMALE = [
  'Maria',
  'Anna',
  'Johanna',
  'Cornelia',
  'Elisabeth',
  'Sanne',
  'Lotte',
  'Emma',
  'Julia',
  'Fleur',
  'Anouk',
  'Zoë',
  'Chloë',
  'Anaïs',
  'Renée',
  'Inès',
  'Noëlle',
  'Sofie',
  'Eva',
  'Marieke',
  'Ingrid',
  'Linda',
  'Petra',
  'Hélène',
  'Ilse',
];
const SURNAMES = [
  'Jansen',
  'de Vries',
  'van den Berg',
  'Bakker',
  'Visser',
  'Smit',
  'Meijer',
  'de Boer',
  'Mulder',
  'de Groot',
  'Bos',
  'Vos',
  'Peters',
  'Hendriks',
  'van Leeuwen',
  'Dekker',
  'Brouwer',
  'de Wit',
  'Dijkstra',
  'Smits',
  'de Graaf',
  'van der Meer',
  'van der Linden',
  'Kok',
  'Jacobs',
  'de Haan',
  'Vermeulen',
  'van Dijk',
  'IJzerman',
  'Müller',
  'Hoëvenaars',
  'Geërts',
  'Çelik',
  'Ruïz',
  'van ’t Hof',
  'ter Horst',
  'Öztürk',
  'Schröder',
];
const STREETS = [
  'Kerkstraat',
  'Hoofdstraat',
  'Dorpsstraat',
  'Schoolstraat',
  'Molenweg',
  'Stationsweg',
  'Julianastraat',
  'Beatrixlaan',
  'Wilhelminapark',
  'Eikenlaan',
  'Prinses Irenestraat',
  'Van Goghstraat',
  'Rembrandtplein',
  'IJsselkade',
  'Café de Kroonstraat',
  'Rue de l’Église',
];
const CITIES: [string, string, string][] = [
  ['Amsterdam', '10', 'NL'],
  ['Rotterdam', '30', 'NL'],
  ['Den Haag', '25', 'NL'],
  ['Utrecht', '35', 'NL'],
  ['Eindhoven', '56', 'NL'],
  ['Groningen', '97', 'NL'],
  ['Tilburg', '50', 'NL'],
  ['Almere', '13', 'NL'],
  ['Breda', '48', 'NL'],
  ['Nijmegen', '65', 'NL'],
  ["'s-Hertogenbosch", '52', 'NL'],
  ['Zwolle', '80', 'NL'],
  ['Leeuwarden', '89', 'NL'],
  ['Sint-Oedenrode', '54', 'NL'],
  ['Hoogezand-Sappemeer', '96', 'NL'],
  ['Antwerpen', '2000', 'BE'],
  ['Liège', '4000', 'BE'],
  ['Gent', '9000', 'BE'],
];
const NATIONALITIES = ['NL', 'NL', 'NL', 'NEDERLANDS', 'NLD', 'NL', 'BE', 'BELG', 'DE', 'DUITS', 'FR', 'TR', 'MA', 'GB', 'PL'];
const FREQUENCIES = ['JR', 'JR', 'MND', 'MND', 'MND', '4WK'];
const DOMAINS = ['ziggo.nl', 'KPNMail.nl', 'Gmail.com', 'hotmail.com', 'xs4all.nl', 'Outlook.com', 'planet.nl'];
const LETTERS = 'ABCEGHJKLMNPRTVWXZ'.split('');
const COMPANY_WORDS = [
  'Bouwbedrijf',
  'Handelsonderneming',
  'Installatietechniek',
  'Adviesgroep',
  'Transport',
  'Bakkerij',
  'Hoveniersbedrijf',
  'Garage',
  'Architectenbureau',
  'Café-Restaurant',
  'Zorggroep',
  'Drukkerij',
];
const LEGAL_FORMS = ['B.V.', 'V.O.F.', 'N.V.', 'Holding B.V.', 'Eenmanszaak'];

export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const initialsOf = (names: string) =>
  names
    .split(' ')
    .map((n) => (n.startsWith('IJ') ? 'IJ.' : `${n[0]}.`))
    .join('');
const asciiLocal = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();
const amount = (n: number) => {
  const [whole, cents] = n.toFixed(2).split('.');
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${cents}`;
};

/** Quotes a CSV field when it holds the delimiter, a quote or a line break. */
function csvField(v: string): string {
  return /[;"\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Buffered writer with backpressure; counts lines and bytes as written (after encoding). */
export class Sink {
  private buffer = '';
  line = 1;
  bytes = 0;
  constructor(
    private readonly stream: WriteStream,
    private readonly encoding: 'utf-8' | 'windows-1252',
  ) {}
  async write(text: string): Promise<void> {
    this.buffer += text;
    if (this.buffer.length >= 256 * 1024) await this.flush();
  }
  async flush(): Promise<void> {
    if (!this.buffer) return;
    const chunk = this.encoding === 'utf-8' ? Buffer.from(this.buffer, 'utf8') : iconv.encode(this.buffer, 'windows-1252');
    this.buffer = '';
    this.bytes += chunk.length;
    if (!this.stream.write(chunk)) await new Promise<void>((r) => this.stream.once('drain', () => r()));
  }
  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((res, rej) => this.stream.end((err?: Error | null) => (err ? rej(err) : res())));
  }
}

// ---------------------------------------------------------------------------------------------

interface Person {
  klantnr: string;
  fields: string[];
}

/** The identity the platform checks (surname with prefix, initials, birth date), as its validation compares it. */
const comparable = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
const identityOf = (prefix: string, surname: string, voornamen: string, year: number, month: number, day: number) =>
  `${comparable(`${prefix}${surname}`)}|${comparable(initialsOf(voornamen))}|${year}-${month}-${day}`;

/**
 * One person. `taken` holds the identities drawn so far: generated people are distinct, so a
 * clash (a few hundred in 200,000 random names and birth dates) gets another birth date; only a
 * planted defect makes two rows one person.
 */
function person(rng: Rng, i: number, partner: string, taken: Set<string>): Person {
  const male = rng.chance(0.5);
  const names = Array.from({ length: rng.chance(0.35) ? 2 : rng.chance(0.1) ? 3 : 1 }, () => rng.pick(male ? MALE : FEMALE));
  const voornamen = names.join(' ');
  const full = rng.pick(SURNAMES);
  const space = full.lastIndexOf(' ');
  const [prefix, surname] = space > 0 ? [full.slice(0, space), full.slice(space + 1)] : ['', full];
  // Legacy habit: a third of the records keep the prefix glued to the surname.
  const glued = prefix && rng.chance(0.33);
  const [city, pc, land] = rng.pick(CITIES);
  const postcode =
    land === 'NL'
      ? `${pc}${pad(rng.int(10, 99), 2)}${rng.chance(0.7) ? ' ' : ''}${rng.pick(LETTERS)}${rng.pick(LETTERS)}`
      : String(Number(pc) + rng.int(0, 99));
  let year = rng.int(1935, 2004);
  let month = rng.int(1, 12);
  let day = rng.int(1, 28);
  while (taken.has(identityOf(prefix, surname, voornamen, year, month, day))) {
    year = rng.int(1935, 2004);
    month = rng.int(1, 12);
    day = rng.int(1, 28);
  }
  taken.add(identityOf(prefix, surname, voornamen, year, month, day));
  const date = rng.chance(0.85) ? `${pad(day, 2)}-${pad(month, 2)}-${year}` : `${day}-${month}-${year}`;
  const phone = rng.chance(0.15)
    ? ''
    : rng.pick([
        `06-${pad(rng.int(0, 99_999_999), 8)}`,
        `06${pad(rng.int(0, 99_999_999), 8)}`,
        `+31 6 ${pad(rng.int(0, 99_999_999), 8)}`,
        `0${rng.int(10, 79)}-${pad(rng.int(0, 9_999_999), 7)}`,
      ]);
  const email = rng.chance(0.2) ? '' : `${asciiLocal(names[0]!)}.${asciiLocal(surname)}${rng.int(1, 99)}@${rng.pick(DOMAINS)}`;
  const income = rng.chance(0.1) ? '' : amount(rng.int(1_200, 9_000) * (rng.chance(0.5) ? 12 : 1) + rng.int(0, 99) / 100);
  const fields = [
    String(100_000 + i),
    rng.chance(0.25) ? '' : initialsOf(voornamen),
    voornamen,
    glued ? '' : prefix,
    glued ? `${prefix} ${surname}` : surname,
    male ? 'M' : rng.chance(0.97) ? 'V' : 'O',
    date,
    land === 'BE' ? rng.pick(['BE', 'BELG']) : rng.pick(NATIONALITIES),
    rng.pick(STREETS),
    `${rng.int(1, 250)}${rng.chance(0.1) ? rng.pick(['a', 'b', '-2', ' bis']) : ''}`,
    postcode,
    city,
    rng.chance(0.1) && land === 'NL' ? 'NEDERLAND' : land,
    phone,
    email,
    income,
    income ? rng.pick(FREQUENCIES) : '',
    partner,
  ];
  return { klantnr: fields[0]!, fields };
}

/** Applies a defect to a person's fields (in place); returns the fields to write. */
function plantPersonDefect(kind: DefectKind, fields: string[], earlierKey: string): string[] {
  switch (kind) {
    case 'missing-surname':
      fields[4] = '';
      fields[3] = '';
      break;
    case 'impossible-date':
      fields[6] = '31-02-1980';
      break;
    case 'unknown-nationality':
      fields[7] = 'MARSIAANS';
      break;
    case 'duplicate-klantnr':
      fields[0] = earlierKey;
      break;
    case 'partner-missing':
      fields[17] = '9999999';
      break;
    case 'wrong-column-count':
      return fields.slice(0, fields.length - 1);
    case 'bad-postcode':
      fields[10] = '123 AB';
      fields[12] = 'NL';
      break;
    case 'invalid-email':
      fields[14] = `${fields[2]!.split(' ')[0]!.toLowerCase()}@`;
      break;
    default:
      break;
  }
  return fields;
}

function defectsMarkdown(defects: Defect[], meta: { seed: number; persons: number; organisations: number; encoding: string }): string {
  const rows = defects.map((d) => `| ${d.file}:${d.line} | ${d.key} | ${d.kind} | ${d.description} | ${d.code} | ${d.field || '(row)'} |`);
  return [
    '# Known defects in the sample exports',
    '',
    `Generated by \`stagecoach generate-samples --persons ${meta.persons} --organisations ${meta.organisations} --seed ${meta.seed} --every-defect-once --encoding ${meta.encoding}\`.`,
    'Each defect is planted on purpose; `stagecoach plan pipelines/crm.yaml` must report every one at this file and line',
    '(test/e2e/cli-plan-samples.test.ts checks it), and nothing else.',
    '',
    '| Where | Legacy key | Kind | What is wrong | Expected reason | Field |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    'Also on purpose, and not defects: `klanten.csv` is windows-1252 with CRLF line ends and diacritics (é, ë, ï, ö, ü,',
    'the ’ of "van ’t Hof", byte 0x92); one street is a quoted field over two lines; a third of the rows glue the',
    'surname prefix to the surname ("van den Berg" with no tussenvoegsel), which the mapping\'s script splits;',
    'initials are missing on a quarter of the rows and derived from the first names.',
    '',
  ].join('\n');
}

function findMappings(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'mappings', 'counterparties', 'crm-persons.yaml'))) return join(dir, 'mappings', 'counterparties');
    dir = dirname(dir);
  }
  throw new Error('cannot find mappings/counterparties next to the stagecoach package');
}

/**
 * Writes `klanten.csv` (and `bedrijven.json` when organisations > 0), `defects.json`, and by
 * default a runnable `pipeline.yaml` with copies of the mappings.
 * @example await generateCrmSamples({ out: '/tmp/crm', persons: 100_000, seed: 7, defectsPer10k: 5 })
 */
export async function generateCrmSamples(options: GenerateCrmOptions): Promise<GenerateCrmResult> {
  const out = resolve(options.out);
  await mkdir(out, { recursive: true });
  const seed = options.seed ?? 1;
  const rng = new Rng(seed);
  const n = options.persons;
  const orgCount = options.organisations ?? Math.floor(n / 5);
  const encoding = options.encoding ?? 'utf-8';
  const defects: Defect[] = [];
  const files: string[] = [];

  // Which rows carry a defect: fixed places for the samples, evenly spread otherwise.
  const personDefectAt = new Map<number, DefectKind>();
  if (options.everyDefectOnce) {
    PERSON_DEFECTS.forEach((kind, k) => personDefectAt.set(Math.min(n - 1, Math.floor(((k + 1) * n) / (PERSON_DEFECTS.length + 1))), kind));
  } else if ((options.defectsPer10k ?? 0) > 0) {
    const every = Math.max(2, Math.floor(10_000 / options.defectsPer10k!));
    let k = 0;
    for (let i = every - 1; i < n; i += every) personDefectAt.set(i, PERSON_DEFECTS[k++ % PERSON_DEFECTS.length]!);
  }
  // Partners: neighbours i and i+1 pair up, never with a defect row (its key may change).
  const partnerOf = (i: number): string => {
    const mate = i % 2 === 0 ? i + 1 : i - 1;
    if (mate >= n || personDefectAt.has(i) || personDefectAt.has(mate)) return '';
    const pairSeed = Math.imul(Math.min(i, mate) + 1, 0x9e3779b1) ^ seed;
    return (pairSeed >>> 0) % 100 < 30 ? String(100_000 + mate) : '';
  };

  const csvPath = join(out, 'klanten.csv');
  const csv = new Sink(createWriteStream(csvPath), encoding);
  await csv.write(`${PERSON_COLUMNS.join(';')}\r\n`);
  csv.line = 2;
  const cleanKeys: string[] = [];
  const multilineAt = options.everyDefectOnce ? Math.floor(n / 3) + 1 : -1;
  const identities = new Set<string>();
  for (let i = 0; i < n; i++) {
    const p = person(rng, i, partnerOf(i), identities);
    let fields = p.fields;
    const kind = personDefectAt.get(i);
    const line = csv.line;
    if (kind) {
      const earlier = String(100_000 + Math.max(0, i - 7));
      fields = plantPersonDefect(kind, fields, earlier);
      const e = DEFECT_EXPECTATIONS[kind];
      defects.push({ kind, file: 'klanten.csv', line, key: fields[0]!, code: e.code, field: e.field, description: e.description });
    } else if (cleanKeys.length < 1000 && !fields[17]) {
      cleanKeys.push(p.klantnr);
    }
    if (i === multilineAt && !kind) fields[8] = `${fields[8]}\r\nachterhuis`; // a quoted field over two lines
    let text = fields.map(csvField).join(';');
    text += '\r\n';
    csv.line += 1 + (i === multilineAt && !kind ? 1 : 0);
    await csv.write(text);
  }
  await csv.close();
  files.push(csvPath);
  let bytes = csv.bytes;

  if (orgCount > 0) {
    const orgDefectAt = new Map<number, DefectKind>();
    if (options.everyDefectOnce)
      ORGANISATION_DEFECTS.forEach((kind, k) =>
        orgDefectAt.set(Math.min(orgCount - 1, Math.floor(((k + 1) * orgCount) / (ORGANISATION_DEFECTS.length + 1))), kind),
      );
    else if ((options.defectsPer10k ?? 0) > 0) {
      const every = Math.max(2, Math.floor(10_000 / options.defectsPer10k!));
      let k = 0;
      for (let i = every - 1; i < orgCount; i += every) orgDefectAt.set(i, ORGANISATION_DEFECTS[k++ % ORGANISATION_DEFECTS.length]!);
    }
    const jsonPath = join(out, 'bedrijven.json');
    const json = new Sink(createWriteStream(jsonPath), 'utf-8');
    const header = `{\n  "export": {\n    "bron": "CRM Hypotheken v4.2",\n    "aangemaakt": "2024-11-30T23:15:00+01:00",\n    "aantal": ${orgCount},\n    "bedrijven": [\n`;
    await json.write(header);
    json.line = 7;
    for (let i = 0; i < orgCount; i++) {
      const [city, pc, land] = rng.pick(CITIES.filter((c) => c[2] === 'NL'));
      const word = rng.pick(COMPANY_WORDS);
      const owner = rng.pick(SURNAMES).replace(/^.* /, '');
      const org: Record<string, unknown> = {
        bedrijfsnr: `B${pad(i + 1, 6)}`,
        kvk_nummer: String(30_000_000 + i * 17),
        naam: `${word} ${owner} ${rng.pick(LEGAL_FORMS)}`,
        land,
        adres: {
          straat: rng.pick(STREETS),
          huisnummer: String(rng.int(1, 400)),
          postcode: `${pc}${pad(rng.int(10, 99), 2)} ${rng.pick(LETTERS)}${rng.pick(LETTERS)}`,
          plaats: city,
        },
        telefoon: `0${rng.int(10, 79)}-${pad(rng.int(0, 9_999_999), 7)}`,
        email: rng.chance(0.3) ? '' : `info@${asciiLocal(word)}${asciiLocal(owner)}.NL`,
        directeur_klantnr: cleanKeys.length > 0 && rng.chance(0.8) ? rng.pick(cleanKeys) : '',
        actief: rng.chance(0.95),
      };
      const kind = orgDefectAt.get(i);
      if (kind === 'director-missing') org.directeur_klantnr = '8888888';
      if (kind === 'invalid-email') org.email = 'info@bedrijf';
      if (kind === 'missing-name') org.naam = '';
      if (kind === 'duplicate-kvk') org.kvk_nummer = String(30_000_000 + Math.max(0, i - 3) * 17);
      const text = JSON.stringify(org, null, 2).replace(/\n/g, '\n      ');
      if (kind) {
        const e = DEFECT_EXPECTATIONS[kind];
        defects.push({
          kind,
          file: 'bedrijven.json',
          line: json.line,
          key: String(org.kvk_nummer),
          code: e.code,
          field: e.field,
          description: e.description,
        });
      }
      await json.write(`      ${text}${i < orgCount - 1 ? ',' : ''}\n`);
      json.line += text.split('\n').length;
    }
    await json.write('    ]\n  }\n}\n');
    await json.close();
    files.push(jsonPath);
    bytes += json.bytes;
  }

  await writeFile(join(out, 'defects.json'), `${JSON.stringify(defects, null, 2)}\n`);
  files.push(join(out, 'defects.json'));
  if (defects.length > 0 && defects.length <= 50) {
    await writeFile(join(out, 'DEFECTS.md'), defectsMarkdown(defects, { seed, persons: n, organisations: orgCount, encoding }));
    files.push(join(out, 'DEFECTS.md'));
  }
  if (options.pipeline ?? true) {
    const mappings = findMappings();
    await mkdir(join(out, 'mappings', 'rules'), { recursive: true });
    // The editor-schema line of the copies points at the package's schemas from where they now are.
    const schemas = resolve(mappings, '..', '..', 'schemas');
    const schemaLine = (from: string, name: string) => `# yaml-language-server: $schema=${relative(from, join(schemas, name))}`;
    for (const f of ['crm-persons.yaml', 'crm-organisations.yaml'])
      await writeFile(
        join(out, 'mappings', f),
        (await readFile(join(mappings, f), 'utf8')).replace(
          /^# yaml-language-server: .*$/m,
          schemaLine(join(out, 'mappings'), 'mapping.schema.json'),
        ),
      );
    await copyFile(join(mappings, 'rules/split-surname-prefix.mjs'), join(out, 'mappings', 'rules/split-surname-prefix.mjs'));
    const pipeline = [
      schemaLine(out, 'pipeline.schema.json'),
      `# Generated by stagecoach generate-samples (seed ${seed}): ${n} persons, ${orgCount} organisations`,
      `language: ${LANGUAGE_VERSION}`,
      'name: generated-crm',
      'component: Counterparties',
      'sources:',
      '  - name: klanten',
      '    format: csv',
      '    path: klanten.csv',
      `    encoding: ${encoding}`,
      '    csv: { delimiter: ";" }',
      '    mapping: mappings/crm-persons.yaml',
      ...(orgCount > 0
        ? [
            '  - name: bedrijven',
            '    format: json',
            '    path: bedrijven.json',
            '    encoding: utf-8',
            '    json: { path: export.bedrijven }',
            '    mapping: mappings/crm-organisations.yaml',
          ]
        : []),
      'target:',
      '  referenceNamespace: 5b0c3f8e-2a4d-5e6f-8a9b-0c1d2e3f4a5b',
      '',
    ].join('\n');
    await writeFile(join(out, 'pipeline.yaml'), pipeline);
    files.push(join(out, 'pipeline.yaml'));
  }
  return { files, persons: n, organisations: orgCount, defects, bytes };
}
