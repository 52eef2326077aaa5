/**
 * Jobs: PUT …/jobs/validate-staging, …/jobs/import and …/jobs/counts (the counts path is our
 * choice) answer 200 with the job id as a JSON string; GET /migration-assistance/jobs/{id}
 * answers 202 {referenceId, componentsCompleted} while the job runs and 200 with its result
 * once done. A running job suggests when to poll again with Retry-After.
 */
import type { FastifyInstance } from 'fastify';
import type { JobType } from '../../contract/migration.js';
import { HttpProblem } from '../http/problem.js';
import type { JobRunner } from './jobs.js';
import type { MigrationParts } from './parts.js';

const AREA = { area: 'migration-assistance' } as const;
const JOB_PATHS: Record<string, JobType> = { 'validate-staging': 'ValidateStaging', import: 'Import', counts: 'Counts' };

export async function jobRoutes(app: FastifyInstance, _parts: MigrationParts, runner: JobRunner): Promise<void> {
  for (const [path, type] of Object.entries(JOB_PATHS)) {
    app.put<{ Params: { id: string } }>(`/migration-assistance/migrations/:id/jobs/${path}`, { config: AREA }, async (request, reply) => {
      const jobId = runner.start(request.principal.brokerKey, request.params.id, type);
      // A JSON string body, as the spec shows: "3f1c…".
      return reply.type('application/json').send(JSON.stringify(jobId));
    });
  }

  app.get<{ Params: { jobId: string } }>('/migration-assistance/jobs/:jobId', { config: AREA }, async (request, reply) => {
    const shown = runner.render(request.principal.brokerKey, request.params.jobId);
    if (!shown) throw new HttpProblem(404, 'NOT_FOUND', `job ${request.params.jobId} was not found`);
    if (shown.status === 202) reply.header('retry-after', '1');
    return reply.status(shown.status).send(shown.body);
  });
}
