/**
 * A deterministic generator of a legacy export of open loan applications (`aanvragen.json`:
 * one object per application, its applicants nested), for samples and tests. Seeded: the same
 * options give the same bytes. Defects of known kinds are planted at known applications and
 * returned, so tests can check each one is refused where it is.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mulberry32 } from './generate-crm.js';

/**
 * Planted defects: initials the XSD refuses (`jm`), an application exported twice, and a total
 * that is not the sum of the loan parts (valid XML: only the platform's handling finds it).
 */
export const APPLICATION_DEFECTS = ['xsd-violation', 'duplicate-application', 'handling-failure'] as const;
export type ApplicationDefect = (typeof APPLICATION_DEFECTS)[number];

export interface GeneratedApplications {
  file: string;
  applications: number;
  defects: Array<{ kind: ApplicationDefect; key: string; index: number }>;
}

const SURNAMES = ['Jansen', 'de Vries', 'van den Berg', 'Bakker', 'Visser', 'Smit', 'Meijer', 'de Boer'];
const FIRST = ['Johanna', 'Sander', 'Pieter', 'Anna', 'Lucas', 'Emma', 'Daan', 'Sophie'];

/**
 * Writes `<dir>/aanvragen.json` with `count` applications (plus the planted duplicate).
 * @example await generateApplications({ dir: 'samples/applications', count: 6, seed: 45 })
 */
export async function generateApplications(o: { dir: string; count: number; seed: number }): Promise<GeneratedApplications> {
  const rnd = mulberry32(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < o.count; i++) {
    const key = `A-2026-${String(1001 + i).padStart(5, '0')}`;
    const parts = 1 + Math.floor(rnd() * 2);
    const principals = Array.from({ length: parts }, () => 50_000 + Math.floor(rnd() * 300) * 1000);
    const first = pick(FIRST);
    items.push({
      aanvraagnummer: key,
      ingediend: `2026-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 10)}T10:00:00Z`,
      adviseur: 'L. de Boer',
      product: pick(['HYPO-VAST-10', 'HYPO-VAST-20', 'HYPO-VAR']),
      nhg: rnd() < 0.3 ? 'j' : 'n',
      doel: pick(['Purchase', 'Refinance']),
      leningdelen: principals.map((p, n) => ({
        nr: n + 1,
        aflosvorm: pick(['Annuity', 'Linear']),
        hoofdsom: p.toFixed(2),
        looptijd: 360,
        rentevast: pick([60, 120, 240]),
        rente: (3 + rnd()).toFixed(3),
      })),
      totaal: principals.reduce((a, b) => a + b, 0).toFixed(2),
      aanvragers: [
        {
          id: 'P1',
          rol: 'MainApplicant',
          voorletters: `${first[0]}.`,
          voornaam: first,
          achternaam: pick(SURNAMES),
          geslacht: first === 'Johanna' || first === 'Anna' || first === 'Emma' || first === 'Sophie' ? 'V' : 'M',
          geboortedatum: `${1960 + Math.floor(rnd() * 40)}-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 9)}`,
          nationaliteit: 'NL',
          straat: pick(['Oudegracht', 'Dorpsstraat', 'Kerkweg', 'Molenlaan']),
          huisnummer: String(1 + Math.floor(rnd() * 200)),
          postcode: `${1000 + Math.floor(rnd() * 8999)} ${pick(['AB', 'CD', 'GH', 'KL'])}`,
          woonplaats: pick(['Utrecht', 'Amersfoort', 'Zwolle', 'Gouda']),
        },
      ],
    });
  }
  const defects: GeneratedApplications['defects'] = [];
  // The XSD's Initials pattern is `([A-Z][a-z]?\.)+`; the mapping passes the legacy value through.
  const bad = Math.min(1, items.length - 1);
  (items[bad]!.aanvragers as Record<string, unknown>[])[0]!.voorletters = 'jm';
  defects.push({ kind: 'xsd-violation', key: items[bad]!.aanvraagnummer as string, index: bad });
  const wrong = Math.min(2, items.length - 1);
  items[wrong]!.totaal = (Number(items[wrong]!.totaal) + 1000).toFixed(2);
  defects.push({ kind: 'handling-failure', key: items[wrong]!.aanvraagnummer as string, index: wrong });
  items.push({ ...items[0]! });
  defects.push({ kind: 'duplicate-application', key: items[0]!.aanvraagnummer as string, index: items.length - 1 });
  await mkdir(o.dir, { recursive: true });
  const file = join(o.dir, 'aanvragen.json');
  await writeFile(file, `${JSON.stringify(items, null, 2)}\n`);
  return { file, applications: items.length, defects };
}
