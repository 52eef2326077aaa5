/**
 * The class of a legacy column: the most careful class of the staged fields a mapping reads it
 * into (src/contract/classification.ts), so a column read into a surname is personal, one read
 * only into a code field is not. A column the mapping does not read, or any column of a mapping
 * with a script (which may read anything), counts as personal.
 */
import { classOfField, type PersonalClass, strictestClass } from '../contract/classification.js';
import { columnFields } from '../pipeline/mapping/column-fields.js';
import type { MappingFile } from '../pipeline/mapping/schema.js';

/**
 * @example columnClassifier(spec)('inkomen_frequentie') // 'none'
 */
export function columnClassifier(spec: Pick<MappingFile, 'key' | 'record' | 'script'>): (column: string) => PersonalClass {
  const { fields, script } = columnFields(spec);
  const classes = new Map<string, PersonalClass>();
  for (const [column, set] of fields) classes.set(column, strictestClass([...set].map((f) => classOfField(f) ?? 'direct')));
  return (column) => (script ? 'direct' : (classes.get(column) ?? 'direct'));
}
