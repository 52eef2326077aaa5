/**
 * The JSON and JSON Lines formats as the registry sees them: records name their own fields (no
 * header), read from the start only, corrections as JSON Lines (types and nesting kept).
 */
import { commonReadOptions, defineFormat } from '../format.js';
import { jsonOptionsSchema } from './options.js';
import { jsonRowAt } from './row-at.js';
import { readJsonArrayBatches, readJsonLinesBatches } from './stream.js';

/** What JSON and JSON Lines share: no header, no split, records read back and corrected as JSON Lines. */
const recordsNameTheirFields = {
  splitter: null,
  cellDelimiter: null,
  tallies: true,
  rowAt: jsonRowAt,
  header: async () => undefined,
  // Records name their own fields: one the first records lack may be in later ones, or optional.
  missingColumns: null,
  corrections: 'jsonl',
  scanKeys: null,
} as const;

export const jsonFormat = defineFormat({
  summary: 'json (an array, or an array at json.path)',
  options: { key: 'json', field: jsonOptionsSchema.default({}).describe('JSON options (format json)'), check: () => [] },
  ...recordsNameTheirFields,
  read: (source, file, options) => readJsonArrayBatches({ ...commonReadOptions(source, file, options), arrayPath: source.json.path }),
});

export const jsonlFormat = defineFormat({
  summary: 'jsonl (one object a line)',
  options: null,
  ...recordsNameTheirFields,
  read: (source, file, options) => readJsonLinesBatches(commonReadOptions(source, file, options)),
});
