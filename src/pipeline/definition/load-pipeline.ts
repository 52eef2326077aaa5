/**
 * Loads a pipeline file and the mapping files it names, validated at the edge: everything past
 * this point trusts the definition. Errors name file, line and column and say what was
 * expected (see yaml-file.ts).
 */
import { dirname, resolve } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { pipelineFileSchema, type PipelineFile, type SourceSpec } from './schema.js';
import { loadYamlFile } from './yaml-file.js';
import { checkMappingDeclarations, mappingFileSchema, type MappingFile } from '../mapping/schema.js';
import { compileTransform } from '../mapping/transforms.js';
import { StagecoachError } from '../../contract/errors.js';
import { displayPath } from '../source/display-path.js';
import { changedMeaningError, findChangedMeanings, LANGUAGE_VERSION, type LocatedSite, statedLanguage } from './language.js';
import { MEANING_CHANGES } from './language-changes.js';
import { checkChildDeclarations, checkChildItem, rootOf } from './child-declarations.js';
import { childMappingFileSchema, type ChildMappingFile } from './child-schema.js';

export interface SourceDefinition extends SourceSpec {
  /** The mapping file: absolute path, the path shown in messages, and its validated content. */
  mappingFile: { path: string; display: string; spec: MappingFile };
  /**
   * A child source's mapping file (one row → one list item); its `mappingFile.spec` then stands
   * for it where a whole mapping is asked for (the report's excerpts): the root parent's type,
   * the parent-key column as key, no record fields.
   */
  childMapping?: ChildMappingFile;
}

export interface PipelineDefinition extends Omit<PipelineFile, 'sources'> {
  /** The pipeline file as given (shown in messages). */
  file: string;
  /** Absolute path of the pipeline file. */
  path: string;
  /** Folder of the pipeline file: source globs and mapping paths are relative to it. */
  dir: string;
  sources: SourceDefinition[];
}

export { displayPath };

/**
 * Loads and validates `pipelines/<name>.yaml` and its mappings.
 * @example const def = await loadPipeline('pipelines/crm.yaml');
 *          def.sources.map((s) => s.name) // ['klanten', 'bedrijven']
 */
export async function loadPipeline(file: string): Promise<PipelineDefinition> {
  const path = resolve(file);
  const display = displayPath(path);
  // What the file meant in the language it was written for, before the current schema reads it.
  const text = readText(path);
  const version = text === undefined ? LANGUAGE_VERSION : (statedLanguage(text) ?? LANGUAGE_VERSION);
  const stated = text !== undefined && /^language\s*:/m.test(text);
  // The pipeline's own changed places are named together with its mappings' (below), in one refusal.
  const sites = text === undefined ? [] : findChangedMeanings(text, display, version, 'pipeline', MEANING_CHANGES);
  const spec = await loadYamlFile(path, pipelineFileSchema, display, (p) => {
    const problems: { path: (string | number)[]; message: string }[] = [];
    const seen = new Set<string>();
    p.sources.forEach((s, i) => {
      if (seen.has(s.name))
        problems.push({
          path: ['sources', i, 'name'],
          message: `duplicate source name ${JSON.stringify(s.name)}, expected names unique in the pipeline`,
        });
      seen.add(s.name);
      if (!existsSync(resolve(dirname(path), s.mapping)))
        problems.push({
          path: ['sources', i, 'mapping'],
          message: `mapping file not found: ${JSON.stringify(s.mapping)} (relative to the pipeline file)`,
        });
    });
    problems.push(...checkChildDeclarations(p.sources));
    return problems;
  });
  const dir = dirname(path);
  const changed = mappingSites(
    spec.sources.map((s) => resolve(dir, s.mapping)),
    version,
  );
  if (sites.length + changed.length > 0) throw changedMeaningError(display, version, stated, [...sites, ...changed]);
  const sources: SourceDefinition[] = [];
  const loaded = new Map<string, MappingFile>();
  for (const s of spec.sources) {
    const mappingPath = resolve(dir, s.mapping);
    if (s.child) continue;
    let mapping = loaded.get(mappingPath);
    if (!mapping) {
      mapping = await loadYamlFile(mappingPath, mappingFileSchema, displayPath(mappingPath), (m) => {
        const problems = checkMappingDeclarations(m, compileTransform);
        if (m.script && !existsSync(resolve(dirname(mappingPath), m.script)))
          problems.push({ path: ['script'], message: `script not found: ${JSON.stringify(m.script)} (relative to the mapping file)` });
        return problems;
      });
      loaded.set(mappingPath, mapping);
    }
    sources.push({ ...s, mappingFile: { path: mappingPath, display: displayPath(mappingPath), spec: mapping } });
  }
  // Child mappings after the others: an item is held to the fields of its root parent's list.
  const childMappings = new Map<string, ChildMappingFile>();
  for (const s of spec.sources) {
    if (!s.child) continue;
    const mappingPath = resolve(dir, s.mapping);
    const root = rootOf(s, spec.sources);
    const rootType = loaded.get(resolve(dir, root.mapping))?.type;
    const check = (m: ChildMappingFile) =>
      // A child of a child goes into a list of its parent's item, whose fields staging does not declare.
      s.child!.of === root.name && rootType ? checkChildItem(m, s.child!.into, rootType) : [];
    childMappings.set(s.name, await loadYamlFile(mappingPath, childMappingFileSchema, displayPath(mappingPath), check));
  }
  // Child sources after their roots' mappings are loaded, in the file's order.
  const ordered = spec.sources.map((s): SourceDefinition => {
    const own = sources.find((d) => d.name === s.name);
    if (own) return own;
    const childMapping = childMappings.get(s.name)!;
    const root = sources.find((d) => d.name === rootOf(s, spec.sources).name)!;
    const mappingPath = resolve(dir, s.mapping);
    const stand: MappingFile = {
      type: root.mappingFile.spec.type,
      key: { column: s.child!.key, scope: root.mappingFile.spec.key.scope, transforms: [] },
      record: {},
      codes: childMapping.codes,
    };
    return { ...s, childMapping, mappingFile: { path: mappingPath, display: displayPath(mappingPath), spec: stand } };
  });
  sources.splice(0, sources.length, ...ordered);
  return { ...spec, file: display, path, dir, sources };
}

/** A file's text, or undefined when it cannot be read (its loader then says why). */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The places of the mappings (each once) whose meaning changed since `version`. */
function mappingSites(paths: string[], version: number): LocatedSite[] {
  if (version >= LANGUAGE_VERSION) return [];
  return [...new Set(paths)].flatMap((p) => {
    const text = readText(p);
    return text === undefined ? [] : findChangedMeanings(text, displayPath(p), version, 'mapping', MEANING_CHANGES);
  });
}

/** Throws the clear "not implemented" error for components other than Counterparties. */
export function assertImplemented(def: PipelineDefinition): void {
  if (def.component !== 'Counterparties') {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${def.file}: component ${def.component} is not implemented yet; only Counterparties pipelines can be read (the format accepts ${def.component} so the file can be written now)`,
      { file: def.file },
    );
  }
}
