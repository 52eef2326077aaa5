/** The options of an XLSX source (`xlsx:` in a pipeline source), owned by the format. */
import { z } from 'zod';

export const xlsxOptionsSchema = z
  .strictObject({
    sheet: z
      .union([z.string().min(1), z.number().int().min(1)])
      .default(1)
      .describe('the sheet to read: its name, or its position (1 = the first); default 1'),
    headerRow: z.number().int().min(1).default(1).describe('the row that names the columns (1-based); the records follow it; default 1'),
  })
  .describe('XLSX options (format xlsx)');
export type XlsxOptions = z.output<typeof xlsxOptionsSchema>;
