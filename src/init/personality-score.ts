/**
 * Scores `init` on generated personalities: runs `init` untouched on each export, loads the
 * pipeline it wrote (every mapping must load), reads every row through the real mapping (as
 * `plan` and `run` do) and compares each staged value with the generator's truth. A staged
 * value that differs from the truth (or a value staged where the truth says nothing may be) is
 * *silently wrong*; a truth-mappable row the pipeline refuses is *not mapped*. Used by
 * `npm run bench -- init` (check seeds) and a quick CI test (a few development seeds).
 */
import { join } from 'node:path';
import { initPipeline } from './index.js';
import { undecidedPoints } from '../pipeline/read/configuration.js';
import { loadPipeline } from '../pipeline/definition/load-pipeline.js';
import { readPipeline } from '../pipeline/read-pipeline.js';
import { generatePersonality, type PersonalityTruth } from '../pipeline/samples/personalities/index.js';

export interface SeedScore {
  seed: number;
  /** lang/format, for the printout. */
  label: string;
  mappable: number;
  mapped: number;
  /** Field → staged values that differ from the truth, with up to 3 examples. */
  wrong: Record<string, { count: number; examples: string[] }>;
  /** Undecided points the pipeline lists (plan and run stop on them unless told otherwise). */
  undecided: number;
  /** Why init, the mapping or the read failed outright (a run would not complete). */
  failure?: string;
}

const squash = (s: unknown) =>
  String(s ?? '')
    .replace(/\s+/g, '')
    .toUpperCase();

/** The staged values the truth speaks about, compared field by field. */
export function compareWithTruth(
  record: Record<string, unknown>,
  truth: PersonalityTruth,
): Array<[field: string, got: unknown, want: unknown]> {
  const r = record as {
    surname?: string;
    sex?: string;
    dateOfBirth?: string;
    telephoneNumbers?: Array<{ number: string }>;
    countryCode?: string;
    addresses?: Array<{ countryCode?: string; postalCode?: string }>;
    income?: { amount?: number; currency?: string; frequency?: string };
  };
  const out: Array<[string, unknown, unknown]> = [];
  const check = (field: string, got: unknown, want: unknown, same = (a: unknown, b: unknown) => a === b) => {
    if (got !== undefined && got !== null && !same(got, want)) out.push([field, got, want]);
  };
  // A mainframe writes names in capitals: the case may differ, the letters (composed, NFC) may not.
  check('surname', r.surname, truth.surname, (a, b) => String(a).toLowerCase() === String(b).toLowerCase());
  check('sex', r.sex, truth.sex);
  check('dateOfBirth', r.dateOfBirth, truth.dateOfBirth);
  check('phone', r.telephoneNumbers?.[0]?.number, truth.phone);
  check('countryCode', r.countryCode, truth.country);
  check('address.countryCode', r.addresses?.[0]?.countryCode, truth.country);
  check('address.postalCode', r.addresses?.[0]?.postalCode, truth.postcode, (a, b) => squash(a) === squash(b));
  check('income.amount', r.income?.amount, truth.income?.amount);
  check('income.currency', r.income?.currency, truth.income?.currency);
  check('income.frequency', r.income?.frequency, truth.income?.frequency);
  return out;
}

/** Generates seed's export under `dir`, runs init on it untouched, and scores what its pipeline stages. */
export async function scoreSeed(seed: number, dir: string, rows: number): Promise<SeedScore> {
  const gen = await generatePersonality(seed, { out: join(dir, 'export'), rows });
  const p = gen.personality;
  const score: SeedScore = {
    seed,
    label: `${p.lang}/${p.format}`,
    mappable: gen.truth.filter((t) => t.mappable).length,
    mapped: 0,
    wrong: {},
    undecided: 0,
  };
  try {
    const init = await initPipeline({
      inputs: [gen.files[0]!],
      outDir: join(dir, 'gen'),
      plan: false,
      force: true,
      ...(gen.layout ? { layout: gen.layout } : {}),
    });
    const def = await loadPipeline(init.pipelineFile);
    score.undecided = (await undecidedPoints(def)).length;
    const truth = new Map(gen.truth.map((t) => [t.key, t]));
    for await (const row of readPipeline(def)) {
      // A read failure (a trailer that disagrees, a cut-off file) fails the run: the export did not move.
      const failed = row.kind === 'rejected' && row.reasons.find((r) => r.code === 'SOURCE_READ_FAILED');
      if (failed) score.failure ??= failed.message.slice(0, 300);
      if (row.kind !== 'mapped') continue;
      const t = truth.get(row.legacyKey);
      if (!t) {
        (score.wrong.key ??= { count: 0, examples: [] }).count++;
        continue;
      }
      if (t.mappable) score.mapped++;
      for (const [field, got, want] of compareWithTruth(row.record as unknown as Record<string, unknown>, t)) {
        const w = (score.wrong[field] ??= { count: 0, examples: [] });
        w.count++;
        if (w.examples.length < 3) w.examples.push(`${t.key}: ${JSON.stringify(got)}, truth ${JSON.stringify(want)}`);
      }
    }
  } catch (err) {
    score.failure = (err as Error).message.split('\n')[0]!.slice(0, 300);
  }
  return score;
}
