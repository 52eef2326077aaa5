/**
 * Hostile and broken legacy exports (test/cases/hostile/, README there), read by the real CLI:
 * `stagecoach plan --json` names every refused row by file and line and counts every row once,
 * the files that cannot be read as a whole stop the plan with file:line and the reason, and
 * `stagecoach migrate` stages what can be staged and ends with a reconciliation report that
 * balances: source rows = mapped + rejected, nothing unaccounted. The big and binary cases are
 * made here at run time; the plan runs with a 64 MB heap, so a reader that holds a 10 MB field or
 * a 20 MB line several times over fails the test instead of passing slowly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { runCli, type CliResult } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';
import type { PlanSummary } from '../../src/pipeline/checks/plan-summary.js';
import type { ReconciliationReport } from '../../src/reconcile/report-model.js';

const CORPUS = join(import.meta.dirname, '..', 'cases', 'hostile');
const NAMESPACE = '6b1f0a0e-3c1d-4f55-8a7e-2f2b8f0c9d11';
const SMALL_HEAP = { NODE_OPTIONS: '--max-old-space-size=64' };
const BOUND_MS = 60_000;

interface Source {
  name: string;
  format: 'csv' | 'json' | 'jsonl';
  path: string;
  encoding?: string;
}

/** Every file that the plan reads row by row, with what it must make of it. */
const ROW_CASES: Array<Source & { rows: number; mapped: number; refused: Array<[line: number, code: string, message: string]> }> = [
  {
    name: 'cp1252_as_utf8',
    format: 'csv',
    path: 'windows-1252-declared-utf8.csv',
    encoding: 'utf-8',
    rows: 3,
    mapped: 1,
    refused: [
      [
        2,
        'SOURCE_ROW_INVALID',
        'windows-1252-declared-utf8.csv:2: column "surname" holds undecodable bytes (U+FFFD), expected text in utf-8; the file is not valid utf-8: declare its encoding, for example encoding: windows-1252',
      ],
      [
        4,
        'SOURCE_ROW_INVALID',
        'windows-1252-declared-utf8.csv:4: column "surname" holds undecodable bytes (U+FFFD), expected text in utf-8; the file is not valid utf-8: declare its encoding, for example encoding: windows-1252',
      ],
    ],
  },
  {
    name: 'invalid_utf8',
    format: 'csv',
    path: 'invalid-utf8-sequences.csv',
    rows: 4,
    mapped: 1,
    refused: [2, 3, 4].map(
      (line) =>
        [
          line,
          'SOURCE_ROW_INVALID',
          `invalid-utf8-sequences.csv:${line}: column "surname" holds undecodable bytes (U+FFFD), expected text in utf-8; the file is not valid utf-8: declare its encoding, for example encoding: windows-1252`,
        ] as [number, string, string],
    ),
  },
  { name: 'utf16_declared', format: 'csv', path: 'utf16le-without-bom.csv', encoding: 'utf-16le', rows: 1, mapped: 1, refused: [] },
  {
    name: 'quotes',
    format: 'csv',
    path: 'unbalanced-quotes.csv',
    rows: 4,
    mapped: 1,
    refused: [
      [
        2,
        'SOURCE_ROW_INVALID',
        'unbalanced-quotes.csv:2: column "surname" has malformed quotes: a quote inside a value that does not start with one; expected a value in quotes with every quote inside doubled, or no quote; csv.quotes: relaxed reads such rows as written',
      ],
      [
        3,
        'SOURCE_ROW_INVALID',
        'unbalanced-quotes.csv:3: column "surname" has malformed quotes: text follows its closing quote (expected the delimiter or the line end right after it); expected a value in quotes with every quote inside doubled, or no quote; csv.quotes: relaxed reads such rows as written',
      ],
      [
        5,
        'SOURCE_ROW_INVALID',
        'unbalanced-quotes.csv:5–6: a quote opened on line 5 is not closed before the file ends; 1 following row was read as part of this one',
      ],
    ],
  },
  {
    name: 'columns',
    format: 'csv',
    path: 'wrong-column-counts.csv',
    rows: 3,
    mapped: 1,
    refused: [
      [2, 'SOURCE_ROW_INVALID', 'wrong-column-counts.csv:2: wrong number of columns, expected 3 (as the header), got 4'],
      [3, 'SOURCE_ROW_INVALID', 'wrong-column-counts.csv:3: wrong number of columns, expected 3 (as the header), got 2'],
    ],
  },
  {
    name: 'truncated',
    format: 'json',
    path: 'truncated-array.json',
    rows: 3,
    mapped: 2,
    refused: [
      [
        4,
        'SOURCE_READ_FAILED',
        'truncated-array.json:4: the file ends inside element 3 of the array, which starts on line 4, expected the element and the array to close; 2 complete elements read, the export looks cut off',
      ],
    ],
  },
  {
    name: 'garbage',
    format: 'jsonl',
    path: 'garbage-lines.jsonl',
    rows: 6,
    mapped: 2,
    refused: [
      [2, 'SOURCE_ROW_INVALID', `garbage-lines.jsonl:2: not a JSON object: Unexpected token 'h', "this is not json" is not valid JSON`],
      [4, 'SOURCE_ROW_INVALID', 'garbage-lines.jsonl:4: expected a JSON object on the line, got [6004]'],
      [
        5,
        'SOURCE_ROW_INVALID',
        `garbage-lines.jsonl:5: not a JSON object: Unexpected token '\u0000', "\u0000\u0001\u0002" is not valid JSON`,
      ],
      [
        7,
        'SOURCE_READ_FAILED',
        'garbage-lines.jsonl:7: the file ends inside the JSON object on its last line, expected a complete object and a line feed; the export looks cut off',
      ],
    ],
  },
  {
    name: 'empty_csv',
    format: 'csv',
    path: 'empty-0-bytes.csv',
    rows: 1,
    mapped: 0,
    refused: [[1, 'SOURCE_READ_FAILED', 'empty-0-bytes.csv:1: the file is empty, expected a header line naming the columns']],
  },
  { name: 'header_only', format: 'csv', path: 'header-only.csv', rows: 0, mapped: 0, refused: [] },
  {
    name: 'empty_jsonl',
    format: 'jsonl',
    path: 'empty-0-bytes.jsonl',
    rows: 1,
    mapped: 0,
    refused: [
      [
        1,
        'SOURCE_READ_FAILED',
        'empty-0-bytes.jsonl:1: the file is empty, expected one JSON object a line; an empty export is refused unless truncated files are allowed (--allow-truncated)',
      ],
    ],
  },
  { name: 'bom_json', format: 'json', path: 'utf8-bom.json', rows: 2, mapped: 2, refused: [] },
  {
    name: 'bom_middle_csv',
    format: 'csv',
    path: 'bom-in-middle.csv',
    rows: 3,
    mapped: 2,
    refused: [
      [
        3,
        'SOURCE_ROW_INVALID',
        'bom-in-middle.csv:3: column "nr" holds a byte-order mark (U+FEFF), expected text in utf-8; two exports glued together? remove the mark',
      ],
    ],
  },
  {
    name: 'bom_middle_jsonl',
    format: 'jsonl',
    path: 'bom-in-middle.jsonl',
    rows: 3,
    mapped: 2,
    refused: [
      [
        2,
        'SOURCE_ROW_INVALID',
        `bom-in-middle.jsonl:2: not a JSON object: Unexpected token '\ufeff', "\ufeff{"nr": "8"... is not valid JSON`,
      ],
    ],
  },
  {
    name: 'duplicates',
    format: 'json',
    path: 'duplicate-keys-minified.json',
    rows: 3,
    mapped: 1,
    refused: [
      [1, 'DUPLICATE_LEGACY_KEY', 'nr: duplicate legacy key hostile 9001, first seen at duplicate-keys-minified.json:1'],
      [
        2,
        'SOURCE_ROW_INVALID',
        'duplicate-keys-minified.json:2: key "surname" appears more than once in one object, expected each key once (which value is meant?)',
      ],
    ],
  },
  {
    name: 'nul',
    format: 'csv',
    path: 'nul-bytes.csv',
    rows: 2,
    mapped: 1,
    refused: [
      [
        2,
        'SOURCE_ROW_INVALID',
        'nul-bytes.csv:2: column "surname" holds a NUL byte, expected text in utf-8; binary data, or a UTF-16 file without a byte-order mark: declare encoding: utf-16le',
      ],
    ],
  },
  // made at run time (see beforeAll)
  {
    name: 'big_field',
    format: 'csv',
    path: 'big-field.csv',
    rows: 2,
    mapped: 1,
    refused: [[2, 'INVALID_FIELD_VALUE', 'surname: 10485760 characters, expected at most 65536 in column surname']],
  },
  {
    name: 'long_line',
    format: 'jsonl',
    path: 'long-line.jsonl',
    rows: 3,
    mapped: 2,
    refused: [
      [
        2,
        'SOURCE_ROW_INVALID',
        'long-line.jsonl:2: the line is longer than 16777216 characters (STAGECOACH_JSON_MAX_LINE_CHARS), expected one JSON object a line',
      ],
    ],
  },
  {
    name: 'deep',
    format: 'json',
    path: 'deeply-nested.json',
    rows: 3,
    mapped: 2,
    refused: [
      [
        2,
        'SOURCE_ROW_INVALID',
        'deeply-nested.json:2: the element is nested deeper than 100 levels (STAGECOACH_JSON_MAX_DEPTH), expected a flat record',
      ],
    ],
  },
  {
    name: 'random_jsonl',
    format: 'jsonl',
    path: 'random-bytes.jsonl',
    rows: -1,
    mapped: 0,
    refused: [],
  },
];

