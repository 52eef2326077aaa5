/**
 * Joins the child rows of one top-level source to its rows, and accounts for every one of them.
 *
 * `fill` reads every child file (any registered format, its own encoding and options) into the
 * disk index (child-index.ts), counting each file twice like any source file (its tally) and
 * yielding the rows it cannot read as refused rows. Then, for each parent row, `attach` takes
 * its children out of the index (and theirs, for children of children) into the row's `@<child>`
 * columns, which the spliced mapping reads (splice.ts); `settle` takes the parent's verdict and
 * says what became of each child row: staged with its parent, or refused with its own file:line
 * — the reason of its own value when the parent was refused for it, else CHILD_PARENT_REFUSED —
 * and a second row with an id its parent already has is CHILD_DUPLICATE. `orphans`, at the end,
 * refuses the rows no parent row took (CHILD_ORPHAN). So every child row read is counted once:
 * read = attached + duplicates + orphans (+ the rows of parents a resumed run did not read).
 */
import type { Values } from '../mapping/compile.js';
import { rejectUnreadable } from '../checks/index.js';
import { formatTallies, isSourceRowError, newTally, readSourceBatches, type SourceTally } from '../source/index.js';
import type { FrontRow, RejectReason, SourceRow, SourceRowError } from '../types.js';
import { ChildIndex, ROOT_PARENT } from './child-index.js';
import type { PreparedChild } from './prepare.js';
import type { ChildCode } from '../definition/child-schema.js';
import { attachColumn } from './splice.js';
import type { ChildTally } from '../checks/child-tally.js';

/** A child row joined to a parent row, with its own children. */
interface Node {
  child: Slot;
  row: SourceRow;
  children: Node[];
}

/** A child source with its number in the index and its tally. */
interface Slot {
  prepared: PreparedChild;
  no: number;
  tally: ChildTally;
  children: Slot[];
}

export interface Attached {
  nodes: Node[];
  /** Child rows refused as duplicates while taking (yielded after the parent). */
  duplicates: FrontRow[];
}

type Rejected = Extract<FrontRow, { kind: 'rejected' }>;

export class ChildJoin {
  private readonly index = new ChildIndex();
  private readonly slots: Slot[];
  private readonly all: Slot[] = [];
  /** The columns the join adds to rows (`@<child>`), taken off again before a row is kept. */
  private readonly joined = new Set<string>();

  constructor(
    private readonly parentSource: string,
    children: readonly PreparedChild[],
    private readonly parentKey: (values: Values) => string | undefined,
    childTallies: ChildTally[] | undefined,
  ) {
    const slot = (c: PreparedChild, parent: number): Slot => {
      const tally: ChildTally = {
        source: c.def.name,
        of: c.def.child.of,
        into: c.def.child.into,
        files: c.files.map((f) => f.file),
        rowsRead: 0,
        rowErrors: 0,
        attached: 0,
        withMappedParent: 0,
        withRefusedParent: 0,
        orphans: 0,
        duplicates: 0,
        settledBefore: 0,
      };
      childTallies?.push(tally);
      const no = this.index.source(c.def.name, parent);
      const s: Slot = { prepared: c, no, tally, children: [] };
      this.all.push(s);
      this.joined.add(attachColumn(c.def.name));
      s.children = c.children.map((g) => slot(g, no));
      return s;
    };
    this.slots = children.map((c) => slot(c, ROOT_PARENT));
  }

  /** Reads every child file into the index; yields the rows that cannot be read, refused. */
  async *fill(options: {
    signal?: AbortSignal | undefined;
    hashRows: boolean;
    tallies?: SourceTally[] | undefined;
  }): AsyncGenerator<FrontRow[]> {
    for (const s of this.all) {
      const c = s.prepared;
      for (const f of c.files) {
        const tally = options.tallies && formatTallies(c.def.format) ? newTally(c.def.name, f.file, c.def.format) : undefined;
        if (tally) options.tallies!.push(tally);
        const fileNo = this.index.file(f.file);
        const batches = readSourceBatches(c.def, f, {
          requiredColumns: c.columns,
          signal: options.signal,
          hashRows: options.hashRows,
          tally,
        });
        for await (const batch of batches) {
          const rows: { row: SourceRow; parentKey: string | undefined }[] = [];
          const unreadable: FrontRow[] = [];
          for (const row of batch as (SourceRow | SourceRowError)[]) {
            if (isSourceRowError(row)) {
              s.tally.rowErrors++;
              unreadable.push(rejectUnreadable(row));
              continue;
            }
            s.tally.rowsRead++;
            rows.push({ row, parentKey: c.parentKey(row.values) });
          }
          this.index.add(s.no, fileNo, rows);
          if (unreadable.length > 0) yield unreadable;
        }
      }
    }
    this.index.ready();
  }

