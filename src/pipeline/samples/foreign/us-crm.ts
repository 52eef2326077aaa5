/**
 * A US CRM export: comma-separated UTF-8, `Contact ID`, `Birthdate` in mm/dd/yyyy (the order a
 * day-first reader silently swaps), `Gender` spelled out, phone numbers as `(201) 555-0123`,
 * countries `USA`, `United States`, `US`.
 */
import { join } from 'node:path';
import { type ForeignExport, type ForeignOptions, pad2, type PeopleSpec, writeCsvExport } from './common.js';

export const US_PEOPLE: PeopleSpec = {
  home: 'US',
  countries: [['US', 1, ['USA', 'United States', 'US', 'United States of America']]],
  maleNames: ['Michael', 'James', 'Robert', 'David', 'William', 'Joseph', 'Daniel', 'Matthew'],
  femaleNames: ['Jennifer', 'Linda', 'Elizabeth', 'Susan', 'Jessica', 'Sarah', 'Karen', 'Ashley'],
  surnames: ['Johnson', 'Miller', 'Davis', 'Garcia', 'Rodriguez', 'Martinez', 'Anderson', 'Thomas', 'Jackson', 'White'],
  domains: ['gmail.com', 'yahoo.com', 'aol.com', 'comcast.net'],
  key: (i) => `C-${100000 + i}`,
  date: (y, m, d) => `${pad2(m)}/${pad2(d)}/${y}`,
};

const STATES: Array<[string, string]> = [
  ['Austin', 'TX'],
  ['Denver', 'CO'],
  ['Boston', 'MA'],
  ['Portland', 'OR'],
];

export async function generateUsCrm(options: ForeignOptions): Promise<ForeignExport> {
  return writeCsvExport('us-crm', join(options.out, 'contacts.csv'), US_PEOPLE, options, {
    delimiter: ',',
    encoding: 'utf-8',
    lineEnd: '\n',
    header: [
      'Contact ID',
      'First Name',
      'Last Name',
      'Birthdate',
      'Gender',
      'Street Address',
      'City',
      'State',
      'ZIP Code',
      'Country',
      'Phone',
      'Email',
      'Lead Source',
    ],
    row: (p, rng) => {
      const [city, state] = rng.pick(STATES);
      return [
        p.key,
        p.firstName,
        p.surname,
        US_PEOPLE.date(p.dob.y, p.dob.m, p.dob.d),
        p.sex === 'M' ? 'Male' : 'Female',
        `${rng.int(10, 9999)} ${rng.pick(['Oak St', 'Maple Ave', 'Pine Rd', '5th Ave'])}`,
        city,
        state,
        String(rng.int(10001, 99950)),
        p.countryWritten,
        p.phone,
        p.email,
        rng.pick(['Web', 'Referral', 'Event', 'Partner']),
      ];
    },
  });
}
