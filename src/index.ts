/**
 * stagecoach's public API: what a Node program calls to run a migration batch without the CLI.
 * Only the entry points and the types their callers need.
 */
export { startService, DEMO_IDENTITIES, type RunningService, type ServiceOptions } from './service/index.js';
export { StagecoachError, type ErrorCode } from './contract/errors.js';
