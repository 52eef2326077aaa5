/**
 * The declaration of an applications pipeline (`component: Applications`): the pipeline file's
 * usual sources, batching and target, plus how lodging goes; and the application mapping file
 * each source names, which maps one legacy row into the attachments of one CleanOrder message
 * with the mapping language's expressions (docs/applications.md). Validated at the edge, errors
 * at file:line:column like every other declaration.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { pipelineFileSchema } from '../definition/schema.js';
import { loadYamlFile } from '../definition/yaml-file.js';
import { codeTableSchema, exprSchema, transformsSchema } from '../mapping/schema.js';
import { displayPath } from '../source/display-path.js';
import type { SourceSpec } from '../definition/schema.js';

/** The attachments an application mapping builds, in upload order (the two the platform requires). */
export const APPLICATION_ATTACHMENTS = ['CleanOrderFinancingRequest.xml', 'CleanOrderCounterparties.xml'] as const;
export type ApplicationAttachment = (typeof APPLICATION_ATTACHMENTS)[number];

/** An XML element's content: child elements by name, `@name` for attributes, `#` for text. */
const elementContent = z.record(z.string(), exprSchema);

export const applicationMappingSchema = z.strictObject({
  key: z
    .strictObject({
      column: z.string().min(1).describe("legacy column holding the application's key"),
      scope: z
        .string()
        .regex(/^[A-Za-z0-9_.-]+$/, { message: 'expected letters, digits, _ . or -' })
        .describe('key scope: the message id is uuidv5("application:scope:key", namespace)'),
      transforms: transformsSchema,
    })
    .describe('the legacy key of the application'),
  externalReference: z
    .strictObject({ origin: z.string().min(1).describe("the process's external reference origin; its referenceId is the legacy key") })
    .describe("the process's external reference"),
  attachments: z
    .strictObject({
      'CleanOrderFinancingRequest.xml': elementContent.describe('children of the root element, in the XSD order'),
      'CleanOrderCounterparties.xml': elementContent.describe('children of the root element, in the XSD order'),
    })
    .describe('one entry per attachment: the content of its root element'),
  codes: z.record(z.string(), codeTableSchema).default({}).describe('code tables used by code transforms'),
});
export type ApplicationMapping = z.output<typeof applicationMappingSchema>;

export const applicationsPipelineSchema = pipelineFileSchema.extend({
  component: z.literal('Applications').describe('lodges each application as a process with one CleanOrder message'),
  lodging: z
    .strictObject({
      inFlight: z.number().int().min(1).max(16).default(4).describe('attachment uploads in flight for one application; default 4'),
      outcomeTimeoutSeconds: z
        .number()
        .int()
        .min(0)
        .max(86_400)
        .default(60)
        .describe('how long to wait for every sent message to be handled; 0: do not wait; default 60'),
      events: z
        .enum(['webhook', 'poll'])
        .default('webhook')
        .describe(
          'webhook: a loopback receiver subscribed for the run (X-Event-Token checked), polling as the fallback; poll: only read the messages back; default webhook',
        ),
    })
    .default({ inFlight: 4, outcomeTimeoutSeconds: 60, events: 'webhook' })
    .describe('how applications are lodged'),
});
export type ApplicationsPipelineFile = z.output<typeof applicationsPipelineSchema>;

export interface ApplicationsSource extends SourceSpec {
  mappingFile: { path: string; display: string; spec: ApplicationMapping };
}
export interface ApplicationsPipeline extends Omit<ApplicationsPipelineFile, 'sources'> {
  file: string;
  dir: string;
  sources: ApplicationsSource[];
}

/**
 * Loads an applications pipeline and its application mappings.
 * @example const def = await loadApplicationsPipeline('pipelines/applications.yaml');
 */
export async function loadApplicationsPipeline(file: string): Promise<ApplicationsPipeline> {
  const path = resolve(file);
  const dir = dirname(path);
  const spec = await loadYamlFile(path, applicationsPipelineSchema, displayPath(path), (p) =>
    p.sources.flatMap((s, i) =>
      existsSync(resolve(dir, s.mapping))
        ? []
        : [
            {
              path: ['sources', i, 'mapping'],
              message: `mapping file not found: ${JSON.stringify(s.mapping)} (relative to the pipeline file)`,
            },
          ],
    ),
  );
  const sources: ApplicationsSource[] = [];
  for (const s of spec.sources) {
    const mappingPath = resolve(dir, s.mapping);
    const mapping = await loadYamlFile(mappingPath, applicationMappingSchema, displayPath(mappingPath));
    sources.push({ ...s, mappingFile: { path: mappingPath, display: displayPath(mappingPath), spec: mapping } });
  }
  return { ...spec, file: displayPath(path), dir, sources };
}

/** Whether a pipeline file declares `component: Applications` (read before choosing a loader). */
export function declaresApplications(text: string): boolean {
  return /^component:\s*['"]?Applications['"]?\s*(#.*)?$/m.test(text);
}
