import { NumberColumnBuilder } from './number-column.js';

/**
 * Many strings as one: a joined string and where each ends. Threads exchange messages by
 * structured clone, which copies thousands of small strings one by one and leaves the receiver
 * as many objects for its scavenges to copy; one string and one transferable array of ends cost
 * a fraction of that (the parallel reader's packs). The ledger writer's batches stay objects: as
 * columns they measured no faster in a whole run and the run's peak RSS was higher (424fc02).
 */
export interface StringColumn {
  text: string;
  /** `ends[i]`: where the i-th string ends in `text`; it starts where the one before ends. */
  ends: Uint32Array;
}

/** The i-th string of a column; '' at every row of a column nothing was pushed to. */
export function stringAt(column: StringColumn, i: number): string {
  return column.text.slice(i === 0 ? 0 : column.ends[i - 1], column.ends[i]);
}

/**
 * Builds a StringColumn as its strings arrive, joining them a few hundred at a time: a range's
 * strings then die young instead of living one by one until the range is packed, which made
 * every scavenge of the reading thread copy them again.
 * @example const b = new StringColumnBuilder(); b.push('K1'); b.push('K22'); stringAt(b.build(), 1) // 'K22'
 */
export class StringColumnBuilder {
  private readonly parts: string[] = [];
  private readonly pending: string[] = [];
  private readonly ends = new NumberColumnBuilder(Uint32Array);
  private at = 0;

  /** Strings pushed so far. */
  get length(): number {
    return this.ends.length;
  }

  push(s: string): void {
    this.pending.push(s);
    this.ends.push((this.at += s.length));
    if (this.pending.length === 256) {
      this.parts.push(this.pending.join(''));
      this.pending.length = 0;
    }
  }

  build(): StringColumn {
    this.parts.push(this.pending.join(''));
    this.pending.length = 0;
    return { text: this.parts.join(''), ends: this.ends.build() };
  }
}