/** Files that cannot be read at all: the plan stops (exit 2) naming file, line and why. */
const STOP_CASES: Array<Source & { error: string | RegExp }> = [
  {
    name: 'utf16_as_utf8',
    format: 'csv',
    path: 'utf16le-without-bom.csv',
    encoding: 'utf-8',
    error:
      /^utf16le-without-bom\.csv looks like UTF-16LE, declared utf-8: a NUL byte is every other byte of its first \d+ bytes; declare encoding: utf-16le \(or auto\)$/,
  },
  {
    name: 'png',
    format: 'csv',
    path: 'png-renamed.csv',
    error:
      /^png-renamed\.csv:1: the header is not text in utf-8: it holds (undecodable bytes \(U\+FFFD\)|a NUL byte); .*expected a header naming the columns "nr", "initials", "surname"$/,
  },
  {
    name: 'random_csv',
    format: 'csv',
    path: 'random-bytes.csv',
    error:
      /^random-bytes\.csv:\d+: the header is not text in utf-8: it holds (undecodable bytes \(U\+FFFD\)|a NUL byte); .*expected a header naming the columns "nr", "initials", "surname"$/,
  },
  {
    name: 'dup_header',
    format: 'csv',
    path: 'duplicate-header.csv',
    error:
      'duplicate-header.csv:1: the header names column "surname" more than once and the mapping reads it; rename the columns with csv.columns',
  },
];

