/**
 * Lives of a migration (issue 28): seeded sequences of what a migration lead does over weeks —
 * runs, runs killed and run again, `migrate` (with and without `--drop-invalid`), corrections
 * files edited (values fixed, duplicates given new keys or left unedited, an extra column) and
 * handed back to `run`/`migrate --corrections`, a mapping change checked with `plan --ledger`
 * then run, `cancel`, `target.migration: new`, `purge` — on a small generated export with
 * planted defects, through the real CLI against a real embedded service on loopback. After every
 * step the ledger, `status`, `plan --ledger`, the report and the platform (its own API) must say
 * what the model (test/support/lives-model.ts) expects. A failure prints its seed, the steps so
 * far, what disagreed and the line that replays it.
 *
 * Issue 40 grew it: corrections files edited as a person would (rows added with a live record's
 * key or a new one, a fixed row copied, unfixed rows deleted: refused against the ledger and
 * counted, never sent), and `verify` after every step (its verdict word only when true, "nothing
 * to verify yet" before any import).
 *
 * `npm test`: a few short lives. `npm run soak` (STAGECOACH_SOAK=1): 200 lives
 * (STAGECOACH_LIVES=n for another number). STAGECOACH_LIVES_SEED=n replays one life.
 * Seeds: the DEVELOPMENT range (101… in CI, 1001… in the soak) is the one tuned on;
 * STAGECOACH_LIVES_CHECK=1 runs the CHECK range (50001…), never looked at while building, whose
 * figure is the one to quote. STAGECOACH_LIVES_PERSONS / STAGECOACH_LIVES_STEPS size the lives.
 */
import { describe, expect, it } from 'vitest';
import { reportFigures, soak } from '../support/chaos.js';
import { lifeFailure, liveLife } from '../support/lives.js';

const FILE = 'test/reliability/lives.test.ts';
const ONE = process.env.STAGECOACH_LIVES_SEED;
const COUNT = Number(process.env.STAGECOACH_LIVES ?? soak(3, 200));
const CHECK_SEEDS = 50_001;
const FIRST_SEED = Number(
  process.env.STAGECOACH_LIVES_FROM ?? (process.env.STAGECOACH_LIVES_CHECK === '1' ? CHECK_SEEDS : soak(101, 1001)),
);
const SEEDS = ONE !== undefined ? [Number(ONE)] : Array.from({ length: COUNT }, (_, i) => FIRST_SEED + i);
const PERSONS = Number(process.env.STAGECOACH_LIVES_PERSONS ?? soak(100, 200));
const STEPS = Number(process.env.STAGECOACH_LIVES_STEPS ?? soak(3, 10));

const replay = (seed: number) =>
  `STAGECOACH_LIVES_SEED=${seed}${process.env.STAGECOACH_SOAK === '1' ? ' STAGECOACH_SOAK=1' : ''} npx vitest run ${FILE}`;

describe('lives of a migration: ledger, status, plan --ledger, report and platform agree after every step', () => {
  it.each(SEEDS)('life seed %i', { timeout: soak(300_000, 900_000) }, async (seed) => {
    const outcome = await liveLife({ seed, persons: PERSONS, steps: STEPS, replay: replay(seed) });
    reportFigures('lives', {
      seed,
      steps: outcome.steps.length,
      // How often the person-like corrections edits of issue 40 were drawn (rows added, copied, deleted).
      personEdits: outcome.steps.filter((d) => / added | copied|deleted/.test(d)).length,
      disagreements: outcome.disagreements.length,
      failedAtStep: outcome.disagreements[0] ? outcome.disagreements[0].step + 1 : null,
      seconds: outcome.seconds,
      // The whole story in the figures file too, so a soak's failures can be read without its console.
      ...(outcome.disagreements.length > 0 ? { failure: lifeFailure(outcome, replay(seed)) } : {}),
    });
    if (outcome.disagreements.length > 0) expect.fail(lifeFailure(outcome, replay(seed)));
  });
});
