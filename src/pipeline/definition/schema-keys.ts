/**
 * A declaration's JSON Schema, and the key a misspelt one was meant to be among those it allows
 * where it stands. Below both the YAML reader (which suggests keys) and the shipped editor
 * schemas (src/pipeline/editor-schemas.ts), which know every kind of file.
 */
import { z } from 'zod';
import { closestName } from '../../contract/closest-name.js';

export type Json = { [k: string]: unknown };

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
