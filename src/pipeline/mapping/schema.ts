/**
 * The mapping file (`mappings/<component>/*.yaml`), declared as zod schemas: how one legacy row
 * becomes one staged record. An expression says where a value comes from (a column, a constant,
 * several columns joined, the first non-empty of several, a nested object, a list, a derived
 * referenceId), the transforms it goes through, and when it applies. docs/mappings.md explains
 * each with examples.
 */
import { z } from 'zod';
import { STAGED_TYPES, stagedOrganisationSchema, stagedPersonSchema } from '../../contract/migration.js';

const columnName = z.string().min(1);

/** A condition on the legacy row; a list means all of them. */
export const conditionSchema = z
  .strictObject({
    column: columnName.describe('legacy column the condition reads (trimmed)'),
    equals: z.union([z.string(), z.number(), z.boolean()]).optional().describe('true when the value equals this'),
    in: z
      .array(z.union([z.string(), z.number()]))
      .min(1)
      .optional()
      .describe('true when the value is one of these'),
    notEmpty: z.literal(true).optional().describe('true when the value is not empty'),
    empty: z.literal(true).optional().describe('true when the value is empty'),
  })
  .refine((c) => [c.equals, c.in, c.notEmpty, c.empty].filter((x) => x !== undefined).length === 1, {
    message: 'expected exactly one of equals, in, notEmpty, empty',
  });
export type Condition = z.output<typeof conditionSchema>;
const whenSchema = z
  .union([conditionSchema, z.array(conditionSchema).min(1)])
  .optional()
  .describe('the expression applies only when this holds; otherwise the field is left out');

const NAMED_TRANSFORMS = [
  'trim',
  'upper',
  'lower',
  'title',
  'collapse-spaces',
  'initials',
  'email',
  'phone',
  'postcode-nl',
  'boolean',
  'country',
  'nationality',
  'nfc',
] as const;
export type NamedTransform = (typeof NAMED_TRANSFORMS)[number];

export const transformSchema = z.union([
  z
    .enum(NAMED_TRANSFORMS)
    .describe(
      'trim | upper | lower | title | collapse-spaces | initials | email | phone | postcode-nl | boolean | country | nationality | nfc',
    ),
  z.strictObject({ default: z.union([z.string(), z.number(), z.boolean()]).describe('value used when the input is empty') }),
  z.strictObject({
    code: z
      .union([
        z.string().min(1),
        z.strictObject({
          table: z.string().min(1),
          unknown: z
            .enum(['reject', 'keep', 'empty'])
            .default('reject')
            .describe('what an unknown legacy code does; default reject (UNKNOWN_CODE)'),
        }),
      ])
      .describe('code table of the mapping file (codes:) to translate legacy codes'),
  }),
  z.strictObject({
    date: z
      .union([
        z.string().min(1),
        z.array(z.string().min(1)).min(1),
        z.strictObject({
          formats: z
            .union([z.string().min(1), z.array(z.string().min(1))])
            .default([])
            .describe('accepted date formats, each tried in full'),
          prefer: z.string().min(1).optional().describe('the format that wins when two formats read a value as different dates'),
          pivot: z.number().int().min(0).max(100).optional().describe('two-digit years (yy): below the pivot 20yy, else 19yy'),
          excelSerial: z.boolean().optional().describe('a whole number is an Excel (1900 system) serial day number'),
          unknown: z
            .array(z.string())
            .optional()
            .describe('values that mean "not known" (00000000, 19000101, 9999-12-31): read as no date, the field left out'),
          zoned: z
            .boolean()
            .optional()
            .describe('an ISO 8601 timestamp with a zone (1980-03-12T00:00:00+01:00) is read as its calendar date in that zone'),
        }),
      ])
      .describe(
        'accepted date format(s): d, dd, m, mm, mmm (month name nl/en/de/fr), yyyy, yy (with pivot) and literal separators, e.g. dd-mm-yyyy, yyyymmdd, d mmm yyyy',
      ),
  }),
  z.strictObject({
    // Both separators are stated: a default (the Dutch decimal comma) would read an English 68,000 as 68.
    number: z.strictObject({
      decimal: z.enum([',', '.']).describe('decimal separator'),
      thousands: z
        .enum(['.', ',', ' ', "'", ''])
        .describe('thousands separator ("" for none; " " also reads a no-break space, "\'" a typographic apostrophe)'),
    }),
  }),
  z.strictObject({
    split: z.strictObject({
      separator: z.string().min(1),
      index: z.number().int().optional().describe('which part; negative counts from the end; default: all parts as a list'),
    }),
  }),
  z.strictObject({ join: z.string().describe('joins a list into one string, leaving out empty parts') }),
  z.strictObject({
    phone: z
      .strictObject({
        region: z.string().length(2).optional().describe('ISO 3166 alpha-2 region of numbers written without an international prefix'),
        country: z.string().length(2).optional().describe('the same as region (the older name)'),
        regionColumn: columnName
          .optional()
          .describe("column holding the row's country (any form the country transform reads); region when it is empty"),
        check: z
          .enum(['valid', 'possible'])
          .optional()
          .describe('valid (default): a number of a range the region issues; possible: of a length the region has (made-up test data)'),
      })
      .describe('E.164 via libphonenumber; without a region only international numbers are read'),
  }),
  z.strictObject({
    country: z.strictObject({
      extra: z.record(z.string(), z.string()).describe("the mapping's own legacy forms, e.g. { ENG: GB }"),
    }),
  }),
  z.strictObject({
    postcode: z
      .strictObject({
        countryColumn: columnName.optional().describe("column holding the row's country (any form the country transform reads)"),
        country: z.string().length(2).optional().describe('ISO 3166 alpha-2 country when the row names none'),
      })
      .describe(
        "a postcode by its country's rules: digits that lost leading zeros (a JSON number 3001 in Spain) put back where certain, else refused",
      ),
  }),
  z.strictObject({
    nationality: z.strictObject({
      extra: z.record(z.string(), z.string()).describe("the mapping's own legacy forms, e.g. { ENG: GB }"),
    }),
  }),
  z.strictObject({
    pattern: z.strictObject({ regex: z.string().min(1), message: z.string().optional() }).describe('rejects a value that does not match'),
  }),
  z.strictObject({
    replace: z.strictObject({ regex: z.string().min(1), with: z.string() }).describe('regular-expression replacement (all matches)'),
  }),
]);
export type Transform = z.output<typeof transformSchema>;

