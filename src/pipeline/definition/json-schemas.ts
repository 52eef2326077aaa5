/**
 * JSON Schemas of the pipeline and mapping files, generated from their zod declarations (the one
 * source of truth), shipped in `schemas/` so that editors complete and check keys (the YAML
 * files stagecoach writes reference them with `# yaml-language-server: $schema=…`), and read
 * here to suggest the key a misspelt one was meant to be. `npm run schemas` rewrites the files;
 * a test fails when they are out of date.
 */
import { applicationMappingSchema, applicationsPipelineSchema } from '../applications/definition.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { closestName } from '../../contract/closest-name.js';
import { mappingFileSchema } from '../mapping/schema.js';
import { pipelineFileSchema } from './schema.js';
import { childMappingFileSchema } from '../children/schema.js';

type Json = { [k: string]: unknown };

const cache = new Map<z.ZodType, Json>();

/** The JSON Schema of a declaration (what a file may say: defaults are optional). */
export function jsonSchemaOf(schema: z.ZodType, title?: string): Json {
  let s = cache.get(schema);
  if (!s) {
    s = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
    cache.set(schema, s);
  }
  return title ? { ...s, title } : s;
}

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

/** The subschemas a value at `path` may match (through $ref, anyOf/oneOf/allOf, items, properties). */
function at(root: Json, node: Json, path: readonly (string | number)[]): Json[] {
  const resolved = (n: Json): Json[] => {
    if (typeof n.$ref === 'string') {
      const target = n.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((o, k) => (o as Json | undefined)?.[k], root);
      return target ? resolved(target as Json) : [];
    }
    const alts = [...((n.anyOf as Json[]) ?? []), ...((n.oneOf as Json[]) ?? []), ...((n.allOf as Json[]) ?? [])];
    return alts.length > 0 ? alts.flatMap(resolved) : [n];
  };
  let nodes = resolved(node);
  for (const p of path) {
    nodes = nodes.flatMap((n) => {
      if (typeof p === 'number') return n.items ? resolved(n.items as Json) : [];
      const prop = (n.properties as Json | undefined)?.[p];
      if (prop) return resolved(prop as Json);
      return typeof n.additionalProperties === 'object' ? resolved(n.additionalProperties as Json) : [];
    });
  }
  return nodes;
}

/**
 * The key a misspelt one was most likely meant to be, among the keys the schema allows where it
 * stands (undefined when none is close).
 * @example suggestKey(pipelineFileSchema, ['sources', 0, 'csv'], 'quoute') // 'quote'
 */
export function suggestKey(schema: z.ZodType, path: readonly (string | number)[], key: string): string | undefined {
  const root = jsonSchemaOf(schema);
  const allowed = [...new Set(at(root, root, path).flatMap((n) => Object.keys((n.properties as Json | undefined) ?? {})))];
  return closestName(key, allowed);
}
