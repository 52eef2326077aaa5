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
import type { ReadBatchesOptions } from './options.js';

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
    for await (const { row: read, sourceName, codes, unchanged, origin } of corrections.rows()) {
      const s = sources.find((x) => x.def.name === sourceName);
      // Not yet for child sources (issue 46): a corrected row must be joined with its parent's
      // other children (and re-stage the parent), never staged without them.
      if (!s || s.children.length > 0) throw childCorrections(def, sourceName);
      // The export row it corrects travels with the row, to tie it to its record (corrections.ts).
      const row = origin ? { ...read, provenance: { ...read.provenance, origin } } : read;
      if (isSourceRowError(row)) {
        yield [rejectUnreadable(row)];
        continue;
      }
      const fileIndex = corrections.fileIndex(files, row.provenance.file);
      const key = s.mapping.key(row.values);
      if (codes.includes('DUPLICATE_LEGACY_KEY')) {
        if (unchanged) {
          if (summary) summary.unchangedDuplicates++;
          continue;
        }
        const holder = key === undefined ? undefined : index.get(s.mapping.scope, key);
        if (key !== undefined && holder && !released.has(`${s.mapping.scope}\u0000${key}`)) {
          const at = holder.line > 0 ? `the row at ${files[holder.fileIndex] ?? '?'}:${holder.line}` : `a row of ${s.def.name}`;
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
                  message: `${s.mapping.keyColumn}: duplicate legacy key ${s.mapping.scope} ${key}, still held by ${at}, which staged; give this row its own key if it is another counterparty, or leave it out`,
                },
              ],
              row,
            },
          ];
          continue;
        }
      }
      if (key !== undefined) index.mark(s.mapping.scope, key);
      yield [checkRow(s.mapping, row, fileIndex, amongThemselves)];
    }
    if (summary) summary.ignoredColumns = corrections.ignoredColumns;
  } finally {
    index.close();
  }
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