  /** Takes the children of a parent row out of the index into its `@<child>` columns. */
  attach(values: Values): Attached {
    const duplicates: FrontRow[] = [];
    const key = this.parentKey(values);
    const nodes = key === undefined ? [] : this.take(ROOT_PARENT, this.slots, key, values, duplicates);
    return { nodes, duplicates };
  }

  /**
   * The parent's verdict, its reasons naming child rows by file:line, followed by what became of
   * its child rows: nothing more when it is mapped (they go with it); each refused, with its
   * own reason or its parent's, when it is refused. The `@` columns are taken off the row.
   */
  *settle(verdict: FrontRow, attached: Attached, values: Values): Generator<FrontRow> {
    const nodes = attached.nodes;
    if (verdict.kind === 'mapped') {
      walk(nodes, (n) => n.child.tally.withMappedParent++);
      stripAttached(values, this.joined);
      yield verdict;
      yield* attached.duplicates;
      return;
    }
    walk(nodes, (n) => n.child.tally.withRefusedParent++);
    const blamed = new Map<Node, RejectReason[]>();
    const reasons = verdict.reasons.map((r) => named(r, nodes, blamed));
    stripAttached(values, this.joined);
    yield { ...verdict, reasons };
    yield* attached.duplicates;
    const parentAt = `${verdict.row.provenance.file}:${verdict.row.provenance.line}`;
    const codes = [...new Set(verdict.reasons.map((r) => r.code))].join(', ');
    const own = `${this.parentSource} ${verdict.legacyKey ?? '(no key)'} at ${parentAt}`;
    const rows: FrontRow[] = [];
    walk(nodes, (n) => {
      const mine = blamed.get(n);
      rows.push(
        childReject(
          n.row,
          mine ?? [
            reason(
              'CHILD_PARENT_REFUSED',
              n.child.prepared.def.child.key,
              n.row.values[n.child.prepared.def.child.key],
              `${n.child.prepared.def.child.key}: its parent ${own} was refused (${codes}), so this row was not staged with it; it goes with its parent once the parent is corrected`,
            ),
          ],
          this.joined,
        ),
      );
    });
    yield* rows;
  }

  /** A resumed run: the children of a parent row settled before the start are taken out, not reported. */
  settledBefore(parentKey: string): void {
    const drop = (parent: number, slots: Slot[], key: string) => {
      for (const c of this.index.take(parent, key)) {
        const s = slots.find((x) => x.no === c.child)!;
        s.tally.settledBefore++;
        const id = s.prepared.id(c.row.values);
        if (id !== undefined) drop(s.no, s.children, id);
      }
    };
    drop(ROOT_PARENT, this.slots, parentKey);
  }

