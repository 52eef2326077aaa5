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
import type { initials, normaliseEmail, normalisePhone, titleCase } from './transforms.js';

type Values = Record<string, unknown>;

/** What a mapping script receives besides the row and the record. */
export interface MappingHelpers {
  /** referenceId of a legacy key: `referenceId('klant', '1001')`, or of a sub-entity with a suffix. */
  referenceId(scope: string, key: string, suffix?: string): string;
  /** Rejects the row with a reason (the row is still mapped, then refused before upload). */
  reject(field: string, code: string, message: string, value?: unknown): void;
  /** Declares a relation to another legacy key so the missing-target check covers it. */
  relation(field: string, scope: string, key: string): string;
  initials: typeof initials;
  titleCase: typeof titleCase;
  normalisePhone: typeof normalisePhone;
  normaliseEmail: typeof normaliseEmail;
}
export type MappingScript = (
  row: Readonly<Values>,
  record: Record<string, unknown>,
  helpers: MappingHelpers,
) => Record<string, unknown> | void;

const TYPESCRIPT = /\.m?ts$/;

/** The part of tsx's API used here (injected in tests to play a machine without tsx). */
export interface TsxApi {
  tsImport(url: string, parent: string): Promise<unknown>;
}

/**
 * The default export of `script` (a path relative to the mapping file), checked to be a function.
 * @example const rule = await loadMappingScript('mappings/counterparties/crm-persons.yaml', './rules/split-surname-prefix.ts');
 */
export async function loadMappingScript(
  mappingFile: string,
  script: string,
  importTsx: () => Promise<TsxApi> = () => import('tsx/esm/api'),
): Promise<MappingScript> {
  const url = pathToFileURL(resolve(dirname(mappingFile), script)).href;
  let mod: { default?: unknown };
  try {
    if (TYPESCRIPT.test(script)) {
      const { tsImport } = await importTsx().catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
        // tsx is an optional peer: only TypeScript scripts need it, so it is not installed for everyone.
        throw new Error(
          `a TypeScript script needs tsx, which is not installed: run \`npm install tsx\` in your project, or write the script as .js/.mjs`,
        );
      });
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
