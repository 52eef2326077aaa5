/**
 * JSON Schemas of the pipeline and mapping files, generated from their zod declarations (the one
 * source of truth), shipped in `schemas/` so that editors complete and check keys (the YAML
 * files stagecoach writes reference them with `# yaml-language-server: $schema=…`; the key
 * suggestions read the same schemas through schema-keys.ts). `npm run schemas` rewrites the files;
 * a test fails when they are out of date.
 */
import { applicationMappingSchema, applicationsPipelineSchema } from './applications/definition.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mappingFileSchema } from './mapping/schema.js';
import { pipelineFileSchema } from './definition/schema.js';
import { childMappingFileSchema } from './definition/child-schema.js';
import { type Json, jsonSchemaOf } from './definition/schema-keys.js';

/** The schemas as they are shipped. */
export function editorSchemas(): Record<
  | 'pipeline.schema.json'
  | 'mapping.schema.json'
  | 'child-mapping.schema.json'
  | 'applications-pipeline.schema.json'
  | 'application-mapping.schema.json',
  Json
> {
  return {
    'pipeline.schema.json': jsonSchemaOf(pipelineFileSchema, 'stagecoach pipeline file'),
    'mapping.schema.json': jsonSchemaOf(mappingFileSchema, 'stagecoach mapping file'),
    'child-mapping.schema.json': jsonSchemaOf(
      childMappingFileSchema,
      'stagecoach child mapping file (a child source: one row → one list item)',
    ),
    'applications-pipeline.schema.json': jsonSchemaOf(applicationsPipelineSchema, 'stagecoach applications pipeline file'),
    'application-mapping.schema.json': jsonSchemaOf(applicationMappingSchema, 'stagecoach application mapping file'),
  };
}

/** Writes the schemas into `dir` (the package's `schemas/`). */
export async function writeEditorSchemas(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, schema] of Object.entries(editorSchemas())) {
    await writeFile(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
    written.push(join(dir, name));
  }
  return written;
}