  /** The rows no parent took, refused as orphans, in file order per child source. */
  *orphans(): Generator<FrontRow[]> {
    for (const s of this.all) {
      const c = s.prepared.def;
      const parent = c.child.of;
      let batch: FrontRow[] = [];
      for (const left of this.index.left(s.no)) {
        s.tally.orphans++;
        const value = left.row.values[c.child.key];
        const message =
          left.parentKey === undefined
            ? `${c.child.key}: the parent key is empty, expected the key of a row of ${parent}`
            : `${c.child.key}: no row of ${parent} holds the key ${left.parentKey}${s.tally.settledBefore > 0 ? '' : ''}, expected the key of a row of ${parent} (an orphan: its parent is not in the export, or was left out)`;
        batch.push(childReject(left.row, [reason('CHILD_ORPHAN', c.child.key, value, message)], this.joined));
        if (batch.length >= 500) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    }
  }

  close(): void {
    this.index.close();
  }

  /** The children a row of `parent` (ROOT_PARENT or a child source's number) has under `key`, each with theirs. */
  private take(parent: number, slots: Slot[], key: string, into: Values, duplicates: FrontRow[]): Node[] {
    const nodes: Node[] = [];
    const got = this.index.take(parent, key);
    if (got.length === 0) return nodes;
    for (const s of slots) {
      const seen = new Map<string, SourceRow>();
      const kept: Values[] = [];
      for (const { child, row } of got) {
        if (child !== s.no) continue;
        const id = s.prepared.id(row.values);
        // Without an id, a row that repeats another of the same parent exactly is the duplicate.
        const same = id ?? JSON.stringify(row.values);
        const first = seen.get(same);
        if (first) {
          s.tally.duplicates++;
          duplicates.push(childReject(row, [duplicateReason(s, row, first, id)], this.joined));
          continue;
        }
        seen.set(same, row);
        s.tally.attached++;
        const children = id === undefined || s.children.length === 0 ? [] : this.take(s.no, s.children, id, row.values, duplicates);
        nodes.push({ child: s, row, children });
        kept.push(row.values);
      }
      if (kept.length > 0) into[attachColumn(s.prepared.def.name)] = kept;
    }
    return nodes;
  }
}

function duplicateReason(s: Slot, row: SourceRow, first: SourceRow, id: string | undefined): RejectReason {
  const c = s.prepared.def.child;
  const at = `${first.provenance.file}:${first.provenance.line}`;
  return id !== undefined
    ? reason(
        'CHILD_DUPLICATE',
        c.id!,
        id,
        `${c.id}: ${id} is already a row of this parent (${at}), expected each id once; give this row its own id, or leave it out`,
      )
    : reason(
        'CHILD_DUPLICATE',
        c.key,
        row.values[c.key],
        `${c.key}: this row repeats ${at} exactly, so it is not added to the parent twice; leave it out`,
      );
}

function reason(code: ChildCode, field: string, value: unknown, message: string): RejectReason {
  return { field, ...(value !== undefined ? { value } : {}), code, message };
}

function childReject(row: SourceRow, reasons: RejectReason[], joined: ReadonlySet<string>): Rejected {
  const values: Values = {};
  for (const [k, v] of Object.entries(row.values)) if (!joined.has(k)) values[k] = v;
  return { kind: 'rejected', component: 'Counterparties', reasons, row: { ...row, values } };
}

function walk(nodes: readonly Node[], f: (n: Node) => void): void {
  for (const n of nodes) {
    f(n);
    walk(n.children, f);
  }
}

/** Takes the `@<child>` columns off a row (they are the join, not the export's: an export's own `@x` stays). */
function stripAttached(values: Values, joined: ReadonlySet<string>): void {
  for (const k of joined) delete values[k];
}

/** A chain of child columns in a reason (`@adressen[1].@telefoons[0].nummer`). */
const CHAIN = /(?:@[A-Za-z0-9_-]+\[\d+\]\.?)+([^\s,;)`]*)/g;
const LINK = /@([A-Za-z0-9_-]+)\[(\d+)\]/g;

/**
 * A reason of a parent's refusal with the child rows it names shown at their file:line
 * (`in column postcode of adressen.csv:57`); each such child row is blamed with it.
 */
function named(r: RejectReason, nodes: readonly Node[], blamed: Map<Node, RejectReason[]>): RejectReason {
  if (!r.message.includes('@') && !(r.trace ?? '').includes('@')) return r;
  const hit = new Set<Node>();
  const rewrite = (text: string) =>
    text.replace(CHAIN, (chain: string, column: string) => {
      let level: readonly Node[] = nodes;
      let node: Node | undefined;
      for (const m of chain.matchAll(LINK)) {
        node = level.filter((n) => n.child.prepared.def.name === m[1])[Number(m[2])];
        if (!node) return chain;
        level = node.children;
      }
      if (!node) return chain;
      hit.add(node);
      const at = `${node.row.provenance.file}:${node.row.provenance.line}`;
      return column ? `${column} of ${at}` : at;
    });
  const out: RejectReason = { ...r, message: rewrite(r.message), ...(r.trace !== undefined ? { trace: rewrite(r.trace) } : {}) };
  for (const n of hit) blamed.set(n, [...(blamed.get(n) ?? []), out]);
  return out;
}
