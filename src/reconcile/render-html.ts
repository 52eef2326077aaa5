/**
 * The reconciliation report as one self-contained HTML page for the people who sign off: inline
 * CSS, the funnel as inline SVG, the tables a reviewer expects, the top error codes with the
 * legacy rows they came from. No script, font, image or link leaves the file, so it opens the
 * same from a mail attachment, an archive or an air-gapped machine.
 */
import { renderFunnelSvg, type FunnelStep } from './funnel-svg.js';
import { describeExplanation } from './render-markdown.js';
import {
  headline,
  otherTableText,
  STEP_LABELS,
  storyText,
  type Explanation,
  type PlatformCheck,
  type ReconciliationReport,
  type StepName,
} from './report-model.js';
import { verificationHeadline, verificationHtml } from './verify/render-verification.js';

const STEPS: StepName[] = ['sourceRows', 'mapped', 'staged', 'valid', 'imported'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (n: number) => n.toLocaleString('en-US');

const CSS = `
:root { --ink:#1d2733; --muted:#5b6776; --line:#d9dee5; --bg:#f5f7fa; --ok:#1f7a46; --okbg:#e3f4ea; --bad:#b42318; --badbg:#fdecea; --warn:#9a5b00; --bar:#2f6fb3; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.meta { color: var(--muted); margin-bottom: 14px; }
.meta code { background: #e9edf2; padding: 1px 5px; border-radius: 4px; }
.status { display: inline-block; font-weight: 650; padding: 6px 12px; border-radius: 6px; margin: 4px 0 8px; }
.status.ok { color: var(--ok); background: var(--okbg); }
.status.bad { color: var(--bad); background: var(--badbg); }
.status.pending { color: #7a5b00; background: #fff4d6; }
ul.problems { margin: 4px 0 0; color: var(--bad); }
.cards { display: grid; grid-template-columns: repeat(6, 1fr); gap: 10px; margin: 16px 0 6px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card .n { font-size: 22px; font-weight: 650; }
.card .l { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card.bad .n { color: var(--bad); }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; font-weight: 600; font-size: 13px; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
td.bad, span.bad { color: var(--bad); font-weight: 650; }
td.ok { color: var(--ok); }
.reason { display: block; }
.reason .code, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.reason.open { color: var(--warn); }
.stage { color: var(--muted); font-size: 12px; }
.excerpt { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; color: var(--muted); white-space: pre-wrap; word-break: break-all; }
.jobs span { margin-right: 18px; }
svg.funnel { max-width: 100%; height: auto; display: block; }
.f-title { font-weight: 650; font-size: 15px; fill: var(--ink); }
.f-label { font-size: 14px; fill: var(--ink); font-weight: 600; }
.f-bar { fill: var(--bar); }
.f-imported { fill: var(--ok); }
.f-neck { fill: #c9d8ea; }
.f-count { fill: #fff; font-size: 15px; font-weight: 650; }
.f-count-out { fill: var(--ink); font-size: 15px; font-weight: 650; }
.f-drop { fill: var(--ink); font-size: 13px; font-weight: 650; }
.f-lost { fill: var(--warn); font-size: 13px; }
.f-bad { fill: var(--bad); font-weight: 650; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
`;

function reasonsHtml(explained: Explanation[]): string {
  if (!explained.length) return '—';
  return explained
    .map(
      (e) =>
        `<span class="reason${e.accounted ? '' : ' open'}" title="${esc(describeExplanation(e))}">${fmt(e.count)} <span class="code">${esc(e.code)}</span>${e.label !== e.code ? ` ${esc(e.label)}` : ''} <span class="stage">${esc(e.stage)}${e.accounted ? '' : ', unaccounted'}</span></span>`,
    )
    .join('');
}

function checkRow(c: PlatformCheck, scope: string): string {
  if (c.platform === null || c.difference === null)
    return `<tr><td>${esc(scope)}</td><td>${c.measure}</td><td>${c.source}</td><td class="n">${fmt(c.ledger)}</td><td class="n">not reported by the platform</td><td class="n">—</td><td>not checked</td></tr>`;
  const diff = c.difference === 0 ? '0' : c.difference > 0 ? `+${c.difference}` : String(c.difference);
  return `<tr><td>${esc(scope)}</td><td>${c.measure}</td><td>${c.source}</td><td class="n">${fmt(c.ledger)}</td><td class="n">${fmt(c.platform)}</td><td class="n">${diff}</td><td class="${c.ok ? 'ok' : 'bad'}">${c.ok ? 'agrees' : 'MISMATCH'}</td></tr>`;
}

/** Merges the explanations of all groups for one gap, summing counts per stage and code. */
function mergeExplanations(lists: Explanation[][]): Explanation[] {
  const map = new Map<string, Explanation>();
  for (const e of lists.flat()) {
    const key = `${e.stage} ${e.code} ${e.accounted}`;
    const seen = map.get(key);
    if (seen) seen.count += e.count;
    else map.set(key, { ...e });
  }
  return [...map.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

/**
 * Renders the report as a self-contained HTML page.
 * @example writeFileSync('report.html', renderHtml(report));
 */
export function renderHtml(report: ReconciliationReport): string {
  const { run, totals } = report;
  const funnel: FunnelStep[] = STEPS.map((step, i) => {
    if (i === 0) return { step, count: totals[step], lost: [], unaccounted: 0 };
    const gaps = report.groups.map((g) => g.gaps[i - 1]!);
    return {
      step,
      count: totals[step],
      lost: mergeExplanations(gaps.map((g) => g.explained)),
      unaccounted: gaps.reduce((a, g) => a + g.unaccounted, 0),
    };
  });
  const meta = [`Run <code>${esc(run.id)}</code>`];
  if (run.migrationId) meta.push(`migration <code>${esc(run.migrationId)}</code>`);
  meta.push(`generated ${esc(report.generatedAt)}`, `tolerance ${esc(report.tolerance)}`);

  const h: string[] = [];
  h.push(
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
  );
  h.push(`<title>Reconciliation: ${esc(run.pipeline)}</title>`, `<style>${CSS}</style>`, '</head>', '<body>', '<main>');
  h.push(`<h1>Reconciliation report: ${esc(run.pipeline)}</h1>`, `<div class="meta">${meta.join(' · ')}</div>`);
  if (report.privacy) h.push(`<div class="meta privacy">${esc(report.privacy.note)}</div>`);
  const head = headline(report);
  if (head.state !== 'not-balanced') {
    h.push(`<div class="status ${head.state === 'balanced' ? 'ok' : 'pending'}">${esc(head.title)}: ${esc(head.text)}</div>`);
  } else {
    h.push(
      '<div class="status bad">Not balanced</div>',
      '<ul class="problems">',
      ...report.problems.map((p) => `<li>${esc(p)}</li>`),
      '</ul>',
    );
  }
  if (report.verification)
    h.push(`<div class="status ${report.verification.passed ? 'ok' : 'bad'}">${esc(verificationHeadline(report.verification))}</div>`);

  h.push('<div class="cards">');
  for (const step of STEPS)
    h.push(`<div class="card"><div class="n">${fmt(totals[step])}</div><div class="l">${esc(STEP_LABELS[step])}</div></div>`);
  h.push(
    `<div class="card${totals.unaccounted ? ' bad' : ''}"><div class="n">${fmt(totals.unaccounted)}</div><div class="l">Unaccounted</div></div>`,
  );
  h.push('</div>');
  h.push(
    `<div class="jobs meta"><span>Validation: <b>${report.jobs.validation}</b></span><span>Import: <b>${report.jobs.import}</b></span><span>Counts: <b>${report.jobs.counts}</b></span>${totals.removedFromStaging ? `<span>Removed from staging: <b>${fmt(totals.removedFromStaging)}</b></span>` : ''}</div>`,
  );

  if (report.sourceFiles.length > 0) {
    h.push(
      '<h2>Source files</h2>',
      '<table><thead><tr><th>File</th><th>Source</th><th>Physical lines</th><th>Blank</th><th>Header</th><th>Items</th><th>Rows</th><th>Row errors</th><th>Accounted for</th></tr></thead><tbody>',
    );
    for (const f of report.sourceFiles)
      h.push(
        `<tr><td>${esc(f.file)}</td><td>${esc(f.source)}</td><td>${fmt(f.physicalLines)}</td><td>${fmt(f.blankLines)}</td><td>${fmt(f.headerLines)}</td><td>${f.items === undefined ? '' : fmt(f.items)}</td><td>${fmt(f.rowsRead)}</td><td>${fmt(f.rowErrors)}</td><td${f.disagreement !== undefined && !f.accepted ? ' class="bad"' : ''}>${
          f.disagreement === undefined ? 'yes' : esc(`${f.accepted ? 'accepted (--allow-truncated): ' : 'no: '}${f.disagreement}`)
        }</td></tr>`,
      );
    h.push('</tbody></table>');
    const flagged = report.sourceFiles.filter((f) => f.relaxedQuotes);
    if (flagged.length > 0) h.push(`<ul>${flagged.map((f) => `<li>${esc(`${f.file}: ${f.relaxedQuotes}`)}</li>`).join('')}</ul>`);
  }

  if (report.rowStories.total > 0) {
    const { total, stories } = report.rowStories;
    h.push(
      '<h2>Rows refused and read again</h2>',
      `<p>${fmt(total)} record${total === 1 ? ' was' : 's were'} refused once and read again since${stories.length < total ? ` (the first ${fmt(stories.length)} listed)` : ''}.</p>`,
      '<table><thead><tr><th>Component</th><th>Legacy key</th><th>Story</th></tr></thead><tbody>',
    );
    for (const st of stories) h.push(`<tr><td>${esc(st.component)}</td><td>${esc(st.legacyKey)}</td><td>${esc(storyText(st))}</td></tr>`);
    h.push('</tbody></table>');
  }

  if (report.verification) h.push(...verificationHtml(report.verification, esc));
  h.push('<h2>Funnel</h2>', '<div class="panel">', renderFunnelSvg(funnel, { title: 'All components' }), '</div>');

  h.push('<h2>Chain per component and entity type</h2>');
  for (const g of report.groups) {
    h.push(`<h3>${esc(g.component)} / ${esc(g.entityType)}${g.balanced ? '' : ' <span class="bad">(not balanced)</span>'}</h3>`);
    h.push(
      '<table>',
      '<thead><tr><th>Step</th><th class="n">Records</th><th class="n">Change</th><th>Explained by</th><th class="n">Unaccounted</th></tr></thead>',
      '<tbody>',
    );
    STEPS.forEach((step, i) => {
      const gp = i === 0 ? undefined : g.gaps[i - 1];
      const change = !gp ? '' : gp.difference === 0 ? '0' : gp.difference > 0 ? `−${fmt(gp.difference)}` : `+${fmt(-gp.difference)}`;
      const un = !gp ? '' : gp.unaccounted === 0 ? '0' : fmt(gp.unaccounted);
      h.push(
        `<tr><td>${esc(STEP_LABELS[step])}</td><td class="n">${fmt(g.steps[step])}</td><td class="n">${change}</td><td>${gp ? reasonsHtml(gp.explained) : ''}</td><td class="n${gp && !gp.ok ? ' bad' : ''}">${un}</td></tr>`,
      );
    });
    h.push('</tbody>', '</table>');
    if (g.removedFromStaging)
      h.push(
        `<p class="meta">${fmt(g.removedFromStaging)} invalid record(s) were removed from staging; the platform should hold ${fmt(g.expectedOnPlatform)} staged.</p>`,
      );
  }

  h.push('<h2>Platform against ledger</h2>');
  const checks = [
    ...report.groups.flatMap((g) => g.platform.map((c) => checkRow(c, `${g.component} / ${g.entityType}`))),
    ...report.components.flatMap((c) => c.platform.map((p) => checkRow(p, c.component))),
  ];
  if (checks.length) {
    h.push(
      '<table>',
      '<thead><tr><th>Scope</th><th>Measure</th><th>Platform source</th><th class="n">Ledger</th><th class="n">Platform</th><th class="n">Difference</th><th></th></tr></thead>',
      '<tbody>',
      ...checks,
      '</tbody>',
      '</table>',
    );
  } else {
    h.push('<p class="meta">No platform numbers were available (no migration, or the counts job has not run).</p>');
  }
  for (const t of report.otherCountTables ?? [])
    h.push(`<p class="meta">Counts table ${esc(t.type)} (shown, not compared): ${esc(otherTableText(t))}</p>`);

  const importErrors = report.components.flatMap((c) => c.importErrors);
  if (importErrors.length) {
    h.push('<h2>Import errors</h2>', '<table>', '<thead><tr><th>Component</th><th>Message</th></tr></thead>', '<tbody>');
    for (const e of importErrors) h.push(`<tr><td>${esc(e.component)}</td><td class="code">${esc(e.message)}</td></tr>`);
    h.push('</tbody>', '</table>');
  }

  h.push('<h2>Top error codes</h2>');
  if (report.topErrors.length) {
    h.push(
      '<table>',
      '<thead><tr><th>Code</th><th>Stage</th><th class="n">Records</th><th>Examples (legacy file:line)</th></tr></thead>',
      '<tbody>',
    );
    for (const e of report.topErrors) {
      const examples = e.examples
        .map(
          (x) =>
            `<div><span class="code">${esc(x.file)}:${x.line}</span> <b>${esc(x.field || '(record)')}</b>: ${esc(x.message)}${x.excerpt ? `<div class="excerpt">${esc(x.excerpt)}</div>` : ''}</div>`,
        )
        .join('');
      h.push(
        `<tr><td class="code">${esc(e.code)}</td><td>${esc(e.stage)}</td><td class="n">${fmt(e.records)}</td><td>${examples}</td></tr>`,
      );
    }
    h.push('</tbody>', '</table>');
  } else {
    h.push('<p class="meta">None: no record was refused.</p>');
  }
  h.push(`<footer>stagecoach reconciliation report · ${esc(report.schema)}</footer>`, '</main>', '</body>', '</html>', '');
  return h.join('\n');
}