export const transformsSchema = z
  .array(transformSchema)
  .default([])
  .describe('applied in order; an empty value skips them (except default)');
const requiredSchema = z.boolean().default(false).describe('reject the row (MISSING_REQUIRED_FIELD) when the value ends up empty');

export interface ColumnExpr {
  column: string;
  transforms: Transform[];
  when?: Condition | Condition[] | undefined;
  required: boolean;
}
export interface ValueExpr {
  value: unknown;
  when?: Condition | Condition[] | undefined;
}
export interface ConcatExpr {
  concat: Expr[];
  separator: string;
  transforms: Transform[];
  when?: Condition | Condition[] | undefined;
  required: boolean;
}
export interface FirstExpr {
  first: Expr[];
  transforms: Transform[];
  when?: Condition | Condition[] | undefined;
  required: boolean;
}
export interface ObjectExpr {
  object: Record<string, Expr>;
  when?: Condition | Condition[] | undefined;
}
export interface ListExpr {
  list: Expr[];
  when?: Condition | Condition[] | undefined /** written as a bare YAML list */;
  bare?: boolean;
}
export interface ReferenceExpr {
  referenceId: { column?: string | undefined; scope?: string | undefined; suffix?: string | undefined; transforms: Transform[] };
  when?: Condition | Condition[] | undefined;
}
/** One output item per item of an array in the row; `item`'s columns are paths relative to the array item. */
export interface EachExpr {
  each: string;
  item: Expr;
  when?: Condition | Condition[] | undefined;
}
/**
 * A field nobody has decided yet (`init` could not: an income's period, a date's order, a
 * currency): never staged. `plan` and `run` stop on it, naming its line, unless told to stage
 * the records without it; `draft` is what `init` would write once the question is answered.
 */
export interface UndecidedExpr {
  undecided: string;
  draft?: Expr | undefined;
  when?: Condition | Condition[] | undefined;
}
export type Expr = ColumnExpr | ValueExpr | ConcatExpr | FirstExpr | ObjectExpr | ListExpr | ReferenceExpr | EachExpr | UndecidedExpr;

