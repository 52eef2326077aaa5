/**
 * A parent source's children made ready to read: each child source's files, how a child row
 * names its parent (the parent's key, read through the parent's key transforms; or the parent
 * child's id), its own id, the columns its mapping reads, and its own children. One tree per
 * top-level source (prepare-pipeline.ts).
 */
import type { PipelineDefinition, SourceDefinition } from '../definition/load-pipeline.js';
import type { CompiledMapping, Values } from '../mapping/compile.js';
import type { Condition, Expr } from '../mapping/schema.js';
import { listSourceFiles, type SourceFile } from '../source/index.js';
import { childrenOf } from './splice.js';

export interface PreparedChild {
  def: SourceDefinition & { child: NonNullable<SourceDefinition['child']> };
  files: SourceFile[];
  /** The parent's key a row names, as the parent reads its own (undefined: the column is empty). */
  parentKey(values: Values): string | undefined;
  /** The row's own id (child.id), undefined when it declares none or the column is empty. */
  id(values: Values): string | undefined;
  /** Columns its file must hold: the parent-key column, the id, and what the item reads. */
  columns: ReadonlySet<string>;
  children: PreparedChild[];
}

const cellText = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v.trim() : String(v));

/** The children of `parent` (a top-level source with its compiled mapping), each with theirs. */
export async function prepareChildren(
  def: PipelineDefinition,
  parent: SourceDefinition,
  mapping: CompiledMapping,
): Promise<PreparedChild[]> {
  const keyOfRoot = (v: unknown) => mapping.key({ [mapping.keyColumn]: v });
  const build = async (of: SourceDefinition, keyOf: (v: unknown) => string | undefined): Promise<PreparedChild[]> => {
    const out: PreparedChild[] = [];
    for (const c of childrenOf(of.name, def.sources)) {
      const child = c.child!;
      const idColumn = child.id;
      const ownId = (v: unknown) => {
        const t = cellText(v);
        return t === '' ? undefined : t;
      };
      const columns = new Set([child.key, ...(idColumn ? [idColumn] : []), ...itemColumns(c.childMapping!.item)]);
      out.push({
        def: c as PreparedChild['def'],
        files: await listSourceFiles(def.dir, c),
        parentKey: (values) => keyOf(values[child.key]),
        id: (values) => (idColumn === undefined ? undefined : ownId(values[idColumn])),
        columns,
        children: await build(c, ownId),
      });
    }
    return out;
  };
  return build(parent, keyOfRoot);
}

/** The columns an item reads from its row (not those inside an `each` of it, which are paths in a list). */
function itemColumns(e: Expr): string[] {
  const out: string[] = [];
  const when = (w: Condition | Condition[] | undefined) => {
    for (const c of w === undefined ? [] : Array.isArray(w) ? w : [w]) out.push(c.column);
  };
  const walk = (x: Expr) => {
    when(x.when);
    if ('column' in x) out.push(x.column);
    else if ('concat' in x) x.concat.forEach(walk);
    else if ('first' in x) x.first.forEach(walk);
    else if ('object' in x) Object.values(x.object).forEach(walk);
    else if ('list' in x) x.list.forEach(walk);
    else if ('each' in x) out.push(x.each);
    else if ('referenceId' in x && x.referenceId.column !== undefined) out.push(x.referenceId.column);
  };
  walk(e);
  // `.` and paths into nested values are not header columns of their own.
  return out.filter((c) => c !== '.' && !c.startsWith('@'));
}
