/**
 * Migration assistance: migrations and their state machine, the counterparty staging area
 * (upload, retrieval, deletion), background jobs (validate-staging, import, counts) that
 * survive a restart, and the migration log stream. Jobs left running by a previous start of the
 * service are resumed here.
 */
import type { FastifyInstance } from 'fastify';
import { MEDIA } from '../../contract/media.js';
import type { ServiceContext } from '../context.js';
import { JobRunner } from './jobs.js';
import { createMigrationParts } from './parts.js';
import { jobRoutes } from './route-jobs.js';
import { logStreamRoute } from './route-logs.js';
import { migrationRoutes } from './route-migrations.js';
import { stagedDataRoutes } from './route-staged.js';
import { stagingUploadRoute } from './route-staging.js';

/**
 * Creates the migration tables, registers the routes and resumes unfinished jobs.
 * @example await registerMigrationAssistance(app, ctx); // in buildApp, after the guard
 */
export async function registerMigrationAssistance(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const parts = createMigrationParts(ctx);
  const runner = new JobRunner(parts);
  // The upload route gets its own scope: only the two stream formats are accepted there (anything
  // else is 415), and they are handed over as raw streams.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser([MEDIA.jsonSeq, MEDIA.jsonl], (_request, payload, done) => done(null, payload));
    await stagingUploadRoute(scope, parts);
  });
  await migrationRoutes(app, parts);
  await stagedDataRoutes(app, parts);
  await jobRoutes(app, parts, runner);
  await logStreamRoute(app, parts);
  runner.resumeAll();
}
