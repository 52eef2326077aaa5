/**
 * The child declarations of a pipeline file, checked where the shape alone cannot: the parent
 * exists and is not the source itself, no source is its own ancestor, a parent of children has
 * an id when it is a child itself, and two children do not share a parent's list twice over in
 * a way that cannot be told apart. Each problem at its path, so the loader points at its line.
 */
import type { SourceSpec } from '../definition/schema.js';
import { compileTransform } from '../mapping/transforms.js';
import { checkMappingDeclarations, type MappingFile } from '../mapping/schema.js';
import type { ChildMappingFile } from './child-schema.js';

export interface DeclarationProblem {
  path: (string | number)[];
  message: string;
}

/** The problems of the `child:` blocks of `sources` (none when all hold). */
export function checkChildDeclarations(sources: readonly SourceSpec[]): DeclarationProblem[] {
  const problems: DeclarationProblem[] = [];
  const byName = new Map(sources.map((s) => [s.name, s]));
  sources.forEach((s, i) => {
    if (!s.child) return;
    const parent = byName.get(s.child.of);
    if (!parent) {
      const names = sources.filter((o) => o !== s).map((o) => o.name);
      problems.push({
        path: ['sources', i, 'child', 'of'],
        message: `no source ${JSON.stringify(s.child.of)} in this pipeline, expected one of ${names.join(', ') || '(none)'}`,
      });
      return;
    }
    if (parent === s) {
      problems.push({ path: ['sources', i, 'child', 'of'], message: `a source cannot be a child of itself, expected another source` });
      return;
    }
    // Walk up: a cycle would make every source of it wait for another.
    const seen = new Set<string>([s.name]);
    for (let at: SourceSpec | undefined = parent; at?.child; at = byName.get(at.child.of)) {
      if (seen.has(at.name)) {
        problems.push({
          path: ['sources', i, 'child', 'of'],
          message: `${s.name} is its own ancestor (${[...seen, at.name].join(' → ')}), expected a parent that is no child of ${s.name}`,
        });
        return;
      }
      seen.add(at.name);
    }
    if (parent.child && parent.child.id === undefined)
      problems.push({
        path: ['sources', i, 'child', 'of'],
        message: `${parent.name} is a child source without an id, so no row can name one of its rows as parent; declare child.id on ${parent.name}`,
      });
  });
  return problems;
}

/** The top-level source a child belongs to in the end (the source itself when it is no child). */
export function rootOf<S extends { name: string; child?: { of: string } | undefined }>(source: S, sources: readonly S[]): S {
  let at = source;
  for (let hops = 0; at.child && hops <= sources.length; hops++) at = sources.find((s) => s.name === at.child!.of) ?? at;
  return at;
}

/**
 * What a child mapping's item cannot be, checked as the item of an `each` in the parent's list
 * `into` (the same checks a mapping file gets: code tables, date formats, regular expressions,
 * and fields the staged list item has — a misspelt one would be dropped by staging without a
 * word). Each problem at its path in the child mapping file.
 */
export function checkChildItem(m: ChildMappingFile, into: string, type: MappingFile['type']): DeclarationProblem[] {
  const stand: MappingFile = {
    type,
    key: { column: '-', scope: '-', transforms: [] },
    record: { [into]: { each: '-', item: m.item } },
    codes: m.codes,
  };
  return checkMappingDeclarations(stand, compileTransform).map((p) => {
    const [, field, ...rest] = p.path;
    // record.<into> itself: the list is not one a staged record has
    if (field === into && rest[0] === 'item') return { path: ['item', ...rest.slice(1)], message: p.message };
    return { path: ['item'], message: `${into}: ${p.message}` };
  });
}
