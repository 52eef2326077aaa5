/**
 * Loads a pipeline file and the mapping files it names, validated at the edge: everything past
 * this point trusts the definition. Errors name file, line and column and say what was
 * expected (see yaml-file.ts).
 */
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { pipelineFileSchema, type PipelineFile, type SourceSpec } from './schema.js';
import { loadYamlFile } from './yaml-file.js';
import { checkMappingDeclarations, mappingFileSchema, type MappingFile } from '../mapping/schema.js';
import { compileTransform } from '../mapping/transforms.js';
import { StagecoachError } from '../../contract/errors.js';
import { displayPath } from '../source/display-path.js';

export interface SourceDefinition extends SourceSpec {
  /** The mapping file: absolute path, the path shown in messages, and its validated content. */
  mappingFile: { path: string; display: string; spec: MappingFile };
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
    return problems;
  });
  const dir = dirname(path);
  const sources: SourceDefinition[] = [];
  const loaded = new Map<string, MappingFile>();
  for (const s of spec.sources) {
    const mappingPath = resolve(dir, s.mapping);
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
  return { ...spec, file: display, path, dir, sources };
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
