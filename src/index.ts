/**
 * stagecoach's public API: what a Node program calls to run a migration batch without the CLI.
 * Only the entry points and the types their callers need.
 */
export { startService, DEMO_IDENTITIES, type RunningService, type ServiceOptions } from './service/index.js';
export { StagecoachError, type ErrorCode } from './contract/errors.js';
export {
  createClient,
  ClientError,
  type StagecoachClient,
  type ClientOptions,
  type ClientLogger,
  type Counterparty,
  type MigrationRecord,
  type JobState,
  type WaitOptions,
  type StreamOptions,
} from './client/index.js';
export { createWebhookReceiver, type WebhookReceiver, type WebhookReceiverOptions, type ReceivedEvent } from './client/webhook-receiver.js';
export { runPipeline, type RunPipelineOptions, type RunReport, type RunProgress, type PipelineClient } from './pipeline/runner/index.js';
export { openLedger, type Ledger, type RecordState, type RecordRow, type PipelineStatus } from './ledger/index.js';
export {
  migrate,
  reconcile,
  runDemo,
  followLogs,
  parseTolerance,
  type MigrateOptions,
  type MigrateResult,
  type ReconcileOptions,
  type ReconcileResult,
  type ReconciliationReport,
  type DemoOptions,
  type DemoResult,
  type Tolerance,
} from './reconcile/index.js';
export { lodgeFolder, type LodgeOptions, type LodgeReport } from './client/lodge-folder.js';
export { exportCounterparties, type ExportOptions, type ExportReport, type ExportFormat } from './client/export-counterparties.js';
export {
  loadPipeline,
  readPipeline,
  summarisePlan,
  type PipelineDefinition,
  type ReadPipelineOptions,
  type PlanSummary,
} from './pipeline/read-pipeline.js';
export type { MappedRow, SourceRow, Provenance, RejectReason } from './pipeline/types.js';
export { generateCrmSamples, type GenerateCrmOptions, type GenerateCrmResult } from './pipeline/samples/generate-crm.js';
/** For mapping scripts written in TypeScript: `const rule: MappingScript = (row, record, helpers) => …`. */
export type { MappingScript, MappingHelpers } from './pipeline/mapping/index.js';
