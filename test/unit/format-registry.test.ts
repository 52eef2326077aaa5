/**
 * The format registry is the whole format contract: the pipeline schema and the editor JSON
 * Schemas take each format's options from its registry entry, and a format that lacks a member
 * of the contract does not compile (the `@ts-expect-error` lines fail `tsc -p tsconfig.test.json`
 * when the compiler stops refusing them).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { editorSchemas } from '../../src/pipeline/editor-schemas.js';
import { jsonSchemaOf } from '../../src/pipeline/definition/schema-keys.js';
import { sourceSchema } from '../../src/pipeline/definition/schema.js';
import { defineFormat } from '../../src/pipeline/source/format.js';
import { FORMATS, formatOptions, SOURCE_FORMATS } from '../../src/pipeline/source/index.js';

type Json = Record<string, unknown>;

describe('format registry', () => {
  it("builds the pipeline schema's format list and options fields from the registered formats", () => {
    const source = ((editorSchemas()['pipeline.schema.json'].properties as Json).sources as Json).items as Json;
    const properties = source.properties as Record<string, Json>;
    expect((properties.format!.enum as string[]).sort()).toEqual(Object.keys(SOURCE_FORMATS).sort());
    for (const f of FORMATS) expect(properties.format!.description as string).toContain(SOURCE_FORMATS[f].summary);
    const keys = formatOptions().map(({ options }) => options.key);
    expect(keys).toEqual(['csv', 'json', 'fixedWidth', 'xlsx']);
    for (const { options } of formatOptions()) {
      const own = jsonSchemaOf(z.object({ [options.key]: options.field })).properties as Record<string, Json>;
      expect(properties[options.key], options.key).toEqual(own[options.key]);
    }
    // A source of each format is valid with its options' defaults alone (fixed-width needs its layout).
    for (const f of FORMATS) {
      const parsed = sourceSchema.safeParse({ name: 's', format: f, path: 'x', mapping: 'm.yaml' });
      expect(parsed.success, f).toBe(f !== 'fixed-width');
    }
  });

  it('refuses, at compile time, a format that leaves out a decision of the contract', () => {
    const reader = async function* () {
      yield [];
    };
    const rest = {
      splitter: null,
      cellDelimiter: null,
      tallies: false,
      rowAt: async () => ({ columns: [], values: {} }),
      header: async () => undefined,
      missingColumns: null,
      corrections: 'jsonl',
      scanKeys: null,
    } as const;
    const complete = defineFormat({ summary: 'toy (a test format)', options: null, read: reader, ...rest });
    expect(complete.summary).toBe('toy (a test format)');
    // @ts-expect-error no `splitter`, `cellDelimiter`, `tallies`, `rowAt`, `header`, `missingColumns`, `corrections` nor `scanKeys`
    defineFormat({ summary: 'toy', options: null, read: reader });
    const { missingColumns: _, ...withoutColumnsCheck } = complete;
    // @ts-expect-error no `missingColumns`: the check before a run must hear from every format, if only that it cannot tell (null)
    defineFormat(withoutColumnsCheck);
    // @ts-expect-error a corrections shape that no reader of corrections files knows
    defineFormat({ ...complete, corrections: 'xml' });
    const withOptions = defineFormat({
      ...rest,
      summary: 'toy',
      options: { key: 'toy', field: z.strictObject({ tab: z.boolean() }).default({ tab: true }), check: () => [] },
      // @ts-expect-error the reader sees its own options by their key, typed: `source.toy.tab` is a boolean, not text
      read: (source) => reader(source.toy.tab.length),
    });
    expect(withOptions.options?.key).toBe('toy');
  });
});
