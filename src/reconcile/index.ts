/**
 * The reconcile stage: the platform half of a migration (validate, import, counts through the
 * ledger's jobs table), the log stream kept in the ledger, corrections files and the
 * reconciliation report. Entry points: `migrate` (a pipeline through the whole chain),
 * `reconcile` (the report of a migration), `runDemo`.
 */
export { migrate, type MigrateOptions, type MigrateResult } from './migrate.js';
export { reconcile, REPORTS_DIR, type ReconcileOptions, type ReconcileResult } from './reconcile.js';
export { runChain, type ChainOptions, type ChainOutcome, type ChainEvent } from './chain.js';
export { driveJob, type JobKind, type JobEvent } from './jobs-driver.js';
export { followLogs, type FollowOptions } from './logs-follow.js';
export { writeCorrections, type CorrectionsFile } from './corrections.js';
export { runDemo, type DemoOptions, type DemoResult } from './demo.js';
export { buildReport, parseTolerance, type ReconciliationReport, type Tolerance } from './report-model.js';
export { renderMarkdown, renderJson } from './render-markdown.js';
export { renderHtml } from './render-html.js';
export {
  verify,
  verifyMigration,
  parseAcceptRules,
  readAcceptFile,
  verificationHeadline,
  verificationLines,
  type AcceptRule,
  type VerificationReport,
  type VerifyOptions,
} from './verify/index.js';
