/** The options of a CSV source (`csv:` in a pipeline source), owned by the format. */
import { z } from 'zod';

const singleChar = (what: string) => z.string().length(1, { message: `expected a single character (${what})` });

export const csvOptionsSchema = z
  .strictObject({
    delimiter: singleChar('delimiter').default(',').describe('field separator; default ","'),
    quote: singleChar('quote')
      .default('"')
      .describe("quote character; a doubled quote inside a quoted field is a literal quote; default '\"'"),
    quotes: z
      .enum(['strict', 'relaxed'])
      .optional()
      .describe(
        'strict: a row with malformed quotes ("ab"cd, "Sn3" followed by a space, Sn"1) is refused at its line with the column named; relaxed: such a row is read as written and flagged in the report; default strict',
      ),
    header: z.boolean().default(true).describe('whether the first record names the columns; default true'),
    columns: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe("column names when the file has no header (or to rename the header's columns); default: the header"),
  })
  .describe('CSV reading options');
export type CsvOptions = z.output<typeof csvOptionsSchema>;
