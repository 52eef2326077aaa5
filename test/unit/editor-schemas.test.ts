import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { editorSchemas } from '../../src/pipeline/editor-schemas.js';
import { suggestKey } from '../../src/pipeline/definition/schema-keys.js';
import { pipelineFileSchema } from '../../src/pipeline/definition/schema.js';
import { mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { ROOT } from '../support/cli.js';

describe('JSON Schemas for editors', () => {
  it('are shipped as the zod declarations generate them (npm run schemas rewrites them)', () => {
    for (const [name, schema] of Object.entries(editorSchemas())) {
      const shipped = JSON.parse(readFileSync(join(ROOT, 'schemas', name), 'utf8')) as unknown;
      expect(shipped, `schemas/${name} is out of date: run npm run schemas`).toEqual(schema);
    }
  });

  it('are referenced from every pipeline and mapping file of the project, at a path that exists', () => {
    const yamls = [
      ...readdirSync(join(ROOT, 'pipelines')).map((f) => join(ROOT, 'pipelines', f)),
      ...readdirSync(join(ROOT, 'mappings', 'counterparties'))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => join(ROOT, 'mappings', 'counterparties', f)),
    ].filter((f) => f.endsWith('.yaml'));
    expect(yamls.length).toBeGreaterThan(4);
    for (const f of yamls) {
      const first = readFileSync(f, 'utf8').split('\n')[0]!;
      const m = /^# yaml-language-server: \$schema=(.+)$/.exec(first);
      expect(m, f).not.toBeNull();
      expect(existsSync(resolve(dirname(f), m![1]!)), f).toBe(true);
    }
  });

  it('suggest the key a misspelt one was meant to be, where it stands', () => {
    expect(suggestKey(pipelineFileSchema, ['sources', 0, 'csv'], 'quoute')).toBe('quote');
    expect(suggestKey(pipelineFileSchema, [], 'batchng')).toBe('batching');
    expect(suggestKey(mappingFileSchema, ['key'], 'colum')).toBe('column');
    expect(suggestKey(pipelineFileSchema, [], 'zzzzzzzz')).toBeUndefined();
  });
});
