// Prints "N passed, N failed[, N skipped]" from vitest's JSON report. If the report is missing
// (the build or vitest itself failed), that counts as one failure so CI cannot read it as green.
import { existsSync, readFileSync } from 'node:fs';

const [file, status, lintStatus = '0'] = process.argv.slice(2);
// The linter's verdict counts as one more check: it fails CI the way a failed test does.
const lintFailed = Number(lintStatus) !== 0 ? 1 : 0;
if (!existsSync(file)) {
  console.log(`0 passed, ${1 + lintFailed} failed`);
  process.exit(1);
}
const r = JSON.parse(readFileSync(file, 'utf8'));
const passed = r.numPassedTests ?? 0;
let failed = r.numFailedTests ?? 0;
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
// A suite that failed to load has no failed tests but must still fail the run.
const brokenSuites = (r.testResults ?? []).filter((s) => s.status === 'failed' && (s.assertionResults ?? []).every((a) => a.status !== 'failed')).length;
failed += brokenSuites + lintFailed;
if (failed === 0 && Number(status) !== 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
