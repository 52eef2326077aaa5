/**
 * Each refused row's story, read back from the ledger: where it was refused and why, where it was
 * read again (a corrections file, or the fixed export), and where it stands now. The refusals are
 * kept by a trigger on the records table (`record_history`, src/ledger/schema.ts) when a later run
 * sends or refuses the record again, so the story needs no write of its own on the hot path.
 * The reconciliation report lists the stories of the pipeline's records.
 */
import type { Db } from './schema.js';
import { once } from './rows.js';
import type { RecordError, RecordState } from './types.js';

/** One step of a row's story: the state a run left the record in, with the row it read. */
export interface StoryStep {
  state: RecordState;
  run: number;
  file: string;
  line: number;
  /** The codes it was refused with (none for a state that is not a refusal). */
  codes: string[];
  /**
   * The key (or `file:line`) the refusal was under, when a correction gave the row the story's
   * key: the next step is the row "corrected as key X" (corrections.ts).
   */
  formerKey?: string;
}

/** A record refused at least once and read again since: its refusals in order, then where it is now. */
export interface RowStory {
  component: string;
  /** The legacy key, or `file:line` for a row refused before it had one. */
  legacyKey: string;
  steps: StoryStep[];
}

function codesOf(errors: string | null): string[] {
  if (!errors) return [];
  try {
    return [...new Set((JSON.parse(errors) as RecordError[]).map((e) => e.code))];
  } catch {
    return [];
  }
}

type StepRow = { state: RecordState; errors: string | null; run: number; file: string; line: number; formerKey?: string | null };

const step = (r: StepRow): StoryStep => ({
  state: r.state,
  run: r.run,
  file: r.file,
  line: r.line,
  codes: codesOf(r.errors),
  ...(r.formerKey ? { formerKey: r.formerKey } : {}),
});

export class Stories {
  private readonly keys = once(() =>
    this.db.prepare<[string], { scope: number; keyed: number; legacyKey: string; component: string }>(
      `SELECT DISTINCT h.scope, h.keyed, h.legacy_key AS legacyKey, s.component FROM record_history h JOIN scopes s ON s.id = h.scope
       WHERE s.pipeline = ? ORDER BY s.component, h.keyed DESC, h.legacy_key`,
    ),
  );
  private readonly history = once(() =>
    this.db.prepare<[number, number, string], StepRow>(
      'SELECT state, errors, run, file, line, former_key AS formerKey FROM record_history WHERE scope = ? AND keyed = ? AND legacy_key = ? ORDER BY rowid',
    ),
  );
  private readonly now = once(() =>
    this.db.prepare<[number, number, string], StepRow>(
      'SELECT state, errors, last_run AS run, file, line FROM records WHERE scope = ? AND keyed = ? AND legacy_key = ?',
    ),
  );

  constructor(private readonly db: Db) {}

  /**
   * The stories of a pipeline's records, the first `limit` of them by legacy key, and how many there are.
   * @example ledger.stories.of('crm', 100) // { total: 2, stories: [{ legacyKey: '100009', steps: [{ state: 'rejected', run: 1, file: 'klanten.csv', line: 11, codes: ['INVALID_FIELD_VALUE'] }, { state: 'imported', run: 2, file: 'corrections/klanten.corrections.csv', line: 2, codes: [] }] }] }
   */
  of(pipeline: string, limit: number): { total: number; stories: RowStory[] } {
    const keys = this.keys().all(pipeline);
    const stories = keys.slice(0, limit).map((k): RowStory => {
      const steps = this.history().all(k.scope, k.keyed, k.legacyKey).map(step);
      const current = this.now().get(k.scope, k.keyed, k.legacyKey);
      if (current) steps.push(step(current));
      return { component: k.component, legacyKey: k.legacyKey, steps };
    });
    return { total: keys.length, stories };
  }
}
