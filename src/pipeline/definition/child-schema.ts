/**
 * Child sources, declared (issue 46): a legacy table dump is a parent file (customers) beside
 * child files (addresses, phones, relations) whose rows carry their parent's key. A source with
 * `child:` is read into its parent's records instead of becoming records of its own: each of
 * its rows becomes one item of a list of the parent's record (`into`), through a child mapping
 * file whose `item:` says what one row becomes. A child may itself be a parent (an address with
 * its own list), through its `id`.
 */
import { z } from 'zod';
import { codeTableSchema, exprSchema } from '../mapping/schema.js';

const sourceName = z.string().regex(/^[A-Za-z0-9_-]+$/, { message: 'expected letters, digits, _ or -' });

/** The `child:` block of a source in the pipeline file. */
export const childSchema = z
  .strictObject({
    of: sourceName.describe('the source this one is a child of (a source of the pipeline, itself maybe a child)'),
    key: z
      .string()
      .min(1)
      .describe("column of this source holding the parent's key (read like the parent's key column, through its key transforms)"),
    into: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]*$/, { message: 'expected a field name, e.g. addresses' })
      .describe(
        "the list each row becomes one item of: a field of the parent's record (addresses, telephoneNumbers, relations …), or of the parent's item when the parent is a child",
      ),
    id: z
      .string()
      .min(1)
      .optional()
      .describe(
        "column holding the row's own key, unique in the source as a table's primary key: a second row with an id its parent already has is a duplicate; required when another source is a child of this one. Without it a row that repeats another row of the same parent exactly is the duplicate",
      ),
  })
  .describe(
    'this source is a child table: each row joins the record of its parent row as one item of a list (docs/pipelines.md, "Child sources")',
  );
export type ChildSpec = z.output<typeof childSchema>;

/** A child source's mapping file: what one row becomes (one list item), and its code tables. */
export const childMappingFileSchema = z.strictObject({
  item: exprSchema.describe(
    "what one row becomes: one item of the parent's list (usually an object); columns are this source's; {index} in a referenceId suffix is the item's place in the list",
  ),
  codes: z.record(z.string(), codeTableSchema).default({}).describe('code tables used by code transforms'),
});
export type ChildMappingFile = z.output<typeof childMappingFileSchema>;

/**
 * The reject reasons of child rows, beside the mapping's (docs/pipelines.md, "Child sources"):
 * a row whose parent key no parent row holds, a second row with an id (or the content) its
 * parent already has, and a row whose parent was refused (it is not staged without it).
 */
export const CHILD_CODES = ['CHILD_ORPHAN', 'CHILD_DUPLICATE', 'CHILD_PARENT_REFUSED'] as const;
export type ChildCode = (typeof CHILD_CODES)[number];
