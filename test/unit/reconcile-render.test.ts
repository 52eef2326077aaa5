import { describe, expect, it } from 'vitest';
import { buildReport } from '../../src/reconcile/report-model.js';
import { renderJson, renderMarkdown } from '../../src/reconcile/render-markdown.js';
import { renderHtml } from '../../src/reconcile/render-html.js';
import { group, input } from '../cases/reconcile/report-input.js';

const report = buildReport(
  input({
    errorCodes: [
      {
        stage: 'validation',
        code: 'UNKNOWN_CODE',
        records: 1,
        examples: [
          {
            referenceId: 'a',
            file: 'samples/crm/persons.csv',
            line: 14,
            field: 'nationalities.0',
            message: 'XX is not a configured country | code',
            excerpt: '1014;J.;<Jansen>;XX',
          },
        ],
      },
    ],
  }),
);

describe('reconciliation report as Markdown', () => {
  it('prints the summary, the chain with its reasons, the platform checks and the top error codes', () => {
    expect(renderMarkdown(report)).toBe(`# Reconciliation report: crm-persons

Run \`run-1\` · migration \`7f1c2a4e-0000-4000-8000-000000000001\` · generated 2026-01-02T03:04:05.000Z · tolerance 0

**Balanced**: every source row is accounted for, and the platform agrees with the ledger.

## Summary

| Source rows | Mapped | Accepted by staging | Valid | Imported | Unaccounted | Removed from staging |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 10 | 7 | 7 | 6 | 6 | 0 | 1 |

Jobs: validation valid · import done · counts done

## Counterparties / person

| Step | Records | Change | Explained by | Unaccounted |
| --- | ---: | ---: | --- | ---: |
| Source rows | 10 |  |  |  |
| Mapped | 7 | −3 | 2 MISSING_REQUIRED_FIELD (mapping); 1 DUPLICATE_LEGACY_KEY (mapping) | 0 |
| Accepted by staging | 7 | 0 | — | 0 |
| Valid | 6 | −1 | 1 UNKNOWN_CODE (validation) | 0 |
| Imported | 6 | 0 | — | 0 |

1 invalid record(s) were removed from staging; the platform should hold 6 staged.

## Platform against ledger

| Scope | Measure | Platform source | Ledger | Platform | Difference | |
| --- | --- | --- | ---: | ---: | ---: | --- |
| Counterparties / person | staged | counts job | 6 | 6 | 0 | ok |
| Counterparties / person | imported | counts job | 6 | 6 | 0 | ok |
| Counterparties | staged | migration | 6 | 6 | 0 | ok |
| Counterparties | imported | migration | 6 | 6 | 0 | ok |

## Top error codes

| Code | Stage | Records | Example |
| --- | --- | ---: | --- |
| UNKNOWN_CODE | validation | 1 | samples/crm/persons.csv:14 \`nationalities.0\`: XX is not a configured country \\| code |
`);
  });

  it('lists the problems first and marks unaccounted records when the chain does not balance', () => {
    const md = renderMarkdown(buildReport(input({ groups: [group({ sourceRowsRead: 12 })] })));
    expect(md).toContain(
      '**NOT BALANCED**:\n\n- Counterparties / person: 2 record(s) between "Source rows" and "Mapped" are unaccounted (tolerance 0)\n',
    );
    expect(md).toContain('| Mapped | 7 | −5 | 2 MISSING_REQUIRED_FIELD (mapping); 1 DUPLICATE_LEGACY_KEY (mapping) | **2** |');
  });
});

describe('reconciliation report as JSON', () => {
  it('is the report model itself, so other tools read the same numbers', () => {
    const json = renderJson(report);
    expect(json.endsWith('}\n')).toBe(true);
    expect(JSON.parse(json)).toEqual(report);
    expect(JSON.parse(json)).toMatchObject({
      schema: 'stagecoach.reconciliation/1',
      balanced: true,
      totals: { sourceRows: 10, mapped: 7, staged: 7, valid: 6, imported: 6, unaccounted: 0, removedFromStaging: 1 },
    });
  });
});

describe('reconciliation report as HTML', () => {
  const html = renderHtml(report);

  it('is one self-contained page: inline style, inline SVG funnel, no script and no external address', () => {
    expect(html.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(html).toMatch(/<style>[^<]+<\/style>/);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);
    const svg = /<svg class="funnel"[^>]*>([\s\S]*?)<\/svg>/.exec(html);
    expect(svg).not.toBeNull();
    // one bar per step of the chain, each labelled with its count
    expect(svg![1]!.match(/<rect class="f-bar/g)).toHaveLength(5);
    expect(svg![1]).toContain('>−3 record(s)</text>');
    expect(svg![1]).toContain('>2 MISSING_REQUIRED_FIELD</text>');
  });

  it('has the chain, platform and error tables a reviewer expects, with the legacy row escaped', () => {
    expect(html).toContain('<div class="status ok">Balanced');
    expect(html.match(/<table>/g)).toHaveLength(3);
    expect(html).toContain(
      '<tr><td>Counterparties</td><td>imported</td><td>migration</td><td class="n">6</td><td class="n">6</td><td class="n">0</td><td class="ok">agrees</td></tr>',
    );
    expect(html).toContain(
      '<span class="code">samples/crm/persons.csv:14</span> <b>nationalities.0</b>: XX is not a configured country | code<div class="excerpt">1014;J.;&lt;Jansen&gt;;XX</div>',
    );
  });

  it('says what does not balance at the top of the page', () => {
    const bad = renderHtml(buildReport(input({ groups: [group({ sourceRowsRead: 12 })] })));
    expect(bad).toContain(
      '<div class="status bad">Not balanced</div>\n<ul class="problems">\n<li>Counterparties / person: 2 record(s) between &quot;Source rows&quot; and &quot;Mapped&quot; are unaccounted (tolerance 0)</li>\n</ul>',
    );
  });
});

describe('the headline before anything is imported', () => {
  // Balanced (every row accounted for), but the platform holds nothing yet: staged, not validated.
  const staged = {
    ...report,
    totals: { ...report.totals, valid: 0, imported: 0 },
    jobs: { validation: 'not-run', import: 'not-run', counts: 'not-run' } as const,
  };
  const { sourceRows, staged: n } = staged.totals;
  const text = `${n} of ${sourceRows} source rows staged, ${sourceRows - n} not staged (refused, see below), 0 imported; validation has not run. Every row is accounted for so far.`;

  it('says "Nothing imported yet" with the counts, never "Balanced"', () => {
    expect(report.balanced).toBe(true);
    const md = renderMarkdown(staged);
    expect(md).toContain(`\n**Nothing imported yet**: ${text}\n`);
    expect(md).not.toContain('Balanced');
    const html = renderHtml(staged);
    expect(html).toContain(`<div class="status pending">Nothing imported yet: ${text}</div>`);
    expect(html).not.toContain('status ok');
  });
});
