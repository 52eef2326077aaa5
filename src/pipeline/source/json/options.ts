/** The options of a JSON source (`json:` in a pipeline source), owned by the format. */
import { z } from 'zod';

export const jsonOptionsSchema = z
  .strictObject({
    path: z
      .string()
      .regex(/^[^.]+(\.[^.]+)*$/, { message: 'expected a dotted path such as export.bedrijven' })
      .optional()
      .describe('dotted path of the array inside the top-level object, e.g. export.bedrijven; default: the document is the array'),
  })
  .describe('JSON reading options (format json)');
export type JsonOptions = z.output<typeof jsonOptionsSchema>;
