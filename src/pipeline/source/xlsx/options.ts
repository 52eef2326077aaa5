/** The options of an XLSX source (`xlsx:` in a pipeline source), owned by the format. */
import { z } from 'zod';

const MiB = 1024 * 1024;
const count = (max: number, what: string) =>
  z
    .number()
    .int()
    .min(1)
    .default(max)
    .describe(`${what}; default ${max.toLocaleString('en')}`);

/**
 * How far a workbook is read before the read stops as hostile or damaged (docs/pipelines.md,
 * "Limits"). Each bounds memory or time; past one, the read stops naming file, sheet, row and
 * the limit. The defaults are far above what Excel writes (a cell holds at most 32,767
 * characters, a sheet 16,384 columns) and keep a read within a few hundred MB.
 */
export const xlsxLimitsSchema = z
  .strictObject({
    sheetBytes: count(4096 * MiB, 'inflated bytes of the sheet read (streamed: it bounds time, not memory)'),
    partBytes: count(
      128 * MiB,
      'inflated bytes of any other workbook part: the shared strings (held while the sheet is read, in about this much memory at most), the styles, the workbook part',
    ),
    rowChars: count(
      16 * MiB,
      "characters of one row's XML (or one element of another part), with what lies between it and the one before (a run of whitespace too)",
    ),
    cellChars: count(MiB, "characters of one cell's XML (its value and a little markup)"),
    sharedStringChars: count(MiB, "characters of one shared string's XML (its text, its runs' formatting)"),
  })
  .describe('limits that stop the read of a hostile or damaged workbook, naming the limit');
export type XlsxLimits = z.output<typeof xlsxLimitsSchema>;

/** The limits as a source that sets none has them. */
export const defaultXlsxLimits: XlsxLimits = xlsxLimitsSchema.parse({});

export const xlsxOptionsSchema = z
  .strictObject({
    sheet: z
      .union([z.string().min(1), z.number().int().min(1)])
      .default(1)
      .describe('the sheet to read: its name, or its position (1 = the first); default 1'),
    headerRow: z.number().int().min(1).default(1).describe('the row that names the columns (1-based); the records follow it; default 1'),
    limits: xlsxLimitsSchema.prefault({}),
  })
  .describe('XLSX options (format xlsx)');
export type XlsxOptions = z.output<typeof xlsxOptionsSchema>;
