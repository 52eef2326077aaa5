/**
 * The reconciliation report as Markdown (for a pull request, a ticket, a terminal) and as JSON
 * (for other tools). Both print the model of report-model.ts and decide nothing themselves.
 */
import {
  headline,
  otherTableText,
  STEP_LABELS,
  storyText,
  type Explanation,
  type Gap,
  type PlatformCheck,
  type ReconciliationReport,
  type StepName,
} from './report-model.js';
import { verificationHeadline, verificationMarkdown } from './verify/render-verification.js';

const STEPS: StepName[] = ['sourceRows', 'mapped', 'staged', 'valid', 'imported'];

/** Escapes the characters that would break a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function describeExplanation(e: Explanation): string {
  const what = e.label === e.code ? e.code : `${e.code}: ${e.label}`;
  return `${e.count} ${what} (${e.stage}${e.accounted ? '' : ', unaccounted'})`;
}

/** A drop between two steps reads −n; a rise (more records than the step before) +n. */
function change(difference: number): string {
  return difference === 0 ? '0' : difference > 0 ? `−${difference}` : `+${-difference}`;
}

function gapCells(g: Gap | undefined): [string, string, string] {
  if (!g) return ['', '', ''];
  const explained = g.explained.map(describeExplanation).join('; ');
  const unaccounted = g.unaccounted === 0 ? '0' : `**${g.unaccounted}**${g.ok ? ` (within tolerance ${g.allowed})` : ''}`;
  return [change(g.difference), explained || '—', unaccounted];
}

function checkRow(c: PlatformCheck, name: string): string {
  if (c.platform === null || c.difference === null)
    return `| ${cell(name)} | ${c.measure} | ${c.source} | ${c.ledger} | not reported by the platform | — | not checked |`;
  const diff = c.difference === 0 ? '0' : c.difference > 0 ? `+${c.difference}` : String(c.difference);
  return `| ${cell(name)} | ${c.measure} | ${c.source} | ${c.ledger} | ${c.platform} | ${diff} | ${c.ok ? 'ok' : '**MISMATCH**'} |`;
}

/**
 * Renders the report as Markdown.
 * @example writeFileSync('report.md', renderMarkdown(report));
 */
