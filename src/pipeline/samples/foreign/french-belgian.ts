/**
 * A French/Belgian CRM export: `;`-separated UTF-8 with a byte order mark, `N° client`,
 * `Civilité` (M., Mme), `Date de naissance` in dd/mm/yyyy, `Revenu annuel (€)` written
 * `45 000,00`, countries `France`, `Belgique`, `België`, `Luxembourg`, phone numbers in pairs.
 */
import { join } from 'node:path';
import { type ForeignExport, type ForeignOptions, pad2, type PeopleSpec, writeAmount, writeCsvExport } from './common.js';

export const FRENCH_PEOPLE: PeopleSpec = {
  home: 'FR',
  countries: [
    ['FR', 60, ['France', 'FRANCE', 'FR']],
    ['BE', 35, ['Belgique', 'BE', 'België', 'BELGIQUE']],
    ['LU', 5, ['Luxembourg']],
  ],
  maleNames: ['Jean', 'Pierre', 'François', 'Benoît', 'Jérôme', 'Luc', 'Mathieu', 'Noël'],
  femaleNames: ['Marie', 'Élodie', 'Hélène', 'Chloé', 'Léa', 'Céline', 'Anaïs', 'Françoise'],
  surnames: ['Martin', 'Dubois', 'Lefèvre', 'Peeters', 'Janssens', 'Lambert', 'Dupont', 'Moreau', 'Claes', 'Girard'],
  domains: ['orange.fr', 'free.fr', 'skynet.be', 'telenet.be', 'pt.lu'],
  key: (i) => `FR-${String(i + 1).padStart(6, '0')}`,
  date: (y, m, d) => `${pad2(d)}/${pad2(m)}/${y}`,
};

const TOWNS: Record<string, string[]> = { FR: ['Lyon', 'Paris', 'Lille'], BE: ['Bruxelles', 'Liège', 'Namur'], LU: ['Luxembourg'] };

export async function generateFrenchBelgian(options: ForeignOptions): Promise<ForeignExport> {
  const result = await writeCsvExport('french-belgian', join(options.out, 'clients.csv'), FRENCH_PEOPLE, options, {
    delimiter: ';',
    encoding: 'utf-8',
    lineEnd: '\r\n',
    header: [
      '\ufeffN° client',
      'Civilité',
      'Prénom',
      'Nom',
      'Date de naissance',
      'Adresse',
      'Code postal',
      'Ville',
      'Pays',
      'Téléphone',
      'Courriel',
      'Revenu annuel (€)',
      'Statut',
    ],
    row: (p, rng) => [
      p.key,
      p.sex === 'M' ? 'M.' : rng.pick(['Mme', 'Mlle']),
      p.firstName,
      p.surname,
      FRENCH_PEOPLE.date(p.dob.y, p.dob.m, p.dob.d),
      `${rng.int(1, 120)} ${rng.pick(['rue de la Paix', 'avenue Louise', 'boulevard Voltaire', 'rue Haute'])}`,
      p.country === 'FR'
        ? String(rng.int(1000, 95999)).padStart(5, '0')
        : p.country === 'LU'
          ? `L-${rng.int(1000, 9999)}`
          : String(rng.int(1000, 9999)),
      rng.pick(TOWNS[p.country] ?? TOWNS.FR!),
      p.countryWritten,
      p.phone,
      p.email,
      writeAmount(p.incomeCents, ',', ' '),
      rng.pick(['actif', 'actif', 'inactif']),
    ],
  });
  return result;
}
