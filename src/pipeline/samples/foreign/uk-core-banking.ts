/**
 * An English core-banking export from a UK/Irish lender: comma-separated UTF-8 with CRLF,
 * `Customer ID`, `Title`, `Date of Birth` in dd/mm/yyyy, `Annual Income (GBP)` with thousands
 * commas, countries written `United Kingdom`, `UK`, `ENGLAND`, `IRELAND`, phone numbers in
 * national and `+44 (0)` notations, and an account-opened date that is no birth date.
 */
import { join } from 'node:path';
import { type ForeignExport, type ForeignOptions, pad2, type PeopleSpec, writeAmount, writeCsvExport } from './common.js';

export const UK_PEOPLE: PeopleSpec = {
  home: 'GB',
  countries: [
    ['GB', 70, ['United Kingdom', 'UK', 'ENGLAND', 'GB', 'England']],
    ['IE', 30, ['IRELAND', 'Ireland', 'IE']],
  ],
  maleNames: ['Oliver', 'Jack', 'Harry', 'George', 'Liam', 'Conor', 'Seán', 'Patrick', 'James', 'Thomas'],
  femaleNames: ['Olivia', 'Amelia', 'Isla', 'Emily', 'Aoife', 'Saoirse', 'Niamh', 'Grace', 'Sophie', 'Charlotte'],
  surnames: ['Smith', 'Jones', 'Williams', 'Murphy', "O'Brien", 'Kelly', 'Taylor', 'Brown', 'Walsh', 'Byrne', 'Evans', 'Wilson'],
  domains: ['btinternet.com', 'gmail.com', 'eircom.net', 'outlook.ie', 'sky.com'],
  key: (i) => `GB${String(700000 + i).padStart(8, '0')}`,
  date: (y, m, d) => `${pad2(d)}/${pad2(m)}/${y}`,
};

const TITLES = { M: ['Mr', 'Mr', 'Dr'], F: ['Mrs', 'Ms', 'Miss', 'Dr'] } as const;
const STATUSES = ['Active', 'Active', 'Active', 'Dormant', 'Closed'];
const TOWNS = { GB: ['London', 'Manchester', 'Leeds', 'Bristol'], IE: ['Dublin', 'Cork', 'Galway'] } as Record<string, string[]>;

export async function generateUkCoreBanking(options: ForeignOptions): Promise<ForeignExport> {
  return writeCsvExport('uk-core-banking', join(options.out, 'customers.csv'), UK_PEOPLE, options, {
    delimiter: ',',
    encoding: 'utf-8',
    lineEnd: '\r\n',
    header: [
      'Customer ID',
      'Title',
      'Forename',
      'Surname',
      'Date of Birth',
      'Gender',
      'Address Line 1',
      'Town',
      'Postcode',
      'Country',
      'Telephone',
      'Email Address',
      'Annual Income (GBP)',
      'Status',
      'Account Opened',
    ],
    row: (p, rng) => [
      p.key,
      rng.pick(TITLES[p.sex]),
      p.firstName,
      p.surname,
      UK_PEOPLE.date(p.dob.y, p.dob.m, p.dob.d),
      p.sex,
      `${rng.int(1, 220)} ${rng.pick(['High Street', 'Church Road', 'Main Street', 'Station Road'])}`,
      rng.pick(TOWNS[p.country] ?? TOWNS.GB!),
      p.country === 'IE'
        ? `D${pad2(rng.int(1, 24))} X${rng.int(100, 999)}`
        : `${rng.pick(['SW', 'M', 'LS', 'BS'])}${rng.int(1, 20)} ${rng.int(1, 9)}${rng.pick(['AA', 'BD', 'QT'])}`,
      p.countryWritten,
      p.phone,
      p.email,
      writeAmount(p.incomeCents, '.', ','),
      rng.pick(STATUSES),
      `${rng.int(1995, 2024)}-${pad2(rng.int(1, 12))}-${pad2(rng.int(1, 28))}`,
    ],
  });
}
