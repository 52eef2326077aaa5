/**
 * A mainframe extract: fixed-width records of one length (blank-padded text, zero-padded
 * numbers, birth dates as yyyymmdd, incomes with two implied decimals), a header record on the
 * first line and a trailer stating the record count on the last, and the COBOL copybook that
 * describes the record (`customers.cpy`), as the user would hand it to `init --layout`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ForeignExport, type ForeignOptions, type PeopleSpec, people, Rng, TextFile, type TruthRow } from './common.js';

export const MAINFRAME_PEOPLE: PeopleSpec = {
  home: 'GB',
  countries: [
    ['GB', 60, ['GBR']],
    ['IE', 25, ['IRL']],
    ['NL', 15, ['NLD']],
  ],
  maleNames: ['ALAN', 'BRIAN', 'COLIN', 'DEREK', 'JAN', 'PIETER', 'SEAMUS'],
  femaleNames: ['ANNE', 'BRENDA', 'CAROL', 'DIANE', 'ANOUK', 'MAEVE'],
  surnames: ['HUGHES', 'MORGAN', 'DOYLE', 'QUINN', 'DE VRIES', 'BAKKER', 'PRICE'],
  domains: ['example.co.uk'],
  key: (i) => String(10000001 + i),
  date: (y, m, d) => `${y}${String(m).padStart(2, '0')}${String(d).padStart(2, '0')}`,
};

/** The record layout: name, COBOL picture, length. */
const FIELDS: Array<[string, string, number]> = [
  ['CUST-ID', '9(8)', 8],
  ['SURNAME', 'X(20)', 20],
  ['FORENAME', 'X(15)', 15],
  ['FILLER', 'X(2)', 2],
  ['BIRTH-DATE', '9(8)', 8],
  ['COUNTRY-CODE', 'X(3)', 3],
  ['PHONE-NO', 'X(18)', 18],
  ['POSTCODE', 'X(8)', 8],
  ['TOWN', 'X(20)', 20],
  ['ADDRESS-LINE-1', 'X(30)', 30],
  ['ANNUAL-INCOME', '9(7)V99', 9],
];
export const MAINFRAME_RECORD_LENGTH = FIELDS.reduce((n, [, , l]) => n + l, 0);

export const COPYBOOK = [
  '      * CUSTOMER MASTER EXTRACT, ONE RECORD PER CUSTOMER',
  '       01  CUSTOMER-RECORD.',
  '           05  CUST-ID             PIC 9(8).',
  '           05  CUST-NAME.',
  '               10  SURNAME         PIC X(20).',
  '               10  FORENAME        PIC X(15).',
  '           05  FILLER              PIC X(2).',
  '           05  BIRTH-DATE          PIC 9(8).',
  '           05  COUNTRY-CODE        PIC X(3).',
  '           05  PHONE-NO            PIC X(18).',
  '           05  POSTCODE            PIC X(8).',
  '           05  TOWN                PIC X(20).',
  '           05  ADDRESS-LINE-1      PIC X(30).',
  '           05  ANNUAL-INCOME       PIC 9(7)V99.',
  '',
].join('\n');

const cell = (v: string, [, pic, length]: [string, string, number]) =>
  pic.startsWith('9') ? v.padStart(length, '0').slice(0, length) : v.padEnd(length, ' ').slice(0, length);

export async function generateFixedWidth(options: ForeignOptions): Promise<ForeignExport> {
  const path = join(options.out, 'CUSTMAST.DAT');
  const layout = join(options.out, 'customers.cpy');
  const file = await TextFile.open(path, 'utf-8');
  await writeFile(layout, COPYBOOK);
  const rng = new Rng((options.seed ?? 29) + 2);
  const truth = new Map<string, TruthRow>();
  const defects: Record<string, string[]> = {};
  await file.line('HDR CUSTMAST EXTRACT 20261127'.padEnd(MAINFRAME_RECORD_LENGTH, ' '));
  let rows = 0;
  for (const p of people(MAINFRAME_PEOPLE, options)) {
    rows++;
    if (!truth.has(p.key)) truth.set(p.key, p.truth);
    if (p.defect) (defects[p.defect] ??= []).push(p.key);
    const values = [
      p.key,
      p.surname,
      p.firstName,
      '',
      MAINFRAME_PEOPLE.date(p.dob.y, p.dob.m, p.dob.d),
      p.countryWritten,
      p.phone,
      `${rng.pick(['SW', 'D', 'BT', '1012'])}${rng.int(1, 20)} ${rng.int(1, 9)}${rng.pick(['AA', 'XY'])}`,
      rng.pick(['LONDON', 'DUBLIN', 'BELFAST', 'AMSTERDAM']),
      `${rng.int(1, 99)} ${rng.pick(['HIGH STREET', 'MAIN STREET', 'KERKSTRAAT'])}`,
      String(p.incomeCents),
    ];
    await file.line(values.map((v, i) => cell(v, FIELDS[i]!)).join(''));
  }
  await file.line(`TRL${String(rows).padStart(9, '0')}`.padEnd(MAINFRAME_RECORD_LENGTH, ' '));
  await file.close();
  return { kind: 'fixed-width', files: [path], layout, rows, truth, defects, bytes: file.bytes };
}
