/**
 * The verification in the reconciliation report: its headline in the first lines, its section in
 * Markdown and HTML (escaped), and the JSON carrying the model.
 */
import { describe, expect, it } from 'vitest';
import { buildReport } from '../../src/reconcile/report-model.js';
import { renderJson, renderMarkdown } from '../../src/reconcile/render-markdown.js';
import { renderHtml } from '../../src/reconcile/render-html.js';
import { verificationHeadline } from '../../src/reconcile/verify/render-verification.js';
import type { VerificationReport } from '../../src/reconcile/verify/verification-model.js';
import { input } from '../cases/reconcile/report-input.js';

const verification: VerificationReport = {
  migrationId: '7f1c2a4e-0000-4000-8000-000000000001',
  pipelines: ['crm'],
  streamed: 12,
  resumes: 1,
  imported: 10,
  importedEarlier: 0,
  proven: 6,
  compared: 3,
  identical: 7,
  identicalAfterAccepted: 1,
  differing: 1,
  notHeld: { total: 1, records: [{ pipeline: 'crm', file: 'k.csv', line: 9, legacyKey: '100008', referenceId: 'r9' }] },
  notVerifiable: { total: 0, records: [] },
  fields: [
    {
      field: 'surname',
      differing: 1,
      accepted: 1,
      records: [
        {
          pipeline: 'crm',
          file: 'k.csv',
          line: 3,
          legacyKey: '100002',
          referenceId: 'r3',
          sent: '"V*** <b>" (31 chars)',
          held: '"V***" (30 chars)',
        },
        {
          pipeline: 'crm',
          file: 'k.csv',
          line: 5,
          legacyKey: '100004',
          referenceId: 'r5',
          sent: '"B***" (12 chars)',
          held: '"B***" (8 chars)',
          acceptedBy: 'surname:truncate=8',
        },
      ],
    },
  ],
  notShown: { isActive: 10 },
  strays: { total: 0, earlierMigration: 0, unknown: 0, records: [] },
  preExisting: 2,
  otherPipelines: 0,
  accept: ['surname:truncate=8'],
  passed: false,
  problems: ['1 record the platform holds otherwise than sent (surname: 1)', '1 imported record the platform does not hold'],
  seconds: 0.4,
};

const report = { ...buildReport(input({})), verification };

describe('the verification in the report', () => {
  it('says what it found in one headline', () => {
    expect(verificationHeadline(verification)).toBe(
      'VERIFICATION FAILED: 8 of 10 imported records identical on the platform (80%) (1 after accepted normalisations)',
    );
    expect(verificationHeadline({ ...verification, identical: 10, identicalAfterAccepted: 0, passed: true })).toBe(
      'Verified: 10 of 10 imported records identical on the platform (100%)',
    );
    // Issue 40: "0 of 0" is neither a failure nor a success.
    const none = { ...verification, imported: 0, identical: 0, identicalAfterAccepted: 0, passed: true, problems: [] };
    expect(verificationHeadline(none)).toBe(
      `Nothing to verify yet: no record of ${verification.pipelines.join(', ')} is imported (migration ${verification.migrationId})`,
    );
  });

  it('puts the headline in the first lines of the Markdown, then a section with counts, fields and records by file:line', () => {
    const md = renderMarkdown(report);
    const lines = md.split('\n');
    expect(lines.slice(0, 12)).toContain(
      '**VERIFICATION FAILED: 8 of 10 imported records identical on the platform (80%) (1 after accepted normalisations)** (see Verification below).',
    );
    expect(md).toContain(
      '| 10 | 7 | 1 | 1 | 1 | 0 | 0 | 12 |\n\n6 proven identical by hash (no export read for them); 3 held otherwise than sent compared field by field with the export.\n\n| Field | Differ | Accepted | Examples (legacy file:line) |\n| --- | ---: | ---: | --- |\n| surname | 1 | 1 | k.csv:3 (100002): surname: sent "V*** <b>" (31 chars), platform holds "V***" (30 chars)<br>k.csv:5 (100004): surname: sent "B***" (12 chars), platform holds "B***" (8 chars) — accepted (surname:truncate=8) |',
    );
    expect(md).toContain('**Imported, not held by the platform** (1):\n\n- k.csv:9 (100008) `r9`');
    expect(md).toContain("Not shown by the platform's stream, not compared: isActive (10).");
  });

  it('escapes the section in HTML and keeps the model in JSON', () => {
    const html = renderHtml(report);
    expect(html).toContain('<h2>Verification: what the platform holds</h2>');
    expect(html).toContain('sent &quot;V*** &lt;b&gt;&quot; (31 chars)');
    expect(html).not.toContain('<b>"');
    expect(JSON.parse(renderJson(report)).verification).toEqual(verification);
  });
});
