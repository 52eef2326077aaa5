/**
 * What became of the rows of one child source in one read, and whether they add up: the figures
 * plan and run report (child-join.ts fills them). A leaf: the plan summary, the run report and
 * the CLI read it without importing the join.
 */

/** What became of the rows of one child source in one read (plan and run reports). */
export interface ChildTally {
  source: string;
  /** Its parent source, and the list its rows go into. */
  of: string;
  into: string;
  files: string[];
  /** Rows read, and rows its format could not read (refused as SOURCE_ROW_INVALID …). */
  rowsRead: number;
  rowErrors: number;
  /** Rows joined to a parent row, and of those: with a parent that went on to staging, with a refused parent. */
  attached: number;
  withMappedParent: number;
  withRefusedParent: number;
  orphans: number;
  duplicates: number;
  /** Rows of parents a resumed run did not read again (settled with them by the run before). */
  settledBefore: number;
}

/** The figures of a child tally that must add up: read = attached + duplicates + orphans + settled before. */
export function childTallyGap(t: ChildTally): number {
  return t.rowsRead - (t.attached + t.duplicates + t.orphans + t.settledBefore);
}

/** Why a child source's rows do not add up, in words, or undefined when they do. */
export function childTallyDisagreement(t: ChildTally): string | undefined {
  const gap = childTallyGap(t);
  if (gap === 0) return undefined;
  return `child source ${t.source}: ${t.rowsRead} rows read, but ${t.rowsRead - gap} accounted for (attached ${t.attached}, duplicates ${t.duplicates}, orphans ${t.orphans}, settled before ${t.settledBefore})`;
}

/** A plan summary with the child sources whose rows do not add up among its disagreements. */
export function withChildGaps<S extends { children?: ChildTally[]; disagreements: string[] }>(summary: S): S {
  for (const t of summary.children ?? []) {
    const d = childTallyDisagreement(t);
    if (d) summary.disagreements.push(d);
  }
  return summary;
}
