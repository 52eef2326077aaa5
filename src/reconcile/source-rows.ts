/**
 * Re-reads single legacy rows by their provenance (file + byte offset), in the source's own
 * columns, so a corrections file and the report's examples show the row exactly as the legacy
 * system exported it. Each format reads its own (`rowAt` in src/pipeline/source/index.ts), only
 * from the row's first byte to its end: a corrections file of a hundred rows out of a million
 * reads a hundred rows, not the file.
 */
export { readRowAt, type RawRow, type RowFormat } from '../pipeline/source/index.js';
export { cellText } from '../pipeline/checks/corrections.js';
