// The release guard's judgement (bench/guard-judge.ts): when a figure counts as fallen, and when
// the stored baseline cannot be compared with.
import { describe, expect, it } from 'vitest';
import { baselineProblem, judgeFigures, renderVerdicts, type GuardBaseline, type GuardFigure } from '../../bench/guard-judge.js';

const higher = (name: string, value: number): GuardFigure => ({ name, value, better: 'higher', what: '' });
const lower = (name: string, value: number): GuardFigure => ({ name, value, better: 'lower', what: '' });

describe('judgeFigures', () => {
  it('fails a higher-is-better figure only when it falls by more than 10%', () => {
    const [same, tenFell, elevenFell, better] = judgeFigures([higher('a', 0.2), higher('b', 0.18), higher('c', 0.178), higher('d', 0.3)], {
      a: 0.2,
      b: 0.2,
      c: 0.2,
      d: 0.2,
    });
    expect([same!.fell, tenFell!.fell, elevenFell!.fell, better!.fell]).toEqual([false, false, true, false]);
    expect(elevenFell!.change).toBeCloseTo(-0.11, 6);
    expect(better!.change).toBeCloseTo(0.5, 6);
  });

  it('fails a lower-is-better figure (resume, peak RSS) when it grows so that it is more than 10% worse', () => {
    const [grew5, grew12, shrank] = judgeFigures([lower('rss', 2.1), lower('resume', 1.12 * 1.25), lower('x', 1)], {
      rss: 2,
      resume: 1.12,
      x: 2,
    });
    expect(grew5!.fell).toBe(false);
    expect(grew12!.fell).toBe(true); // 1.12 / 1.4 - 1 = -20%
    expect(grew12!.change).toBeCloseTo(-0.2, 6);
    expect(shrank!.fell).toBe(false);
  });

  it('prints a figure the baseline lacks, without judging it', () => {
    const [v] = judgeFigures([higher('new', 0.01)], { other: 1 });
    expect(v).toMatchObject({ baseline: undefined, change: undefined, fell: false });
    expect(renderVerdicts([v!])[0]).toMatch(/^ok {3}new .*no baseline/);
  });

  it('marks a fallen figure in the printout with its baseline and change', () => {
    const lines = renderVerdicts(judgeFigures([higher('plan', 0.05)], { plan: 0.1 }));
    expect(lines[0]).toMatch(/^FELL plan .*baseline 0\.100, -50\.0%/);
  });
});

describe('baselineProblem', () => {
  const baseline: GuardBaseline = { version: '0.1.0', recorded: 'x', why: 'y', figures: { '200000': { plan: 0.1 } } };

  it('accepts a baseline of package.json version holding the size measured', () => {
    expect(baselineProblem(baseline, '0.1.0', 200_000)).toBeUndefined();
  });

  it('refuses a baseline of another version, and says how to record one', () => {
    expect(baselineProblem(baseline, '0.2.0', 200_000)).toMatch(
      /version 0\.1\.0, package\.json is 0\.2\.0: record it .*--record.*CHANGELOG/,
    );
  });

  it('refuses a size the baseline holds no figures at, naming the sizes it has', () => {
    expect(baselineProblem(baseline, '0.1.0', 1_000_000)).toMatch(/no figures at 1,000,000 rows \(it has 200000\)/);
  });

  it('refuses a missing baseline', () => {
    expect(baselineProblem(undefined, '0.1.0', 200_000)).toMatch(/no baseline/);
  });
});
