/**
 * A range's relation refs (for the missing-target check on the main thread) as columns: one
 * entry per ref, in row order, with its row, its declaration and its key. Most rows of a CRM
 * export relate to another (every generated person has a partner), and a list of ref objects
 * per row lived until the range was packed, and on the main thread until it was settled: a
 * scavenge copied them and then promoted them (about 0.4 MB a scavenge on each thread of `plan`
 * at 1,000,000 persons, against 11 kB reading on one thread).
 */
import { NumberColumnBuilder } from './number-column.js';
import { stringAt, StringColumnBuilder, type StringColumn } from './string-column.js';
import type { RelationRef } from '../mapping/compile.js';

export interface RefColumns {
  /** The row of each ref, ascending. */
  rows: Uint32Array;
  /** Each ref's field, column and scope, as an index into `declarations` (a mapping has a few). */
  declarations: Uint32Array;
  declarationTable: Array<Pick<RelationRef, 'field' | 'column' | 'scope'>>;
  keys: StringColumn;
}

export class RefColumnsBuilder {
  private readonly rows = new NumberColumnBuilder(Uint32Array);
  private readonly declarations = new NumberColumnBuilder(Uint32Array);
  private readonly table: RefColumns['declarationTable'] = [];
  private readonly keys = new StringColumnBuilder();

  /** Adds row `row`'s refs (rows in ascending order). */
  push(row: number, refs: readonly RelationRef[]): void {
    for (const r of refs) {
      this.rows.push(row);
      this.declarations.push(this.declaration(r));
      this.keys.push(r.key);
    }
  }

  /**
   * The index of the ref's field, column and scope in the table. A mapping declares a few, and
   * its refs carry the same strings each time, so a look along the table is enough.
   */
  private declaration(r: RelationRef): number {
    const table = this.table;
    for (let d = 0; d < table.length; d++) {
      const t = table[d]!;
      if (t.field === r.field && t.column === r.column && t.scope === r.scope) return d;
    }
    return table.push({ field: r.field, column: r.column, scope: r.scope }) - 1;
  }

  build(): RefColumns {
    return { rows: this.rows.build(), declarations: this.declarations.build(), declarationTable: this.table, keys: this.keys.build() };
  }
}

/**
 * Reads the refs back row by row, for rows asked in ascending order.
 * @example const refs = new RefColumnsReader(pack.refs); refs.of(0) // [] or [{ field, column, scope, key }]
 */
export class RefColumnsReader {
  private next = 0;
  constructor(private readonly columns: RefColumns) {}

  of(row: number): readonly RelationRef[] {
    const { rows, declarations, declarationTable, keys } = this.columns;
    if (rows[this.next] !== row) return NO_REFS;
    const out: RelationRef[] = [];
    for (; rows[this.next] === row; this.next++) {
      const { field, column, scope } = declarationTable[declarations[this.next]!]!;
      out.push({ field, column, scope, key: stringAt(keys, this.next) });
    }
    return out;
  }
}

const NO_REFS: readonly RelationRef[] = Object.freeze([]);
