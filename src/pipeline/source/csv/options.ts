/** The options of a CSV source (`csv:` in a pipeline source), owned by the format. */
import { z } from 'zod';

const singleChar = (what: string) => z.string().length(1, { message: `expected a single character (${what})` });

export const csvOptionsSchema = z
  .strictObject({
    delimiter: singleChar('delimiter').default(',').describe('field separator; default ","'),
    quote: singleChar('quote')
      .default('"')
      .describe("quote character; a doubled quote inside a quoted field is a literal quote; default '\"'"),
    header: z.boolean().default(true).describe('whether the first record names the columns; default true'),
    columns: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe("column names when the file has no header (or to rename the header's columns); default: the header"),
  })
  .describe('CSV reading options');
export type CsvOptions = z.output<typeof csvOptionsSchema>;