export const exprSchema: z.ZodType<Expr, unknown> = z.lazy(() =>
  z.union([
    // A bare string is a column name; a bare list is a list of expressions.
    columnName.transform((column): Expr => ({ column, transforms: [], required: false })),
    z.array(exprSchema).transform((list): Expr => ({ list, bare: true })),
    z.strictObject({ column: columnName, transforms: transformsSchema, when: whenSchema, required: requiredSchema }),
    z.strictObject({ value: z.union([z.string(), z.number(), z.boolean()]), when: whenSchema }),
    z.strictObject({
      concat: z.array(exprSchema).min(1),
      separator: z.string().default(' '),
      transforms: transformsSchema,
      when: whenSchema,
      required: requiredSchema,
    }),
    z.strictObject({ first: z.array(exprSchema).min(1), transforms: transformsSchema, when: whenSchema, required: requiredSchema }),
    z.strictObject({ object: z.record(z.string(), exprSchema), when: whenSchema }),
    z.strictObject({ list: z.array(exprSchema), when: whenSchema }),
    z.strictObject({
      undecided: z
        .string()
        .min(1)
        .describe('a question a person must answer first: the field is never staged; plan and run stop on it (docs/mappings.md)'),
      draft: exprSchema.optional().describe('what the field becomes once decided: checked, never run'),
      when: whenSchema,
    }),
    z.strictObject({
      each: columnName.describe('path of an array in the row (bestuurders, relaties.bestuur); one output item per array item'),
      item: exprSchema.describe("what each array item becomes; its columns are paths inside the item, '.' the item itself"),
      when: whenSchema,
    }),
    z.strictObject({
      referenceId: z.strictObject({
        column: columnName.optional().describe("legacy column holding another row's key (a relation); default: this row's own key"),
        scope: z.string().min(1).optional().describe("key scope of the target; default: this mapping's key scope"),
        suffix: z
          .string()
          .min(1)
          .optional()
          .describe("derives a sub-entity id (an address) from the key: scope:key#suffix; inside each, {index} is the array item's index"),
        transforms: transformsSchema,
      }),
      when: whenSchema,
    }),
  ]),
) as z.ZodType<Expr, unknown>;

export const codeTableSchema = z
  .record(z.string(), z.union([z.string(), z.null()]))
  .describe('legacy code → platform code (null: known, means empty)');

export const mappingFileSchema = z.strictObject({
  type: z.enum(STAGED_TYPES).describe('staged record type: person or organisation'),
  key: z
    .strictObject({
      column: columnName.describe("legacy column holding the row's key"),
      scope: z
        .string()
        .regex(/^[A-Za-z0-9_.-]+$/, { message: 'expected letters, digits, _ . or -' })
        .describe('key scope: keys are unique per scope, and the referenceId is uuidv5("scope:key", namespace)'),
      transforms: transformsSchema,
    })
    .describe('the legacy key: identifies the row, derives its referenceId'),
  record: z.record(z.string(), exprSchema).describe('staged record fields (referenceId and type are set from key and type)'),
  codes: z.record(z.string(), codeTableSchema).default({}).describe('code tables used by code transforms'),
  script: z
    .string()
    .regex(/\.(mjs|js|ts|mts)$/, { message: 'expected a .mjs, .js, .ts or .mts file' })
    .optional()
    .describe('escape hatch: a JavaScript or TypeScript module next to the mapping exporting default (row, record, helpers) => record'),
});
export type MappingFile = z.output<typeof mappingFileSchema>;

/**
 * Checks what the shape alone cannot: code tables that exist, date formats that parse, regular
 * expressions that compile, and record fields that the staged record has. Each problem is
 * reported at its own path, so the loader can point at its line and column.
 *
 * Staging keeps only the fields it knows, so a misspelt field (`emailAdres`) would be dropped
 * from every record without a word; it is refused here instead, with the fields expected.
 * Objects inside lists (addresses, telephone numbers, relations) are held to their own fields. A
 * mapping script can still add anything; what staging does not know, it drops.
 */
