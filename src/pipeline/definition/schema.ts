/**
 * The pipeline file (`pipelines/*.yaml`), declared once as zod schemas: each option with its
 * default and a one-line description. Types, validation and docs/pipelines.md derive from it.
 * A source's `format:` list and its format options (`csv:`, `fixedWidth:`, …) come from the format
 * registry (source/index.ts), each format declaring its own (source/<format>/format.ts).
 */
import { z } from 'zod';
import { COMPONENTS } from '../../contract/migration.js';
import { VALUES_MODES } from '../../contract/classification.js';
import { ENCODINGS, FORMATS, formatOptions, SOURCE_FORMATS, type FormatOptionFields, type SourceFormat } from '../source/index.js';
import { LANGUAGE_VERSION, UNSTATED_LANGUAGE_VERSION } from './language.js';
import { childSchema } from './child-schema.js';

export { ENCODINGS, FORMATS, type SourceEncoding, type SourceFormat } from '../source/index.js';

/** A retention period: a number of days (`30d`), hours (`12h`), or `0` (remove at once). */
const duration = z.string().regex(/^(0|\d+[dh])$/, { message: 'expected a period such as 30d, 12h or 0' });

/** A retention period in milliseconds. */
export function durationMs(text: string): number {
  if (text === '0') return 0;
  const n = Number(text.slice(0, -1));
  return text.endsWith('d') ? n * 86_400_000 : n * 3_600_000;
}

/** One field per format with options (`csv:`, `fixedWidth:`, …), declared by the format itself (source/<format>/format.ts). */
const optionFields = Object.fromEntries(formatOptions().map(({ options }) => [options.key, options.field])) as FormatOptionFields;

/** The formats as the `format:` description lists them: `a, b, c or d`. */
const formatList = (): string => {
  const all = FORMATS.map((f) => SOURCE_FORMATS[f].summary);
  return `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`;
};

/** The first option of `value` that differs from `fallback` (its default), as a path below the options key; undefined when none does. */
function setOption(value: unknown, fallback: unknown): string[] | undefined {
  if (JSON.stringify(value) === JSON.stringify(fallback)) return undefined;
  if (value === null || typeof value !== 'object' || fallback === null || typeof fallback !== 'object') return [];
  const f = fallback as Record<string, unknown>;
  const key = Object.keys(value).find((k) => JSON.stringify((value as Record<string, unknown>)[k]) !== JSON.stringify(f[k]));
  return key === undefined ? [] : [key];
}

export const sourceSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, { message: 'expected letters, digits, _ or -' })
      .describe('name of the source, unique in the pipeline; shown in provenance and reports'),
    format: z.enum(FORMATS).describe(formatList()),
    path: z.string().min(1).describe('file or glob, relative to the pipeline file; several files are read in sorted order'),
    encoding: z
      .enum(ENCODINGS)
      .default('auto')
      .describe(
        'text encoding; auto: a BOM decides (UTF-8/UTF-16), else a NUL byte every other byte means UTF-16, otherwise UTF-8; default auto',
      ),
    ...optionFields,
    mapping: z
      .string()
      .min(1)
      .describe('mapping file for this source, relative to the pipeline file (of a child source: a child mapping file, with item:)'),
    child: childSchema.optional(),
  })
  .superRefine((s, ctx) => {
    // Each format checks its own options; another format's options, set, are a mistake.
    const source = s as unknown as Record<string, unknown> & { format: SourceFormat };
    for (const { format, options } of formatOptions()) {
      const value = source[options.key];
      if (format === s.format) {
        for (const p of options.check(value)) ctx.addIssue({ code: 'custom', path: [options.key, ...p.path], message: p.message });
        continue;
      }
      const set = setOption(value, options.field.parse(undefined));
      if (set)
        ctx.addIssue({
          code: 'custom',
          path: [options.key, ...set],
          message: `${[options.key, ...set].join('.')} applies to format ${format} only, expected none on a source of format ${s.format}`,
        });
    }
  })
  .describe('one legacy export');
export type SourceSpec = z.output<typeof sourceSchema>;

export const pipelineFileSchema = z
  .strictObject({
    language: z
      .number()
      .int()
      .min(1)
      .max(LANGUAGE_VERSION, {
        message: `written for a later pipeline language than this stagecoach reads (${LANGUAGE_VERSION}): upgrade stagecoach`,
      })
      .optional()
      .describe(
        `version of the pipeline language the file is written in (CHANGELOG.md); stagecoach init writes ${LANGUAGE_VERSION}; a file without it is read as language ${UNSTATED_LANGUAGE_VERSION}`,
      ),
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