export function renderMarkdown(report: ReconciliationReport): string {
  const out: string[] = [];
  const { run } = report;
  out.push(`# Reconciliation report: ${run.pipeline}`, '');
  const meta = [`Run \`${run.id}\``];
  if (run.migrationId) meta.push(`migration \`${run.migrationId}\``);
  meta.push(`generated ${report.generatedAt}`, `tolerance ${report.tolerance}`);
  out.push(meta.join(' · '), '');
  if (report.privacy) out.push(`> ${report.privacy.note}`, '');
  const head = headline(report);
  if (head.state !== 'not-balanced') {
    out.push(`**${head.title}**: ${head.text}`, '');
  } else {
    out.push('**NOT BALANCED**:', '');
    for (const p of report.problems) out.push(`- ${p}`);
    out.push('');
  }
  if (report.verification) out.push(`**${verificationHeadline(report.verification)}** (see Verification below).`, '');

  out.push('## Summary', '');
  out.push(`| ${STEPS.map((s) => STEP_LABELS[s]).join(' | ')} | Unaccounted | Removed from staging |`);
  out.push(`|${' ---: |'.repeat(STEPS.length + 2)}`);
  out.push(
    `| ${STEPS.map((s) => report.totals[s]).join(' | ')} | ${report.totals.unaccounted} | ${report.totals.removedFromStaging} |`,
    '',
  );
  out.push(`Jobs: validation ${report.jobs.validation} · import ${report.jobs.import} · counts ${report.jobs.counts}`, '');

  if (report.verification) out.push(...verificationMarkdown(report.verification));

  if (report.sourceFiles.length > 0) {
    // Each file counted apart from the parser (src/pipeline/source/tally.ts).
    out.push('## Source files', '');
    out.push('| File | Source | Physical lines | Blank | Header | Items | Rows | Row errors | Accounted for |');
    out.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
    for (const f of report.sourceFiles)
      out.push(
        `| ${f.file} | ${f.source} | ${f.physicalLines} | ${f.blankLines} | ${f.headerLines} | ${f.items ?? ''} | ${f.rowsRead} | ${f.rowErrors} | ${
          f.disagreement === undefined
            ? 'yes'
            : `${f.accepted ? 'accepted (--allow-truncated): ' : 'NO: '}${f.disagreement.replaceAll('|', '\\|')}`
        } |`,
      );
    out.push('');
    // Rows read as written although their quotes are malformed: flagged, so they can be checked.
    for (const f of report.sourceFiles) if (f.relaxedQuotes) out.push(`- ${f.file}: ${f.relaxedQuotes}`);
    if (report.sourceFiles.some((f) => f.relaxedQuotes)) out.push('');
  }

  if (report.rowStories.total > 0) {
    const { total, stories } = report.rowStories;
    out.push('## Rows refused and read again', '');
    out.push(
      `${total} record${total === 1 ? ' was' : 's were'} refused once and read again since${stories.length < total ? ` (the first ${stories.length} listed; all in report.json's rowStories total)` : ''}.`,
      '',
    );
    out.push('| Component | Legacy key | Story |', '| --- | --- | --- |');
    for (const st of stories)
      out.push(`| ${st.component} | ${st.legacyKey.replaceAll('|', '\\|')} | ${storyText(st).replaceAll('|', '\\|')} |`);
    out.push('');
  }

  for (const g of report.groups) {
    out.push(`## ${g.component} / ${g.entityType}${g.balanced ? '' : ' (not balanced)'}`, '');
    out.push('| Step | Records | Change | Explained by | Unaccounted |');
    out.push('| --- | ---: | ---: | --- | ---: |');
    STEPS.forEach((step, i) => {
      const [diff, explained, unaccounted] = gapCells(i === 0 ? undefined : g.gaps[i - 1]);
      out.push(`| ${STEP_LABELS[step]} | ${g.steps[step]} | ${diff} | ${cell(explained)} | ${unaccounted} |`);
    });
    out.push('');
    if (g.removedFromStaging)
      out.push(
        `${g.removedFromStaging} invalid record(s) were removed from staging; the platform should hold ${g.expectedOnPlatform} staged.`,
        '',
      );
  }

  const checks = [
    ...report.groups.flatMap((g) => g.platform.map((c) => checkRow(c, `${g.component} / ${g.entityType}`))),
    ...report.components.flatMap((c) => c.platform.map((p) => checkRow(p, c.component))),
  ];
  out.push('## Platform against ledger', '');
  if (checks.length) {
    out.push('| Scope | Measure | Platform source | Ledger | Platform | Difference | |');
    out.push('| --- | --- | --- | ---: | ---: | ---: | --- |');
    out.push(...checks, '');
  } else {
    out.push('No platform numbers were available (no migration, or the counts job has not run).', '');
  }
  for (const t of report.otherCountTables ?? []) out.push(`Counts table ${cell(t.type)} (shown, not compared): ${otherTableText(t)}`, '');

  const importErrors = report.components.flatMap((c) => c.importErrors);
  if (importErrors.length) {
    out.push('## Import errors', '');
    for (const e of importErrors) out.push(`- ${e.component}: ${e.message}`);
    out.push('');
  }

  out.push('## Top error codes', '');
  if (report.topErrors.length) {
    out.push('| Code | Stage | Records | Example |');
    out.push('| --- | --- | ---: | --- |');
    for (const e of report.topErrors) {
      const ex = e.examples[0];
      const example = ex ? `${ex.file}:${ex.line} \`${ex.field}\`: ${ex.message}` : '';
      out.push(`| ${e.code} | ${e.stage} | ${e.records} | ${cell(example)} |`);
    }
    out.push('');
  } else {
    out.push('None: no record was refused.', '');
  }
  return out.join('\n');
}

/** The report as JSON for other tools: the model as is, with a trailing newline. */
export function renderJson(report: ReconciliationReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
