/**
 * What a run did with corrections, in the words `run` and `migrate` both print: duplicates that
 * came back unedited, columns a corrections file holds that are none of its source's, and export
 * rows left alone because a correction replaced them (docs/reconciliation.md).
 */
import type { RunReport } from '../pipeline/runner/index.js';

const num = (v: number) => v.toLocaleString('en-US');

/**
 * One line per note, without indentation.
 * @example correctionsNotes(report) // ['2 duplicate-key row(s) came back unedited: left refused, not sent']
 */
export function correctionsNotes(r: RunReport): string[] {
  const out: string[] = [];
  if (r.corrections) {
    if (r.corrections.unchangedDuplicates > 0)
      out.push(`${num(r.corrections.unchangedDuplicates)} duplicate-key row(s) came back unedited: left refused, not sent`);
    const refused = r.corrections.refused ?? [];
    if (refused.length > 0) {
      out.push(
        `${num(refused.length)} row(s) of the corrections refused before anything was sent (no refused record of the ledger is theirs to replace; not written as records):`,
      );
      for (const x of refused.slice(0, 20)) out.push(`  ${x.message}`);
      if (refused.length > 20) out.push(`  … and ${num(refused.length - 20)} more (the run's report in the ledger lists them all)`);
    }
    for (const n of r.corrections.ignoredColumns ?? [])
      out.push(
        `${n.file}: column${n.columns.length === 1 ? '' : 's'} ${n.columns.join(', ')} ${n.columns.length === 1 ? 'is' : 'are'} not in the source ${n.source}: ignored`,
      );
  }
  if ((r.keptCorrected ?? 0) > 0)
    out.push(
      `${num(r.keptCorrected)} row(s) of the export unchanged since a corrections file replaced them: the corrections stand, not sent again`,
    );
  return out;
}
