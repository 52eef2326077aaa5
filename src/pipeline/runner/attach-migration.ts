/**
 * The migration a run stages into: the tenant's current one (`target.migration: current`), or a
 * new one for the pipeline's component.
 */
import { StagecoachError } from '../../contract/errors.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import type { PipelineClient, RunLogger } from './ports.js';

/** The tenant's current migration, or a new one for the pipeline's component. */
export async function attachMigration(
  def: PipelineDefinition,
  client: PipelineClient | undefined,
  signal: AbortSignal | undefined,
  log: RunLogger | undefined,
): Promise<{ referenceId: string; created: boolean }> {
  if (!client) throw new StagecoachError('CONFIG_INVALID', 'no client to find the migration with');
  const sig = signal ? { signal } : {};
  if (def.target.migration === 'current') {
    const current = await client.migrations.current(sig);
    if (current) {
      const components = current.components?.map((c) => c.component) ?? [];
      if (components.length > 0 && !components.includes(def.component)) {
        log?.warn(
          { migration: current.referenceId, components },
          `the current migration ${current.referenceId} was registered for ${components.join(', ')}, not ${def.component}; staging decides whether it takes these records`,
        );
      }
      log?.info({ migration: current.referenceId }, `attached to the current migration ${current.referenceId}`);
      return { referenceId: current.referenceId, created: false };
    }
  }
  const created = await client.migrations.create([def.component], sig);
  log?.info({ migration: created.referenceId }, `created migration ${created.referenceId} for ${def.component}`);
  return { referenceId: created.referenceId, created: true };
}
