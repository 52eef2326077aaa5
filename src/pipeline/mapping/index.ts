/** Mappings: a validated mapping file compiled once into functions; deterministic v5 ids. */
export {
  compileMapping,
  type CompiledMapping,
  type MapContext,
  type MappingHelpers,
  type MappingScript,
  type RelationRef,
} from './compile.js';
export { ReferenceIds } from './reference-ids.js';
export type { MappingFile, Expr, Transform } from './schema.js';
export { countryResolver, normaliseCountryName, type CountryReading } from './transforms/country.js';
export { compileDate, type DateSpec } from './transforms/date.js';
export { readPhone } from './transforms/phone.js';
