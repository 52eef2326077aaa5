/** Checks before upload and the plan summary built on them. */
export { KeyIndex, type KeyLocation } from './key-index.js';
export { checkRecord, duplicateReason, missingTargets } from './check-record.js';
export { summariseRows, type PlanSummary, type RejectSample } from './plan-summary.js';
export {
  mapAndCheck,
  settleRow,
  rowChecker,
  rejectUnreadable,
  type CheckRow,
  type RowVerdict,
  type KeyChecks,
  type SettleInput,
} from './row-verdict.js';
