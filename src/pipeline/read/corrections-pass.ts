/**
 * The corrections pass: instead of the sources, only the rows of corrections files (the refused
 * rows, fixed; docs/reconciliation.md), each mapped and checked like any other. The other rows of
 * the sources still count: the key pass marks every key they hold, so a corrected row's relations
 * find their targets, and a corrected row whose key another row holds is a duplicate of it.
 *
 * A row refused as a duplicate (DUPLICATE_LEGACY_KEY) comes back in one of three ways: unedited
 * (left refused, counted, not yielded); with the key still held by a row that staged (refused
 * again, naming that row); or with a key now free, because its holder is itself a refused row
 * being corrected ("released"), or because the user gave it a key of its own.
 */
import { readCorrections, type CorrectionsIndex } from '../checks/corrections.js';
import { KeyIndex, rejectUnreadable, rowChecker, type KeyChecks } from '../checks/index.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import { preparePipeline, type PreparedSource } from '../prepare-pipeline.js';
import { isSourceRowError } from '../source/index.js';
import type { FrontRow } from '../types.js';
import { keyPass } from './key-pass.js';
import { StagecoachError } from '../../contract/errors.js';
import type { CorrectionTarget } from '../../ledger/index.js';
import type { CorrectionsSummary, ReadBatchesOptions, RefusedCorrection } from './options.js';

/** The error of a corrections row of a child source, or of a source with children (not supported yet). */
function childCorrections(def: PipelineDefinition, source: string): StagecoachError {
  const children = def.sources.filter((c) => c.child?.of === source).map((c) => c.name);
  const what = children.length > 0 ? `${source} has child sources (${children.join(', ')})` : `${source} is a child source`;
  return new StagecoachError(
    'CONFIG_INVALID',
    `corrections of ${source} cannot be read yet: ${what}, and a corrected row must be staged with its parent's other child rows; fix the rows in the export files (the corrections file names each by file:line) and run the pipeline again`,
    { field: 'corrections', value: source },
  );
}

/** Yields the corrected rows, one batch each (a corrections file is small: a run's refusals). */
export async function* correctionsPass(
  def: PipelineDefinition,
  correctionsFiles: string | readonly string[],
  options: ReadBatchesOptions,
): AsyncGenerator<Iterable<FrontRow>> {
  const { signal } = options;
  const { sources, files } = await preparePipeline(def);
  const corrections = await readCorrections(correctionsFiles, def, signal);
  const index = new KeyIndex();
  try {
    await keyPass(sources, index, signal);

    // Only the corrected rows. Their originals' keys are in the index already: a corrected row
    // is a duplicate of another corrected row, or of a source row that holds its key and was not
    // itself refused (a row refused as a duplicate never replaces the row that staged).
    const keyChecks: KeyChecks = { index, duplicates: undefined, rejectMissing: def.checks.missingRelationTarget === 'reject', files };
    const amongThemselves: KeyChecks = { ...keyChecks, duplicates: new KeyIndex() };
    const checkRow = rowChecker(options.keepRecords !== false);
    const released = await releasedKeys(corrections, sources);
    const summary = options.correctionsSummary;
    if (summary) summary.files = corrections.files;
    const vetted = vetAgainstLedger(options, summary, await surveyRows(def, corrections, sources, options));
    for await (const { row: read, sourceName, codes, unchanged, origin } of corrections.rows()) {
      const s = sources.find((x) => x.def.name === sourceName);
      // Not yet for child sources (issue 46): a corrected row must be joined with its parent's
      // other children (and re-stage the parent), never staged without them.
      if (!s || s.children.length > 0) throw childCorrections(def, sourceName);
      // The export row it corrects travels with the row, to tie it to its record (corrections.ts).
      const row = origin ? { ...read, provenance: { ...read.provenance, origin } } : read;
      const key = isSourceRowError(row) ? undefined : s.mapping.key(row.values);
      const target = vetted(row, sourceName, origin, key);
      if (target === REFUSED) continue;
      if (isSourceRowError(row)) {
        yield [rejectUnreadable(row)];
        continue;
      }
      const fileIndex = corrections.fileIndex(files, row.provenance.file);
      if (codes.includes('DUPLICATE_LEGACY_KEY') && unchanged) {
        if (summary) summary.unchangedDuplicates++;
        continue;
      }
      // A key the record did not have (a duplicate given one, a key cell filled in or changed):
      // refused when a row that is not being corrected holds it, so a correction never takes over
      // another record (a live one least of all).
      const keyChanged =
        key !== undefined &&
        (codes.includes('DUPLICATE_LEGACY_KEY') || (target !== undefined && (!target.keyed || target.legacyKey !== key)));
      const holder = keyChanged ? index.get(s.mapping.scope, key) : undefined;
      const holderInLedger = keyChanged && !holder && target ? options.correctionTarget?.(undefined, key) : undefined;
      if (key !== undefined && (holder || holderInLedger) && !released.has(`${s.mapping.scope}\u0000${key}`)) {
        const at = holder
          ? holder.line > 0
            ? `the row at ${files[holder.fileIndex] ?? '?'}:${holder.line}`
            : `a row of ${s.def.name}`
          : `the record read from ${holderInLedger!.at} (${holderInLedger!.state})`;
        yield [
          {
            kind: 'rejected',
            component: 'Counterparties',
            legacyKey: key,
            reasons: [
              {
                field: s.mapping.keyColumn,
                value: key,
                code: 'DUPLICATE_LEGACY_KEY',
                message: `${s.mapping.keyColumn}: duplicate legacy key ${s.mapping.scope} ${key}, still held by ${at}; give this row its own key if it is another counterparty, or leave it out`,
              },
            ],
            row,
          },
        ];
        continue;
      }
      if (key !== undefined) index.mark(s.mapping.scope, key);
      yield [checkRow(s.mapping, row, fileIndex, amongThemselves)];
    }
    if (summary) summary.ignoredColumns = corrections.ignoredColumns;
  } finally {
    index.close();
  }
}

