/**
 * The reconciliation report and the source files' two-way counts: it lists every file, and it
 * does not say "balanced" while any file is not accounted for (unless a cut-off file was
 * explicitly accepted with --allow-truncated, which it still lists).
 */
import { describe, expect, it } from 'vitest';
import { buildReport } from '../../src/reconcile/report-model.js';
import { renderMarkdown } from '../../src/reconcile/render-markdown.js';
import { renderHtml } from '../../src/reconcile/render-html.js';
import { newTally, type SourceTally } from '../../src/pipeline/source/tally.js';
import { input } from '../cases/reconcile/report-input.js';

const tally = (over: Partial<SourceTally>): SourceTally => ({ ...newTally('klanten', 'klanten.csv', 'csv'), ...over });
const whole = tally({ physicalLines: 11, headerLines: 1, rowsRead: 10, linesInRows: 10 });
const swallowing = tally({
  file: 'other.csv',
  physicalLines: 1001,
  headerLines: 1,
  rowsRead: 990,
  rowErrors: 1,
  linesInRows: 1000,
  swallowed: [{ line: 11, from: 12, to: 21 }],
});
const cut = {
  ...newTally('bedrijven', 'bedrijven.json', 'json'),
  items: 100,
  rowsRead: 100,
  truncated: 'the file ends inside element 101 of the array',
};

describe('reconciliation report: source files', () => {
  it('balances when every file is accounted for, and lists them', () => {
    const report = buildReport(input({ sourceFiles: [{ tally: whole, accepted: false }] }));
    expect(report.balanced).toBe(true);
    expect(report.sourceFiles).toEqual([
      {
        source: 'klanten',
        file: 'klanten.csv',
        format: 'csv',
        physicalLines: 11,
        blankLines: 0,
        headerLines: 1,
        rowsRead: 10,
        rowErrors: 0,
      },
    ]);
    expect(renderMarkdown(report)).toContain('| klanten.csv | klanten | 11 | 0 | 1 |  | 10 | 0 | yes |');
  });

  it('does not balance while a file disagrees or was cut off, and names every one', () => {
    const report = buildReport(
      input({
        sourceFiles: [
          { tally: whole, accepted: false },
          { tally: swallowing, accepted: false },
          { tally: cut, accepted: false },
        ],
      }),
    );
    expect(report.balanced).toBe(false);
    expect(report.problems).toEqual([
      'source file not accounted for: other.csv: 10 lines read as part of another row: 12–21 (in the row at line 11)',
      'source file not accounted for: bedrijven.json: the file ends inside element 101 of the array',
    ]);
    const md = renderMarkdown(report);
    expect(md).toContain('**NOT BALANCED**');
    expect(md).toContain(
      '| bedrijven.json | bedrijven | 0 | 0 | 0 | 100 | 100 | 0 | NO: bedrijven.json: the file ends inside element 101 of the array |',
    );
    expect(renderHtml(report)).toContain('<td class="bad">no: bedrijven.json: the file ends inside element 101 of the array</td>');
  });

  it('an accepted cut-off file is listed as accepted and does not block the balance; an accepted run does not excuse a count that disagrees', () => {
    const accepted = buildReport(input({ sourceFiles: [{ tally: cut, accepted: true }] }));
    expect(accepted.balanced).toBe(true);
    expect(accepted.sourceFiles[0]).toMatchObject({
      accepted: true,
      disagreement: 'bedrijven.json: the file ends inside element 101 of the array',
    });
    expect(renderMarkdown(accepted)).toContain(
      'accepted (--allow-truncated): bedrijven.json: the file ends inside element 101 of the array',
    );
    const stillWrong = buildReport(input({ sourceFiles: [{ tally: swallowing, accepted: true }] }));
    expect(stillWrong.balanced).toBe(false);
  });

  it('flags the rows read as written under csv.quotes: relaxed, by line and column, in every rendering', () => {
    const relaxed = tally({
      ...whole,
      relaxedQuotes: {
        count: 2,
        listed: [
          { line: 2, column: 'naam', shape: 'text-after-closing-quote' },
          { line: 4, column: 'plaats', shape: 'quote-in-unquoted-field' },
        ],
      },
    });
    const report = buildReport(input({ sourceFiles: [{ tally: relaxed, accepted: false }] }));
    const text = '2 rows with malformed quotes read as written (csv.quotes: relaxed): lines 2 (naam), 4 (plaats)';
    expect(report.sourceFiles[0]!.relaxedQuotes).toBe(text);
    expect(renderMarkdown(report)).toContain(`- klanten.csv: ${text}`);
    expect(renderHtml(report)).toContain(`<li>klanten.csv: ${text}</li>`);
  });
});
