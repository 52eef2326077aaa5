/**
 * GET /process-orchestration/process-definitions: the catalogue, filtered by `types` and
 * `codes` (each comma-separated and/or repeated, case-insensitive). Always a JSON array, also
 * for one or no match (docs/contract-gaps.md).
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { listDefinitions } from './definitions.js';

export async function definitionsRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get('/process-orchestration/process-definitions', { config: { area: 'process-orchestration' } }, async (request) => {
    const query = request.query as Record<string, string | string[] | undefined>;
    return listDefinitions(ctx.db, { types: listParam(query.types), codes: listParam(query.codes) });
  });
}

/**
 * A list query parameter given as `a,b`, `x=a&x=b`, or both; blanks are dropped.
 * @example listParam(['LoanOrigination,Redemption', ' ']) // ['LoanOrigination', 'Redemption']
 */
export function listParam(value: string | string[] | undefined): string[] {
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}