/** What `vetAgainstLedger`'s check answers for a row it refused (noted in the summary, not yielded). */
const REFUSED = Symbol('refused');

/** The states of a record a corrections file may replace: refused before upload, by staging, or at validation. */
const REFUSED_STATES: ReadonlySet<string> = new Set(['rejected', 'failed', 'invalid']);

/**
 * The check of each corrections row against the ledger, before anything is sent
 * (docs/reconciliation.md, "What a corrections file may do"): the record the row stands for (its
 * `_origin`, else its key) must be one the ledger holds as refused, of the row's own source, and
 * corrected once in the pass. Anything else — a row added (no such record), a row whose record is
 * live or staged (a file of an earlier round, a row added with a good record's key), the same
 * record twice, a row under another source's name — is refused and noted, and not written as a
 * record: a correction never adds a source row and never replaces a record that was not refused.
 * Returns the target record (undefined without a ledger), or REFUSED.
 */
function vetAgainstLedger(options: ReadBatchesOptions, summary: CorrectionsSummary | undefined, survey: Survey) {
  const lookup = options.correctionTarget;
  const { chosen, targets } = survey;
  return (
    row: FrontRow['row'],
    sourceName: string,
    origin: { file: string; line: number } | undefined,
    key: string | undefined,
  ): CorrectionTarget | undefined | typeof REFUSED => {
    if (!lookup) return undefined;
    const where = `${row.provenance.file}:${row.provenance.line}`;
    // An unreadable row says what is wrong with it too.
    const own = 'code' in row ? `; the row itself: ${row.message}` : '';
    const refuse = (reason: RefusedCorrection['reason'], message: string): typeof REFUSED => {
      const refused = { file: row.provenance.file, line: row.provenance.line, source: sourceName, reason, legacyKey: key };
      if (summary) (summary.refused ??= []).push({ ...refused, message: `${where}: ${message}${own}` });
      return REFUSED;
    };
    const named = origin ? `the export row ${origin.file}:${origin.line}` : key !== undefined ? `key ${key}` : 'no _origin and no key';
    // As the ledger held it before this run wrote anything (a copy's record is being written by now).
    const target = targets.has(where) ? targets.get(where) : targetOf(lookup, origin, key);
    if (!target)
      return refuse(
        'added',
        `no refused row of ${sourceName} is this row's (${named}): a corrections file corrects refused rows and never adds one; a new counterparty goes into the export`,
      );
    if (target.source !== sourceName)
      return refuse('other-source', `the row stands for a record of ${target.source} (${target.at}), not of ${sourceName}: left out`);
    if (!REFUSED_STATES.has(target.state))
      return refuse(
        'not-refused',
        `the record of ${named} (${target.at}) is ${target.state}${target.migration ? ` in migration ${target.migration}` : ''}, not refused: a corrections file replaces only refused records (is the file of an earlier round, or the row added?); left as it is`,
      );
    // The platform holds a record refused at validation under its referenceId: given another
    // key, the corrected row would be a second record beside it (the export's row counted twice).
    if (target.state === 'invalid' && !target.removed && target.keyed && key !== undefined && key !== target.legacyKey)
      return refuse(
        'key-change-held',
        `the record of ${named} (${target.at}) was refused at validation and is staged on the platform under key ${target.legacyKey}: a correction keeps its key (fix the other values); to give it another key, drop it from staging first (migrate --drop-invalid)`,
      );
    const first = chosen.get(identityOf(target));
    if (first !== undefined && first !== where)
      return refuse('repeated', `the record of ${named} is corrected by ${first} in the same run: this row is left out`);
    return target;
  };
}

