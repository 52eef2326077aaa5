/**
 * The date, phone and country steps per value, before and after issue 29 (every date format
 * tried in full, libphonenumber-js, the ISO 3166 resolver), on values shaped like the sample
 * CRM export's: what a mapping with the new transforms adds to each person `run` maps. The
 * steps as they were are kept here, and only here, as the baseline. Beside the phone step, the
 * library call it is built on, alone: what no use of libphonenumber-js's public API goes under.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max/es6';
import { compileTransform, type Step } from '../src/pipeline/mapping/transforms.js';
import { Rng } from '../src/pipeline/samples/generate-crm.js';
import type { BenchOptions, BenchRow } from './harness.js';

export const title = 'transforms per value (date, phone, country: before and after)';

// ---- the steps before issue 29 (baseline) ----

/** The first format that matches decides; [dd-mm-yyyy, d-m-yyyy] as compiled before. */
function dateBefore(): Step {
  const formats = [/^(\d{2})-(\d{2})-(\d{4})$/, /^(\d{1,2})-(\d{1,2})-(\d{4})$/];
  const days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return (v) => {
    const text = String(v).trim();
    for (const f of formats) {
      const m = f.exec(text);
      if (!m) continue;
      const [d, mo, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (mo < 1 || mo > 12 || d < 1 || d > days[mo - 1]!) return undefined;
      return `${y}-${mo < 10 ? '0' : ''}${mo}-${d < 10 ? '0' : ''}${d}`;
    }
    return undefined;
  };
}

/** Hand-written Dutch rules (the trunk-zero bug included). */
const phoneBefore: Step = (v) => {
  let s = String(v).replace(/[\s\-()./]/g, '');
  if (s.startsWith('00')) s = `+${s.slice(2)}`;
  if (s.startsWith('+')) {
    if (s.startsWith('+310')) s = `+31${s.slice(4)}`;
    return /^\+[1-9]\d{7,14}$/.test(s) ? s : undefined;
  }
  return /^0\d{9}$/.test(s) ? `+31${s.slice(1)}` : undefined;
};

/** The sample mapping's `land` code table after trim and upper. */
function countryBefore(): Step {
  const table = new Map(
    Object.entries({ NL: 'NL', NLD: 'NL', NEDERLAND: 'NL', BE: 'BE', BELGIE: 'BE', DE: 'DE', DUITSLAND: 'DE', GB: 'GB' }),
  );
  return (v) => table.get(String(v).trim().toUpperCase());
}

/** libphonenumber-js alone, as the `check: possible` step calls it: parse a national number, then isPossible. */
const phoneLibraryAlone: Step = (v) => {
  const parsed = parsePhoneNumberFromString(String(v), { defaultCountry: 'NL', extract: false });
  return parsed?.isPossible() ? parsed.number : undefined;
};

const pad = (n: number, w: number) => String(n).padStart(w, '0');

function values(n: number) {
  const rng = new Rng(29);
  const dates: string[] = [];
  const usDates: string[] = [];
  const phones: string[] = [];
  const lands: string[] = [];
  for (let i = 0; i < n; i++) {
    const [y, m, d] = [rng.int(1935, 2004), rng.int(1, 12), rng.int(1, 28)];
    dates.push(rng.chance(0.85) ? `${pad(d, 2)}-${pad(m, 2)}-${y}` : `${d}-${m}-${y}`);
    usDates.push(`${pad(m, 2)}/${pad(d, 2)}/${y}`);
    phones.push(
      rng.pick([
        `06-${pad(rng.int(10_000_000, 99_999_999), 8)}`,
        `+31 6 ${pad(rng.int(10_000_000, 99_999_999), 8)}`,
        `020-${pad(rng.int(1_000_000, 9_999_999), 7)}`,
      ]),
    );
    lands.push(rng.pick(['NL', 'NL', 'NL', 'NEDERLAND', 'BE', 'DE', 'Duitsland', 'GB']));
  }
  return { dates, usDates, phones, lands };
}

/** Microseconds per value: the best of five rounds over every value (the machine is shared). */
function perValue(step: Step, input: string[], row: Record<string, unknown> = {}): number {
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    let sink = 0;
    for (const v of input) if (step(v, row) !== undefined) sink++;
    best = Math.min(best, (performance.now() - started) / input.length);
    if (sink < 0) throw new Error('unreachable');
  }
  return Math.round(best * 1000 * 1000) / 1000;
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const n = options.quick ? 20_000 : 200_000;
  const { dates, usDates, phones, lands } = values(n);
  const after = (t: Parameters<typeof compileTransform>[0]) => compileTransform(t, {}).step;
  const rows: [string, number][] = [
    ['date [dd-mm-yyyy, d-m-yyyy], before', perValue(dateBefore(), dates)],
    ['date [dd-mm-yyyy, d-m-yyyy], after', perValue(after({ date: ['dd-mm-yyyy', 'd-m-yyyy'] }), dates)],
    [
      'date [dd/mm/yyyy, mm/dd/yyyy] + prefer, after',
      perValue(after({ date: { formats: ['dd/mm/yyyy', 'mm/dd/yyyy'], prefer: 'mm/dd/yyyy' } }), usDates),
    ],
    ['phone NL, before', perValue(phoneBefore, phones)],
    ['phone NL (check valid), after', perValue(after({ phone: { region: 'NL' } }), phones)],
    ['phone NL (check possible), after', perValue(after({ phone: { region: 'NL', check: 'possible' } }), phones)],
    ['phone NL: libphonenumber-js parse + isPossible alone (the floor)', perValue(phoneLibraryAlone, phones)],
    ['phone, region from column, after', perValue(after({ phone: { regionColumn: 'land', region: 'NL' } }), phones, { land: 'Nederland' })],
    ['country: code table, before', perValue(countryBefore(), lands)],
    ['country transform, after', perValue(after('country'), lands)],
  ];
  return rows.map(([metric, value]) => ({
    benchmark: title,
    metric,
    value,
    unit: 'µs/value',
    note: `best of 5 rounds of ${n.toLocaleString('en')} values`,
  }));
}
