/**
 * A pipeline made ready to read: every source's mapping compiled (once per mapping file) and its
 * files listed, each with its index among all the pipeline's files (how a row's first occurrence
 * names its file). Shared by the one-thread reader, the parallel reader's workers and `plan`.
 */
import { StagecoachError } from '../contract/errors.js';
import { assertImplemented, type PipelineDefinition, type SourceDefinition } from './definition/load-pipeline.js';
import { compileMapping, type CompiledMapping } from './mapping/compile.js';
import { ReferenceIds } from './mapping/reference-ids.js';
import { listSourceFiles, type SourceFile } from './source/index.js';
import { prepareChildren, type PreparedChild } from './children/prepare.js';
import { attachColumn, childrenOf, splicedMapping } from './children/splice.js';

export interface PreparedSource {
  def: SourceDefinition;
  mapping: CompiledMapping;
  files: (SourceFile & { index: number })[];
  /** Its child sources (children/), read into its records; empty for most sources. */
  children: PreparedChild[];
}

/** Compiles the mappings and lists the files of every source (shared by readPipeline and plan). */
export async function preparePipeline(
  def: PipelineDefinition,
): Promise<{ sources: PreparedSource[]; files: string[]; needsKeyPass: boolean }> {
  assertImplemented(def);
  const ids = new ReferenceIds(def.target.referenceNamespace);
  const compiled = new Map<string, CompiledMapping>();
  const files: string[] = [];
  const sources: PreparedSource[] = [];
  for (const s of def.sources) {
    // A child source is read into its root's records (children/), not as records of its own.
    if (s.child) continue;
    const hasChildren = childrenOf(s.name, def.sources).length > 0;
    let mapping = hasChildren ? undefined : compiled.get(s.mappingFile.path);
    if (!mapping) {
      try {
        const spec = hasChildren ? splicedMapping(s, def.sources) : s.mappingFile.spec;
        mapping = await compileMapping(spec, s.mappingFile.path, ids);
        // The rows attached to a parent row are no column its file must hold.
        if (hasChildren) for (const c of def.sources) (mapping.columns as Set<string>).delete(attachColumn(c.name));
      } catch (err) {
        throw new StagecoachError(
          'CONFIG_INVALID',
          `${s.mappingFile.display}: ${(err as Error).message.replace(`${s.mappingFile.path}: `, '')}`,
          { file: s.mappingFile.display },
          { cause: err },
        );
      }
      if (!hasChildren) compiled.set(s.mappingFile.path, mapping);
    }
    const listed = await listSourceFiles(def.dir, s);
    const children = await prepareChildren(def, s, mapping);
    sources.push({ def: s, mapping, files: listed.map((f) => ({ ...f, index: files.push(f.file) - 1 })), children });
  }
  const needsKeyPass =
    def.checks.missingRelationTarget === 'reject' &&
    def.sources.some(
      (s) =>
        s.mappingFile.spec.script !== undefined ||
        mappingMakesRelations(s.mappingFile.spec.record) ||
        (s.childMapping !== undefined && mappingMakesRelations(s.childMapping.item)),
    );
  return { sources, files, needsKeyPass };
}

function mappingMakesRelations(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (
    'referenceId' in node &&
    typeof (node as { referenceId: unknown }).referenceId === 'object' &&
    (node as { referenceId: { column?: unknown } }).referenceId.column !== undefined
  )
    return true;
  return Object.values(node).some(mappingMakesRelations);
}