type Lookup = NonNullable<ReadBatchesOptions['correctionTarget']>;

/** The record a row stands for: by its `_origin`, else (or when the origin finds none) by its key. */
function targetOf(
  lookup: Lookup,
  origin: { file: string; line: number } | undefined,
  key: string | undefined,
): CorrectionTarget | undefined {
  if (!origin && key === undefined) return undefined;
  return lookup(origin, origin ? undefined : key) ?? (origin && key !== undefined ? lookup(undefined, key) : undefined);
}

const identityOf = (t: CorrectionTarget) => `${t.keyed ? 1 : 0}\u0000${t.legacyKey}`;

/** The rows of a pass against the ledger, before anything is written: each row's record, and the row that corrects each record. */
interface Survey {
  /** Per record (identityOf), the row (file:line) that corrects it. */
  chosen: Map<string, string>;
  /** Per row (file:line), the record it stands for as the ledger held it before the run wrote anything. */
  targets: Map<string, CorrectionTarget | undefined>;
}

/**
 * Looks up every row's record before anything is written (a row's write must not change what a
 * later row of the same pass is checked against). When several rows stand for one record (a row
 * copied, the same row in two files), the one that corrects it is the first edited row, else the
 * first row; the others are refused as repeats. Without a ledger, nothing.
 */
async function surveyRows(
  def: PipelineDefinition,
  corrections: CorrectionsIndex,
  sources: readonly PreparedSource[],
  options: ReadBatchesOptions,
): Promise<Survey> {
  const chosen = new Map<string, { where: string; edited: boolean }>();
  const targets = new Map<string, CorrectionTarget | undefined>();
  const lookup = options.correctionTarget;
  if (!lookup) return { chosen: new Map(), targets };
  for await (const c of corrections.rows()) {
    const s = sources.find((x) => x.def.name === c.sourceName);
    // Not yet for child sources (issue 46): refused before the ledger is asked of any row.
    if (!s || s.children.length > 0) throw childCorrections(def, c.sourceName);
    const key = isSourceRowError(c.row) ? undefined : s.mapping.key(c.row.values);
    const target = targetOf(lookup, c.origin, key);
    const where = `${c.row.provenance.file}:${c.row.provenance.line}`;
    targets.set(where, target);
    if (!target) continue;
    const id = identityOf(target);
    const was = chosen.get(id);
    const edited = !c.unchanged;
    if (!was || (edited && !was.edited)) chosen.set(id, { where, edited });
  }
  return { chosen: new Map([...chosen].map(([id, c]) => [id, c.where])), targets };
}

/** Keys whose holder is itself a refused row being corrected (not a duplicate): a duplicate of it may take the key. */
async function releasedKeys(corrections: CorrectionsIndex, sources: readonly PreparedSource[]): Promise<Set<string>> {
  const released = new Set<string>();
  for await (const c of corrections.rows()) {
    if (isSourceRowError(c.row) || c.codes.includes('DUPLICATE_LEGACY_KEY')) continue;
    const s = sources.find((x) => x.def.name === c.sourceName);
    if (!s) continue; // a child source's row: refused where the rows are read
    const key = s.mapping.key(c.row.values);
    if (key !== undefined) released.add(`${s.mapping.scope}\u0000${key}`);
  }
  return released;
}
