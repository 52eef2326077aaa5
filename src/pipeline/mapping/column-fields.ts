/**
 * Which staged fields each legacy column feeds, read from a mapping declaration (not run): what
 * lets the contract's classification of staged fields (src/contract/classification.ts) carry
 * over to the legacy columns, so a column read into a surname is as personal as the surname.
 */
import type { Expr, MappingFile } from './schema.js';

/** A condition's column feeds no field, but decides one: it counts under this name. */
export const CONDITION_FIELD = '(condition)';

/**
 * Legacy column → the staged field paths it feeds (`addresses[0].postalCode`). The key column
 * feeds `referenceId`. A mapping with a script may read any column: `script` is then true and
 * callers treat every column as feeding an unknown field.
 * @example columnFields(spec).fields.get('achternaam') // Set { 'surname' }
 */
export function columnFields(spec: Pick<MappingFile, 'key' | 'record' | 'script'>): { fields: Map<string, Set<string>>; script: boolean } {
  const fields = new Map<string, Set<string>>();
  const add = (column: string, field: string) => {
    let set = fields.get(column);
    if (!set) fields.set(column, (set = new Set()));
    set.add(field);
  };
  add(spec.key.column, 'referenceId');
  /** `within`: the array column of the `each` around `e`, which feeds whatever its items do (their columns are inside it). */
  const walk = (e: Expr, field: string, within?: string): void => {
    const feed = (column: string, f: string) => add(within ?? column, f);
    const when = e.when === undefined ? [] : Array.isArray(e.when) ? e.when : [e.when];
    for (const c of when) feed(c.column, CONDITION_FIELD);
    if ('column' in e) feed(e.column, field);
    else if ('concat' in e) for (const p of e.concat) walk(p, field, within);
    else if ('first' in e) for (const p of e.first) walk(p, field, within);
    else if ('object' in e) for (const [name, sub] of Object.entries(e.object)) walk(sub, field ? `${field}.${name}` : name, within);
    else if ('list' in e) e.list.forEach((item, i) => walk(item, 'each' in item ? field : `${field}[${i}]`, within));
    else if ('each' in e) walk(e.item, `${field}[0]`, within ?? e.each);
    else if ('referenceId' in e && e.referenceId.column !== undefined) feed(e.referenceId.column, field);
    // what an undecided field will read once decided is as personal as the field
    else if ('undecided' in e && e.draft) walk(e.draft, field, within);
  };
  for (const [name, e] of Object.entries(spec.record)) walk(e, name);
  return { fields, script: spec.script !== undefined };
}
