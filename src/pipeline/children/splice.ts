/**
 * A parent's mapping with its children written in: each child source becomes an `each` over the
 * rows attached to the parent row (column `@<child>`, filled by attach.ts), its `item` the child
 * mapping's, added to the list field it goes `into` — after what the parent's own mapping puts
 * there (a main address from the customer file, then the address file's rows). Children of a
 * child go into its item the same way. So a child row is mapped by the one mapping compiler,
 * with every refusal, trace and `{index}` an `each` has; nothing is compiled twice.
 *
 * A child's code tables join the parent's under its own name (`<child>/<table>`), so two
 * mappings may each have a table `land`.
 */
import type { Expr, MappingFile, Transform } from '../mapping/schema.js';
import type { SourceDefinition } from '../definition/load-pipeline.js';

/** The column of a parent row (or of a child row) that holds the rows attached to it. */
export const attachColumn = (child: string): string => `@${child}`;

/** The direct children of `parent`, in the pipeline file's order. */
export function childrenOf(parent: string, sources: readonly SourceDefinition[]): SourceDefinition[] {
  return sources.filter((s) => s.child?.of === parent);
}

/**
 * `root`'s mapping with every descendant child spliced in. Throws an Error naming the child
 * mapping when an item its children go into is not an object.
 */
export function splicedMapping(root: SourceDefinition, sources: readonly SourceDefinition[]): MappingFile {
  const spec = root.mappingFile.spec;
  const codes = { ...spec.codes };
  const record = { ...spec.record };
  for (const c of childrenOf(root.name, sources)) record[c.child!.into] = withItem(record[c.child!.into], childEach(c, sources, codes));
  return { ...spec, record, codes };
}

/** The `each` a child becomes, its own children spliced into its item, its code tables renamed into `codes`. */
function childEach(child: SourceDefinition, sources: readonly SourceDefinition[], codes: MappingFile['codes']): Expr {
  const m = child.childMapping!;
  const rename = (t: string) => `${child.name}/${t}`;
  for (const [name, table] of Object.entries(m.codes)) codes[rename(name)] = table;
  let item = renameCodes(m.item, rename);
  const grand = childrenOf(child.name, sources);
  if (grand.length > 0) {
    if (!('object' in item))
      throw new Error(
        `${child.mappingFile.display}: item: ${grand.map((g) => g.name).join(', ')} go into this item's lists, expected an object (item: { object: { … } })`,
      );
    const object = { ...item.object };
    for (const g of grand) object[g.child!.into] = withItem(object[g.child!.into], childEach(g, sources, codes));
    item = { ...item, object };
  }
  return { each: attachColumn(child.name), item };
}

/** `each` added to what a field already holds: its list's items, or after its one expression. */
function withItem(existing: Expr | undefined, each: Expr): Expr {
  if (existing === undefined) return each;
  if ('list' in existing) return { ...existing, list: [...existing.list, each] };
  return { list: [existing, each] };
}

/** `e` with the code tables its transforms name renamed. */
function renameCodes(e: Expr, rename: (table: string) => string): Expr {
  const ts = (list: Transform[]): Transform[] =>
    list.map((t) => {
      if (typeof t !== 'object' || !('code' in t)) return t;
      return typeof t.code === 'string' ? { code: rename(t.code) } : { code: { ...t.code, table: rename(t.code.table) } };
    });
  const walk = (x: Expr): Expr => {
    if ('column' in x) return { ...x, transforms: ts(x.transforms) };
    if ('concat' in x) return { ...x, concat: x.concat.map(walk), transforms: ts(x.transforms) };
    if ('first' in x) return { ...x, first: x.first.map(walk), transforms: ts(x.transforms) };
    if ('object' in x) return { ...x, object: Object.fromEntries(Object.entries(x.object).map(([k, v]) => [k, walk(v)])) };
    if ('list' in x) return { ...x, list: x.list.map(walk) };
    if ('each' in x) return { ...x, item: walk(x.item) };
    if ('referenceId' in x) return { ...x, referenceId: { ...x.referenceId, transforms: ts(x.referenceId.transforms) } };
    return x;
  };
  return walk(e);
}
