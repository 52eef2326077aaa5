/**
 * POST /process-orchestration/processes (start a process from an active definition) and
 * GET /process-orchestration/processes/{id} (not in the spec: status and external references,
 * docs/lodging.md). Processes belong to the token's tenant and white label; any other owner
 * gets 404.
 */
import type { FastifyInstance } from 'fastify';
import { createProcessSchema } from '../../contract/process.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { findDefinition } from './definitions.js';
import { parseBody } from './parse-body.js';
import { createProcess, findOwnedProcess, renderProcess } from './store-processes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function processesRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const config = { area: 'process-orchestration' } as const;

  app.post('/process-orchestration/processes', { config }, async (request, reply) => {
    const body = parseBody(createProcessSchema, request.body, 'process creation body');
    const definition = findDefinition(ctx.db, body.processDefinitionReferenceId);
    if (!definition) {
      throw new HttpProblem(
        422,
        'UNKNOWN_PROCESS_DEFINITION',
        `processDefinitionReferenceId ${body.processDefinitionReferenceId} names no process definition; GET /process-orchestration/process-definitions lists them`,
        {
          errors: [{ field: 'processDefinitionReferenceId', message: 'UNKNOWN_PROCESS_DEFINITION' }],
        },
      );
    }
    if (!definition.isActive) {
      throw new HttpProblem(
        422,
        'PROCESS_DEFINITION_INACTIVE',
        `process definition ${definition.code} (${definition.referenceId}) is not active; no new processes can be started from it`,
        {
          errors: [{ field: 'processDefinitionReferenceId', message: 'PROCESS_DEFINITION_INACTIVE' }],
        },
      );
    }
    const row = createProcess(ctx.db, request.principal, definition, body.externalReferences);
    return reply
      .code(201)
      .header('location', `/process-orchestration/processes/${row.reference_id}`)
      .send({ referenceId: row.reference_id });
  });

  app.get('/process-orchestration/processes/:processId', { config }, async (request) => {
    const { processId } = request.params as { processId: string };
    const row = UUID.test(processId) ? findOwnedProcess(ctx.db, request.principal, processId) : undefined;
    if (!row) throw new HttpProblem(404, 'NOT_FOUND', `process ${processId} was not found`);
    return renderProcess(ctx.db, row);
  });
}
