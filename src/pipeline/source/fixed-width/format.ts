/**
 * The fixed-width format as the registry sees it: its layout (`fixedWidth:`, required) names the
 * columns; read from the start only; corrections as CSV, one column per layout field.
 */
import { commonReadOptions, defineFormat } from '../format.js';
import { fixedWidthOptionsSchema } from './options.js';
import { fixedWidthHeader, fixedWidthRowAt } from './row-at.js';
import { readFixedWidthBatches } from './stream.js';

export const fixedWidthFormat = defineFormat({
  summary: 'fixed-width (columns by position, see fixedWidth)',
  options: {
    key: 'fixedWidth',
    field: fixedWidthOptionsSchema.optional().describe('fixed-width options (format fixed-width, where they are required)'),
    check: (layout) =>
      layout ? [] : [{ path: [], message: 'format fixed-width needs fixedWidth.columns (name, start, length of each column)' }],
  },
  splitter: null,
  cellDelimiter: null,
  tallies: true,
  rowAt: (path, byteOffset, format) => fixedWidthRowAt(path, byteOffset, format),
  header: async (_path, format) => fixedWidthHeader(format),
  // The layout declares the columns of every file alike: no file needs reading.
  missingColumns: async (source, _file, { required, pipelineFile }) => {
    const declared = source.fixedWidth!.columns.map((c) => c.name);
    const missing = [...required].filter((c) => !declared.includes(c));
    return missing.length > 0
      ? { missing, present: declared, where: `fixedWidth.columns of source ${source.name} in ${pipelineFile}` }
      : undefined;
  },
  corrections: 'csv',
  scanKeys: null,
  read: (source, file, options) =>
    readFixedWidthBatches({
      ...commonReadOptions(source, file, options),
      fixedWidth: source.fixedWidth!,
      ...(options.requiredColumns ? { requiredColumns: options.requiredColumns } : {}),
    }),
});
