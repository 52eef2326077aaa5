/** Pipeline definitions: the one way in is `loadPipeline` (validated YAML, located errors). */
export { loadPipeline, displayPath, type PipelineDefinition, type SourceDefinition } from './load-pipeline.js';
export type { PipelineFile, SourceSpec, SourceEncoding, SourceFormat } from './schema.js';