export function checkMappingDeclarations(
  m: MappingFile,
  compile: (t: Transform, codes: MappingFile['codes']) => unknown,
): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const transforms = (list: Transform[], path: (string | number)[]) => {
    list.forEach((t, i) => {
      try {
        compile(t, m.codes);
      } catch (err) {
        problems.push({ path: [...path, i], message: (err as Error).message });
      }
    });
  };
  /** The fields of an object: each checked against the staged object's (when known), then walked. */
  const fields = (
    entries: Record<string, Expr>,
    shape: Record<string, z.ZodType> | null | undefined,
    path: (string | number)[],
    what: string,
  ) => {
    for (const [name, e] of Object.entries(entries)) {
      if (shape && !(name in shape)) {
        problems.push({
          path: [...path, name],
          message: `${what} has no field ${JSON.stringify(name)}: staging would drop it; expected one of ${Object.keys(shape).join(', ')}`,
        });
      }
      walk(e, shape?.[name], [...path, name], name);
    }
  };
  /** `schema`: what staging takes at this place, when known. */
  const walk = (e: Expr, schema: z.ZodType | undefined, path: (string | number)[], what: string) => {
    if ('transforms' in e && Array.isArray(e.transforms)) transforms(e.transforms, [...path, 'transforms']);
    if ('concat' in e) e.concat.forEach((x, i) => walk(x, undefined, [...path, 'concat', i], what));
    if ('first' in e) e.first.forEach((x, i) => walk(x, schema, [...path, 'first', i], what));
    if ('object' in e) fields(e.object, fieldsOf(schema), [...path, 'object'], `${what} (an object)`);
    // a bare YAML list has no `list:` key in the file
    if ('list' in e) e.list.forEach((x, i) => walk(x, schema, e.bare ? [...path, i] : [...path, 'list', i], what));
    if ('referenceId' in e) transforms(e.referenceId.transforms, [...path, 'referenceId', 'transforms']);
    // the item is what one element of the array becomes: held to the array's element type
    if ('each' in e) walk(e.item, schema, [...path, 'item'], what);
    if ('undecided' in e && e.draft) walk(e.draft, schema, [...path, 'draft'], what);
  };
  transforms(m.key.transforms, ['key', 'transforms']);
  fields(m.record, (m.type === 'person' ? stagedPersonSchema : stagedOrganisationSchema).shape, ['record'], `a staged ${m.type}`);
  return problems;
}

/** The fields a staged object takes (null: any field, as in `ratings`), through optional and list wrappers. */
function fieldsOf(schema: z.ZodType | undefined): Record<string, z.ZodType> | null | undefined {
  let at: unknown = schema;
  for (;;) {
    if (at instanceof z.ZodOptional) at = at.unwrap();
    else if (at instanceof z.ZodArray) at = at.element;
    else break;
  }
  if (at instanceof z.ZodObject) return at.shape as Record<string, z.ZodType>;
  if (at instanceof z.ZodRecord) return null;
  return undefined;
}

/** What staging takes at one place of a record, as far as the mapping needs to know it (coercion). */
export type TargetKind = 'string' | 'number' | 'boolean';

/** The kind of scalar staging takes at `schema` (through `optional`), or undefined for anything else. */
export function targetKind(schema: z.ZodType | undefined): TargetKind | undefined {
  const at = schema instanceof z.ZodOptional ? schema.unwrap() : schema;
  const type = (at as { type?: string } | undefined)?.type;
  return type === 'string' || type === 'number' || type === 'boolean' ? type : undefined;
}

/** The staged schema of a field of an object (through optional), when known. */
export function fieldSchema(schema: z.ZodType | undefined, name: string): z.ZodType | undefined {
  const shape = fieldsOf(schema);
  return shape ? shape[name] : undefined;
}

/** The staged schema of an item of a list (through optional), when known. */
export function itemSchema(schema: z.ZodType | undefined): z.ZodType | undefined {
  const at = schema instanceof z.ZodOptional ? schema.unwrap() : schema;
  return at instanceof z.ZodArray ? (at.element as z.ZodType) : undefined;
}

/** The staged record of a type, as the schema the mapping's fields are held to. */
export function stagedSchema(type: MappingFile['type']): z.ZodType {
  return type === 'person' ? stagedPersonSchema : stagedOrganisationSchema;
}

/** The undecided fields of a mapping: each question with the path of its field (`record.income`). */
export function undecidedFields(m: Pick<MappingFile, 'record'>): Array<{ path: string; question: string }> {
  const out: Array<{ path: string; question: string }> = [];
  const walk = (e: Expr, path: string): void => {
    if ('undecided' in e) out.push({ path, question: e.undecided });
    else if ('object' in e) for (const [name, sub] of Object.entries(e.object)) walk(sub, `${path}.${name}`);
    else if ('list' in e) e.list.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if ('each' in e) walk(e.item, `${path}[*]`);
    else if ('first' in e) e.first.forEach((x) => walk(x, path));
    else if ('concat' in e) e.concat.forEach((x) => walk(x, path));
  };
  for (const [name, e] of Object.entries(m.record)) walk(e, `record.${name}`);
  return out;
}
