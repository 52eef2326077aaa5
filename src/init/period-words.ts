/**
 * The words that state an income's period, in the languages exports are written in: a header
 * (`Revenus mensuels`, `MONTHLY-INCOME`, `Income p.m.`, `Jahreseinkommen`) or a frequency
 * column's value (`maandelijks`, `per month`, `miesięcznie`). What these words say decides the
 * period; where none is found, `init` leaves the period undecided (never a default).
 */

export type Period = 'Monthly' | 'Yearly' | 'Weekly' | 'Quarterly';

/** Word stems (lower case, accents folded), matched at the start of a word of the text. */
const STEMS: ReadonlyArray<[Period, readonly string[]]> = [
  [
    'Monthly',
    [
      'month', // monthly, per month
      'mth',
      'mthly',
      'mnd',
      'maand', // maandelijks, maandinkomen, per maand
      'monat', // monatlich, Monatseinkommen
      'mensu', // mensuel, mensual
      'mensil', // mensile
      'mensal',
      'mese', // al mese
      'mens', // REV-MENS, ING-MENS, RED-MENS
      'mtl', // EINK-MTL
      'mois',
      'mes',
      'miesi', // miesięczny, miesięcznie
      'mesic', // měsíční (m-e-s-i-c after folding)
      'manad', // månadsvis, månadsinkomst
    ],
  ],
  [
    'Yearly',
    [
      'annu', // annual, annuel, annuo, per annum
      'ann', // INC-ANN, REV-ANN
      'year',
      'yrly',
      'jaar', // jaarinkomen, jaarlijks
      'jahr', // Jahreseinkommen, jährlich
      'jhr',
      'anual',
      'ano', // por ano, al año
      'an', // par an
      'rocz', // roczny, rocznie
      'rocn', // roční
      'arlig', // årlig
      'arsink', // årsinkomst
      'ar', // per år
    ],
  ],
  ['Weekly', ['week', 'weekly', 'wekelijks', 'wochentlich', 'hebdo', 'semanal', 'settimanal']],
  ['Quarterly', ['quarter', 'kwartaal', 'quartal', 'trimest']],
];

/** Exact short forms (whole words): `p.m.`, `p.a.`, `M`, `Y`, `J`. */
const WHOLE: Readonly<Record<string, Period>> = {
  pm: 'Monthly',
  pa: 'Yearly',
  m: 'Monthly',
  y: 'Yearly',
  j: 'Yearly',
  jr: 'Yearly',
  pj: 'Yearly',
  mtly: 'Monthly',
};

const fold = (text: string) =>
  text
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2') // camelCase words apart: kdRevenusAnnuels
    .toLowerCase()
    .replace(/ł/g, 'l')
    .replace(/ß/g, 'ss')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '');

/**
 * The period a text states, when exactly one is stated.
 * @example periodOf('Revenus mensuels') // 'Monthly'
 *          periodOf('Income p.m.') // 'Monthly'
 *          periodOf('Income') // undefined
 */
export function periodOf(text: string): Period | undefined {
  const folded = fold(text);
  // `p.m.` / `p.a.` written with points: joined before splitting into words.
  const joined = folded.replace(/\bp\.\s?m\.?(?=\W|$)/g, ' pm ').replace(/\bp\.\s?a\.?(?=\W|$)/g, ' pa ');
  const words = joined.split(/[^a-z0-9]+/).filter((w) => w !== '');
  const found = new Set<Period>();
  for (const w of words) {
    const whole = WHOLE[w];
    if (whole && words.length <= 3) found.add(whole);
    for (const [period, stems] of STEMS)
      for (const s of stems) {
        // Short stems only as whole words (`an`, `ar`, `mes`), longer ones as a word's start.
        if (s.length <= 3 ? w === s : w.startsWith(s)) found.add(period);
      }
  }
  return found.size === 1 ? [...found][0] : undefined;
}
