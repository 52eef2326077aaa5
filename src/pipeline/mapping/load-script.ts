/**
 * Loads a mapping's escape-hatch script (docs/mappings.md): a JavaScript module through
 * `import()`, or a TypeScript one (`.ts`, `.mts`) through tsx's `tsImport`, which strips
 * the types with esbuild as the module loads — no build step, and relative imports inside the
 * script resolve as usual. It does not type-check: run `tsc --noEmit` on the script for that
 * (the `MappingScript` and `MappingHelpers` types are exported from the package root). tsx is
 * loaded only when a TypeScript script is named, so a pipeline without one pays nothing for it.
 */
import { pathToFileURL } from 'node:url';
import { dirname, resolve } from 'node:path';
import type { MappingScript } from './compile.js';

const TYPESCRIPT = /\.m?ts$/;

/**
 * The default export of `script` (a path relative to the mapping file), checked to be a function.
 * @example const rule = await loadMappingScript('mappings/counterparties/crm-persons.yaml', './rules/split-surname-prefix.ts');
 */
export async function loadMappingScript(mappingFile: string, script: string): Promise<MappingScript> {
  const url = pathToFileURL(resolve(dirname(mappingFile), script)).href;
  let mod: { default?: unknown };
  try {
    if (TYPESCRIPT.test(script)) {
      const { tsImport } = await import('tsx/esm/api');
      mod = (await tsImport(url, import.meta.url)) as { default?: unknown };
    } else {
      mod = (await import(url)) as { default?: unknown };
    }
  } catch (err) {
    throw new Error(`${mappingFile}: script ${script} could not be loaded: ${(err as Error).message}`);
  }
  // A .ts file outside a "type": "module" package loads as CommonJS: its default export arrives
  // wrapped once more ({ default: { default: fn } }).
  const fn = typeof mod.default === 'function' ? mod.default : (mod.default as { default?: unknown } | undefined)?.default;
  if (typeof fn !== 'function')
    throw new Error(`${mappingFile}: script ${script} must export a default function (row, record, helpers) => record`);
  return fn as MappingScript;
}
