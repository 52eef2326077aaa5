/**
 * The release guard's judgement (bench/guard.bench.ts measures): each key figure is a ratio to a
 * floor measured in the same run, so the machine's speed cancels out, and is compared with the
 * same figure in the stored baseline of the last release (bench/baseline.json). A figure that
 * falls by more than the tolerance (10%) fails the guard. Pure: no measuring, no files.
 */

/** One measured figure: a ratio to its floor, and which way is better. */
export interface GuardFigure {
  /** Stable name, the key in the baseline. */
  name: string;
  value: number;
  better: 'higher' | 'lower';
  /** What the ratio is, for the printout (e.g. "floor CPU ÷ plan CPU"). */
  what: string;
}

/** bench/baseline.json: the figures of the last release, per number of rows measured. */
export interface GuardBaseline {
  /** The release the figures were measured on: must be package.json's version. */
  version: string;
  /** When and on what they were measured (commit, machine, load), and why they were (re)recorded. */
  recorded: string;
  why: string;
  /** rows → figure name → value. */
  figures: Record<string, Record<string, number>>;
}

export interface GuardVerdict {
  figure: GuardFigure;
  baseline: number | undefined;
  /** Relative change against the baseline, positive when better (0.05: 5% better). */
  change: number | undefined;
  fell: boolean;
}

/** How far a figure may fall below its baseline before the guard fails. */
export const GUARD_TOLERANCE = 0.1;

/**
 * Each figure against its baseline value. A figure the baseline does not hold is printed but cannot fall.
 * @example judgeFigures([{ name: 'plan', value: 0.09, better: 'higher', what: '' }], { plan: 0.1 }) // plan fell 10.0%: not more than 10%, passes
 */
export function judgeFigures(
  figures: readonly GuardFigure[],
  baseline: Readonly<Record<string, number>> | undefined,
  tolerance = GUARD_TOLERANCE,
): GuardVerdict[] {
  return figures.map((figure) => {
    const base = baseline?.[figure.name];
    if (base === undefined || !(base > 0) || !Number.isFinite(figure.value))
      return { figure, baseline: base, change: undefined, fell: false };
    // A lower-is-better figure (resume, peak RSS) gets worse as it grows: its change is base/value - 1.
    const change = figure.better === 'higher' ? figure.value / base - 1 : base / figure.value - 1;
    // Compared on the unrounded change, with a hair of slack for the float division (0.9 / 1 - 1 is -0.0999…).
    return { figure, baseline: base, change, fell: change < -tolerance - 1e-9 };
  });
}

/**
 * Why the baseline cannot be compared with, or undefined when it can: it must be of the release
 * in package.json and hold figures at the number of rows measured.
 */
export function baselineProblem(baseline: GuardBaseline | undefined, packageVersion: string, rows: number): string | undefined {
  const record = `record it with \`npm run bench -- guard --rows ${rows} --record\` on the release build and add a CHANGELOG line saying why`;
  if (baseline === undefined) return `no baseline in bench/baseline.json: ${record}`;
  if (baseline.version !== packageVersion)
    return `bench/baseline.json is of version ${baseline.version}, package.json is ${packageVersion}: ${record}`;
  if (baseline.figures[String(rows)] === undefined)
    return `bench/baseline.json holds no figures at ${rows.toLocaleString('en')} rows (it has ${Object.keys(baseline.figures).join(', ') || 'none'}): run the guard at one of those sizes, or ${record}`;
  return undefined;
}

/** The printout: one line per figure, its baseline and its change; failures marked. */
export function renderVerdicts(verdicts: readonly GuardVerdict[]): string[] {
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  const fmt = (x: number) => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));
  return verdicts.map(({ figure, baseline, change, fell }) => {
    const against = baseline === undefined ? 'no baseline' : `baseline ${fmt(baseline)}, ${pct(change!)}`;
    return `${fell ? 'FELL' : 'ok  '} ${figure.name.padEnd(22)} ${fmt(figure.value).padStart(8)} (${figure.better} is better; ${against}) ${figure.what}`;
  });
}