let dir: string;
let svc: TestService;

function pipelineYaml(name: string, sources: Source[]): string {
  const lines = ['language: 2', `name: ${name}`, 'component: Counterparties', 'sources:'];
  for (const s of sources) {
    lines.push(`  - name: ${s.name}`, `    format: ${s.format}`, `    path: ${s.path}`, `    mapping: hostile-mapping.yaml`);
    if (s.encoding) lines.push(`    encoding: ${s.encoding}`);
  }
  lines.push(
    'batching: { records: 10, bytes: 65536 }',
    'concurrency: { inFlight: 2 }',
    'target:',
    '  migration: new',
    `  referenceNamespace: ${NAMESPACE}`,
  );
  return `${lines.join('\n')}\n`;
}

function writePipeline(name: string, sources: Source[]): string {
  const file = `${name}.yaml`;
  writeFileSync(join(dir, file), pipelineYaml(name, sources));
  return file;
}

/** The CLI in the corpus folder, bounded in time: a hang is a failure, not a stuck suite. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const res = await runCli(args, { cwd: dir, env, timeoutMs: BOUND_MS });
  expect(res.signal, `${args.join(' ')} was killed (hang or crash): ${res.stderr.slice(-500)}`).toBeNull();
  return res;
}

beforeAll(async () => {
  dir = tempDir('stagecoach-hostile-');
  for (const f of readdirSync(CORPUS)) if (f !== 'README.md') copyFileSync(join(CORPUS, f), join(dir, f));
  // 10 MB in one field: a quoted field full of line breaks (the costly kind for transforms)
  writeFileSync(join(dir, 'big-field.csv'), `nr,initials,surname\n10001,A.,"${'abcdefghi\n'.repeat(1024 * 1024)}"\n10002,B.,Klein\n`);
  // a 20 MB line between two good ones
  writeFileSync(
    join(dir, 'long-line.jsonl'),
    `{"nr":"10101","initials":"A.","surname":"Voor"}\n{"nr":"10102","initials":"B.","surname":"${'x'.repeat(20 * 1024 * 1024)}"}\n{"nr":"10103","initials":"C.","surname":"Na"}\n`,
  );
  // an element nested 100,000 levels deep between two good ones
  writeFileSync(
    join(dir, 'deeply-nested.json'),
    `[{"nr":"10201","initials":"A.","surname":"Voor"},\n{"nr":"10202","initials":"B.","surname":"Diep","x":${'['.repeat(100_000)}${']'.repeat(100_000)}},\n{"nr":"10203","initials":"C.","surname":"Na"}]\n`,
  );
  // binary junk: random bytes, and the first bytes of a PNG under a .csv name
  const junk = randomBytes(256 * 1024);
  writeFileSync(join(dir, 'random-bytes.csv'), junk);
  writeFileSync(join(dir, 'random-bytes.jsonl'), junk);
  writeFileSync(
    join(dir, 'png-renamed.csv'),
    Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'), randomBytes(2048)]),
  );
  svc = await startTestService();
}, 60_000);

afterAll(async () => {
  await svc?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('hostile legacy exports', () => {
  let plan: PlanSummary;

  it('are each read to the end by plan within a 64 MB heap, every refused row named by file, line and reason, every row counted once', async () => {
    const file = writePipeline('hostile', ROW_CASES);
    // --reveal: the exact messages are what is checked here; masking is privacy-no-values.test.ts's.
    const res = await cli(['plan', file, '--json', '--samples', '20', '--reveal'], SMALL_HEAP);
    expect(res.code, res.stderr).toBe(0);
    plan = JSON.parse(res.stdout) as PlanSummary;
    const newlines = readFileSync(join(dir, 'random-bytes.jsonl')).reduce((n, b) => n + (b === 0x0a ? 1 : 0), 0);
    for (const c of ROW_CASES) {
      const seen = plan.bySource[c.name] ?? { rowsRead: 0, mapped: 0, rejected: 0 };
      if (c.name === 'random_jsonl') {
        // one row per non-blank line of junk, none of them an object: all refused, none lost
        expect(seen.mapped).toBe(0);
        expect(seen.rejected).toBe(seen.rowsRead);
        expect(seen.rowsRead).toBeGreaterThan(newlines * 0.9);
        expect(seen.rowsRead).toBeLessThanOrEqual(newlines + 1);
        continue;
      }
      expect([c.name, seen]).toEqual([c.name, { rowsRead: c.rows, mapped: c.mapped, rejected: c.rows - c.mapped }]);
      const samples = plan.samples.filter((s) => s.source === c.name).map((s) => [s.line, s.code, s.message]);
      expect([c.name, samples]).toEqual([c.name, c.refused]);
      for (const s of plan.samples.filter((x) => x.source === c.name)) expect(s.file).toBe(c.path);
    }
    expect(plan.rowsRead).toBe(plan.mapped + plan.rejected);
    // Counted apart from the parser: the files cut off or empty, and nothing else (random bytes
    // end inside a line unless the last byte happens to be a line feed).
    expect(plan.disagreements.filter((d) => !d.startsWith('random-bytes.jsonl'))).toEqual([
      'unbalanced-quotes.csv: the file ends inside a quoted value opened on line 5',
      'truncated-array.json: the file ends inside element 3 of the array (it starts on line 4), after 2 complete elements: the export looks cut off',
      'garbage-lines.jsonl: the file ends inside the JSON object on its last line (7): the export looks cut off',
      'empty-0-bytes.csv: the file is empty: not even a header',
      'header-only.csv: the file holds a header but no rows',
      'empty-0-bytes.jsonl: the file is empty: no rows',
    ]);
    for (const d of plan.disagreements.filter((x) => x.startsWith('random-bytes.jsonl')))
      expect(d).toMatch(/^random-bytes\.jsonl: the file ends inside the JSON object on its last line \(\d+\): the export looks cut off$/);
  });

  it.each(STOP_CASES.map((c) => [c.path, c] as const))('stops the plan on %s with exit 2 naming file, line and why', async (_path, c) => {
    const file = writePipeline(`stop-${c.name}`, [c]);
    const res = await cli(['plan', file, '--json'], SMALL_HEAP);
    expect(res.code).toBe(2);
    const message = res.stderr.trim().replace(/^stagecoach: /, '');
    if (typeof c.error === 'string') expect(message).toBe(c.error);
    else expect(message).toMatch(c.error);
  });

  it('are migrated as far as they can be: the readable rows staged, validated and imported, and the report balances with every source row accounted for', async () => {
    expect(plan, 'the plan test runs first').toBeDefined();
    const file = writePipeline('hostile-migrate', ROW_CASES);
    const out = join(dir, 'report');
    // Files cut off or empty (an unclosed quote at the end, a cut array, empty files, a header
    // alone): accepted here, as far as they can be read.
    const res = await cli(
      [
        'migrate',
        file,
        '--drop-invalid',
        '--allow-truncated',
        '--expect-refused',
        '100%',
        '--ledger',
        join(dir, 'ledger.db'),
        '--out',
        out,
        '--base-url',
        svc.url,
      ],
      {
        NODE_OPTIONS: '--max-old-space-size=128',
      },
    );
    expect(res.code, res.stdout.slice(-2000) + res.stderr.slice(-2000)).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ReconciliationReport;
    expect(report.problems).toEqual([]);
    expect(report.balanced).toBe(true);
    expect(report.totals.unaccounted).toBe(0);
    // the same rows as the plan, the same refusals by code, all the mapped ones imported
    expect(report.totals.sourceRows).toBe(plan.rowsRead);
    expect(report.totals.mapped).toBe(plan.mapped);
    expect(report.totals.imported).toBe(plan.mapped);
    const rejected: Record<string, number> = {};
    for (const g of report.groups) for (const e of g.gaps[0]!.explained) rejected[e.code] = (rejected[e.code] ?? 0) + e.count;
    expect(rejected).toEqual(plan.rejectedByReason);
    const markdown = readFileSync(join(out, 'report.md'), 'utf8');
    expect(markdown).toContain('**Balanced**');
  });
});
