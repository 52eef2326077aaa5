/**
 * A snapshot of a pipeline's mappings as a run used them: each source's mapping file and the
 * script it names, as text. A run keeps one in the ledger, so that `plan --ledger` can map a row
 * the way that run did and show what a changed mapping changes, field by field, although the
 * ledger keeps no record content (only hashes). The snapshot holds rules, never legacy data.
 *
 * Its files are kept under paths relative to the folder that holds them all, so that restored
 * into an empty folder they find each other as before (a mapping's `script: ./rules.mjs`).
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { PipelineDefinition } from './load-pipeline.js';
import { mappingFileSchema, type MappingFile } from '../mapping/schema.js';
import { loadYamlFile } from './yaml-file.js';
import type { MappingSnapshot } from '../../ledger/types.js';
import { childMappingFileSchema, type ChildMappingFile } from './child-schema.js';

// The snapshot's shape is the ledger's (it keeps one per run), so it is declared there.
export type { MappingSnapshot } from '../../ledger/types.js';

/**
 * The mappings (and their scripts) of a pipeline as they are on disk now.
 * @example await takeMappingSnapshot(def) // { sources: { klanten: 'crm-persons.yaml' }, files: { 'crm-persons.yaml': 'type: person…' } }
 */
export async function takeMappingSnapshot(def: PipelineDefinition): Promise<MappingSnapshot> {
  const bySource = new Map<string, string>();
  const paths = new Set<string>();
  for (const s of def.sources) {
    const path = s.mappingFile.path;
    bySource.set(s.name, path);
    paths.add(path);
    if (s.mappingFile.spec.script) paths.add(resolve(dirname(path), s.mappingFile.spec.script));
  }
  const base = commonFolder([...paths]);
  const files: Record<string, string> = {};
  for (const p of paths) files[relative(base, p).split(sep).join('/')] = await readFile(p, 'utf8');
  const sources: Record<string, string> = {};
  for (const [name, path] of bySource) sources[name] = relative(base, path).split(sep).join('/');
  return { sources, files };
}

/**
 * The snapshot's mapping files, restored into a folder of their own and loaded; `close` removes
 * the folder. A source the snapshot has no mapping of is absent. The sources named in
 * `childSources` have child mapping files (definition/child-schema.ts): they are in `childMappings`.
 */
export async function restoreMappingSnapshot(
  snapshot: MappingSnapshot,
  childSources: ReadonlySet<string> = new Set(),
): Promise<{
  mappings: Map<string, { path: string; spec: MappingFile }>;
  childMappings: Map<string, { path: string; spec: ChildMappingFile }>;
  close(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'stagecoach-mappings-'));
  try {
    for (const [path, text] of Object.entries(snapshot.files)) {
      const target = resolve(dir, path);
      if (!target.startsWith(dir + sep)) continue; // a snapshot names paths inside its folder only
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, text, { mode: 0o600 });
    }
    const mappings = new Map<string, { path: string; spec: MappingFile }>();
    const childMappings = new Map<string, { path: string; spec: ChildMappingFile }>();
    for (const [source, path] of Object.entries(snapshot.sources)) {
      const file = resolve(dir, path);
      const shown = `${path} (as an earlier run used it)`;
      if (childSources.has(source))
        childMappings.set(source, { path: file, spec: await loadYamlFile(file, childMappingFileSchema, shown) });
      else mappings.set(source, { path: file, spec: await loadYamlFile(file, mappingFileSchema, shown) });
    }
    return { mappings, childMappings, close: () => rm(dir, { recursive: true, force: true }) };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

function commonFolder(paths: string[]): string {
  let base = dirname(paths[0] ?? '.');
  for (const p of paths) while (relative(base, p).startsWith('..')) base = dirname(base);
  return base;
}
