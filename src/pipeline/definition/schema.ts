/**
 * The pipeline file (`pipelines/*.yaml`), declared once as zod schemas: each option with its
 * default and a one-line description. Types, validation and docs/pipelines.md derive from it.
 */
import { z } from 'zod';
import { xlsxOptionsSchema } from '../source/xlsx/options.js';
import { COMPONENTS } from '../../contract/migration.js';
import { VALUES_MODES } from '../../contract/classification.js';

export const ENCODINGS = ['utf-8', 'utf-8-bom', 'windows-1252', 'utf-16le', 'utf-16be', 'auto'] as const;
export type SourceEncoding = (typeof ENCODINGS)[number];
export const FORMATS = ['csv', 'json', 'jsonl', 'fixed-width', 'xlsx'] as const;
export type SourceFormat = (typeof FORMATS)[number];

/** A retention period: a number of days (`30d`), hours (`12h`), or `0` (remove at once). */
const duration = z.string().regex(/^(0|\d+[dh])$/, { message: 'expected a period such as 30d, 12h or 0' });

/** A retention period in milliseconds. */
export function durationMs(text: string): number {
  if (text === '0') return 0;
  const n = Number(text.slice(0, -1));
  return text.endsWith('d') ? n * 86_400_000 : n * 3_600_000;
}

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

export const sourceSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, { message: 'expected letters, digits, _ or -' })
      .describe('name of the source, unique in the pipeline; shown in provenance and reports'),
    format: z
      .enum(FORMATS)
      .describe(
        'csv, json (an array, or an array at json.path), jsonl (one object a line), fixed-width (columns by position, see fixedWidth) or xlsx (a sheet of an Excel workbook, see xlsx)',
      ),
    path: z.string().min(1).describe('file or glob, relative to the pipeline file; several files are read in sorted order'),
    encoding: z
      .enum(ENCODINGS)
      .default('auto')
      .describe(
        'text encoding; auto: a BOM decides (UTF-8/UTF-16), else a NUL byte every other byte means UTF-16, otherwise UTF-8; default auto',
      ),
    csv: csvOptionsSchema.default({ delimiter: ',', quote: '"', header: true }).describe('CSV options (format csv)'),
    json: jsonOptionsSchema.default({}).describe('JSON options (format json)'),
    fixedWidth: fixedWidthOptionsSchema.optional().describe('fixed-width options (format fixed-width, where they are required)'),
    xlsx: xlsxOptionsSchema.default({ sheet: 1, headerRow: 1 }),
    mapping: z.string().min(1).describe('mapping file for this source, relative to the pipeline file'),
  })
  .superRefine((s, ctx) => {
    if (s.format === 'fixed-width' && !s.fixedWidth)
      ctx.addIssue({
        code: 'custom',
        path: ['fixedWidth'],
        message: 'format fixed-width needs fixedWidth.columns (name, start, length of each column)',
      });
    if (s.format !== 'fixed-width' && s.fixedWidth)
      ctx.addIssue({
        code: 'custom',
        path: ['fixedWidth'],
        message: `fixedWidth applies to format fixed-width only, got format ${s.format}`,
      });
  })
  .describe('one legacy export');
export type SourceSpec = z.output<typeof sourceSchema>;

export const pipelineFileSchema = z
  .strictObject({
    name: z.string().min(1).describe('name of the pipeline, shown in reports'),
    component: z
      .enum(COMPONENTS)
      .default('Counterparties')
      .describe('migration component the records belong to; only Counterparties is implemented'),
    sources: z.array(sourceSchema).min(1).describe('legacy exports read in order'),
    batching: z
      .strictObject({
        records: z.number().int().min(1).max(100_000).default(1000).describe('most records in one staging upload; default 1000'),
        bytes: z
          .number()
          .int()
          .min(1024)
          .default(4 * 1024 * 1024)
          .describe('most bytes of json-seq in one upload; default 4 MiB'),
      })
      .default({ records: 1000, bytes: 4 * 1024 * 1024 })
      .describe('how records are grouped into uploads'),
    concurrency: z
      .strictObject({
        inFlight: z.number().int().min(1).max(64).default(4).describe('uploads in flight at once; default 4'),
        workers: z
          .union([z.literal('auto'), z.number().int().min(0).max(64)])
          .default('auto')
          .describe(
            'worker threads that read, map and check big CSV files beside the main thread (rows stay in file order); 0: the main thread only; default auto: the cores left after the main thread (and, for run, the ledger writer), at most 4',
          ),
      })
      .default({ inFlight: 4, workers: 'auto' })
      .describe('upload window and reading threads'),
    target: z
      .strictObject({
        migration: z
          .enum(['current', 'new'])
          .default('current')
          .describe("attach to the tenant's current migration, or create a new one; default current"),
        referenceNamespace: z
          .uuid({ message: 'expected a UUID' })
          .describe('UUID namespace of the v5 referenceIds derived from legacy keys; keep it fixed for a migration'),
      })
      .describe('where the records go'),
    checks: z
      .strictObject({
        missingRelationTarget: z
          .enum(['reject', 'allow'])
          .default('reject')
          .describe('a relation to a legacy key no source holds: reject the row, or allow it (the target lives elsewhere); default reject'),
      })
      .default({ missingRelationTarget: 'reject' })
      .describe('checks before upload'),
    privacy: z
      .strictObject({
        reportValues: z
          .enum(VALUES_MODES)
          .default('masked')
          .describe(
            'how reports and printouts show values of personal fields: masked, hashed (HMAC with a per-migration key) or revealed; --reveal overrides; default masked',
          ),
        legacyKeyIsPersonal: z
          .boolean()
          .default(false)
          .describe('the legacy key is personal data itself (e.g. a citizen service number): reports mask it too; default false'),
        retention: z
          .strictObject({
            corrections: duration.default('30d').describe('how long corrections files are kept after the migration completed; default 30d'),
            ledgerValues: duration
              .default('30d')
              .describe("how long the ledger keeps refused rows' values and messages after the migration completed; default 30d"),
          })
          .default({ corrections: '30d', ledgerValues: '30d' })
          .describe('what is removed once a migration is complete (stagecoach purge, or any later command past the time)'),
      })
      .default({ reportValues: 'masked', legacyKeyIsPersonal: false, retention: { corrections: '30d', ledgerValues: '30d' } })
      .describe('personal data in what stagecoach writes (docs/privacy.md)'),
  })
  .describe('a migration pipeline');
export type PipelineFile = z.output<typeof pipelineFileSchema>;
