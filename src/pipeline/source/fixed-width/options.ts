/** The options of a fixed-width source (`fixedWidth:` in a pipeline source: its record layout), owned by the format. */
import { z } from 'zod';

export const fixedWidthColumnSchema = z
  .strictObject({
    name: z.string().min(1).describe('column name, as the mapping reads it'),
    start: z.number().int().min(1).describe('position of its first character on the line, 1-based (as record layouts give it)'),
    length: z.number().int().min(1).describe('number of characters'),
  })
  .describe('one column of a fixed-width record');

export const fixedWidthOptionsSchema = z
  .strictObject({
    columns: z.array(fixedWidthColumnSchema).min(1).describe('the columns, by position; they may leave filler between them'),
    header: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('lines at the top of each file that are not records (a title, a run date); default 0'),
    trim: z.boolean().default(true).describe('strip the padding blanks around each value; default true'),
    trailer: z
      .strictObject({
        count: fixedWidthColumnSchema
          .omit({ name: true })
          .optional()
          .describe('where the trailer states the number of records (start, length): checked against the records read'),
      })
      .optional()
      .describe('the last line of each file is a trailer, not a record (a record count, a checksum)'),
    length: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('characters in a record; a line of another length is a row error; default: where the last column ends'),
  })
  .superRefine((o, ctx) => {
    const names = new Set<string>();
    const end = Math.max(...o.columns.map((c) => c.start + c.length - 1));
    o.columns.forEach((c, i) => {
      if (names.has(c.name))
        ctx.addIssue({ code: 'custom', path: ['columns', i, 'name'], message: `duplicate column ${JSON.stringify(c.name)}` });
      names.add(c.name);
    });
    if (o.length !== undefined && o.length < end)
      ctx.addIssue({ code: 'custom', path: ['length'], message: `expected at least ${end} (where the last column ends), got ${o.length}` });
  })
  .describe('fixed-width reading options (format fixed-width): one record a line, columns by position');
export type FixedWidthOptions = z.output<typeof fixedWidthOptionsSchema>;
