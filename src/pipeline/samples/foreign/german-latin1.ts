/**
 * A German core-banking export: windows-1252 (latin-1) with `;` and CRLF, `Straße`,
 * `Staatsangehörigkeit`, `Geburtsdatum` as `12.03.1980`, amounts with decimal commas
 * (`68.000,00`), `Anrede` Herr/Frau, countries `Deutschland`, `D`, `Österreich`, `Schweiz`, `CH`.
 */
import { join } from 'node:path';
import { type ForeignExport, type ForeignOptions, pad2, type PeopleSpec, writeAmount, writeCsvExport } from './common.js';

export const GERMAN_PEOPLE: PeopleSpec = {
  home: 'DE',
  countries: [
    ['DE', 80, ['Deutschland', 'D', 'DE', 'DEUTSCHLAND']],
    ['AT', 12, ['Österreich', 'AT']],
    ['CH', 8, ['Schweiz', 'CH']],
  ],
  maleNames: ['Jürgen', 'Hans', 'Klaus', 'Stefan', 'Lukas', 'Maximilian', 'Jörg', 'Günter'],
  femaleNames: ['Anna', 'Käthe', 'Sabine', 'Ursula', 'Lena', 'Jülide', 'Monika', 'Brigitte'],
  surnames: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weiß', 'Größer', 'Becker', 'Schäfer', 'Hoffmann', 'Köhler'],
  domains: ['web.de', 'gmx.de', 't-online.de', 'gmx.at', 'bluewin.ch'],
  key: (i) => String(4000000 + i),
  date: (y, m, d) => `${pad2(d)}.${pad2(m)}.${y}`,
};

const STREETS = ['Hauptstraße', 'Bahnhofstraße', 'Schloßallee', 'Gartenweg', 'Königstraße'];
const TOWNS: Record<string, string[]> = { DE: ['München', 'Köln', 'Düsseldorf', 'Berlin'], AT: ['Wien', 'Graz'], CH: ['Zürich', 'Basel'] };

export async function generateGermanLatin1(options: ForeignOptions): Promise<ForeignExport> {
  return writeCsvExport('german-latin1', join(options.out, 'kunden.csv'), GERMAN_PEOPLE, options, {
    delimiter: ';',
    encoding: 'latin1',
    lineEnd: '\r\n',
    header: [
      'Kundennummer',
      'Anrede',
      'Vorname',
      'Nachname',
      'Geburtsdatum',
      'Straße',
      'Hausnummer',
      'PLZ',
      'Ort',
      'Land',
      'Telefon',
      'E-Mail',
      'Jahreseinkommen',
      'Staatsangehörigkeit',
    ],
    row: (p, rng) => [
      p.key,
      p.sex === 'M' ? 'Herr' : 'Frau',
      p.firstName,
      p.surname,
      GERMAN_PEOPLE.date(p.dob.y, p.dob.m, p.dob.d),
      rng.pick(STREETS),
      String(rng.int(1, 180)),
      p.country === 'DE' ? String(rng.int(10115, 99998)).padStart(5, '0') : String(rng.int(1010, 9999)),
      rng.pick(TOWNS[p.country] ?? TOWNS.DE!),
      p.countryWritten,
      p.phone,
      p.email,
      writeAmount(p.incomeCents, ',', '.'),
      rng.pick(['deutsch', 'DE', 'Deutschland', 'österreichisch', 'türkisch']),
    ],
  });
}
