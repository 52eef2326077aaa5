/**
 * Hostile input, one file at a time through the real CLI (issue 41): each file's peak RSS, wall
 * time, exit code and the first line it printed on stderr. Every one must end within its bound
 * (120 s) at no more than 300 MB, with exit 1 or 2 and the file named — or exit 0 when the file
 * is readable and its bad rows are refused one by one. The workbook cases are the workbook
 * reader's own bench; these are the text formats, the declarations and the layouts.
 * Quick: the big files at a tenth of their size.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mb, samplePeakRss, type BenchOptions, type BenchRow } from './harness.js';

export const title = 'hostile input: peak RSS, time and outcome per file';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');
const MAPPING = join(import.meta.dirname, '..', '..', 'test', 'cases', 'hostile', 'hostile-mapping.yaml');
const BOUND_MS = 120_000;
const RSS_LIMIT_MB = 300;
const NAMESPACE = '6b1f0a0e-3c1d-4f55-8a7e-2f2b8f0c9d11';

interface HostileCase {
  name: string;
  /** Writes the case's files into `dir`; returns the CLI arguments. */
  make(dir: string, scale: number): string[];
}

function pipeline(dir: string, file: string, format: string, extra = '', mapping = 'hostile-mapping.yaml'): string[] {
  const text = [
    'name: hostile',
    'sources:',
    `  - { name: s, format: ${format}, path: ${file}, mapping: ${mapping}${extra} }`,
    'target:',
    `  referenceNamespace: ${NAMESPACE}`,
    '',
  ].join('\n');
  writeFileSync(join(dir, `${file}.pipeline.yaml`), text);
  return ['plan', `${file}.pipeline.yaml`];
}

const HEADER = 'nr,initials,surname\n';
const CASES: HostileCase[] = [
  {
    name: '52 MB unclosed-quote CSV row',
    make: (dir, scale) => {
      writeFileSync(join(dir, 'quote.csv'), `${HEADER}1,A.,Visser\n2,B.,"${'x'.repeat(52_000_000 * scale)}\n`);
      return pipeline(dir, 'quote.csv', 'csv');
    },
  },
  {
    name: '400,000 rows of malformed quotes (strict)',
    make: (dir, scale) => {
      const rows = Array.from({ length: 400_000 * scale }, (_, i) => `${i},"A"x,Sn"${i}\n`).join('');
      writeFileSync(join(dir, 'quotes.csv'), `${HEADER}${rows}`);
      return pipeline(dir, 'quotes.csv', 'csv');
    },
  },
  {
    name: 'CR CR LF CSV, 400,000 rows',
    make: (dir, scale) => {
      const rows = Array.from({ length: 400_000 * scale }, (_, i) => `${i},A.,Visser\r\r\n`).join('');
      writeFileSync(join(dir, 'crcrlf.csv'), `nr,initials,surname\r\r\n${rows}`);
      return pipeline(dir, 'crcrlf.csv', 'csv');
    },
  },
  {
    name: 'JSON Lines, 300,000 lines with a duplicated key',
    make: (dir, scale) => {
      const rows = Array.from({ length: 300_000 * scale }, (_, i) => `{"nr":"${i}","nr":"${i + 1}","initials":"A.","surname":"V"}\n`).join(
        '',
      );
      writeFileSync(join(dir, 'dup.jsonl'), rows);
      return pipeline(dir, 'dup.jsonl', 'jsonl');
    },
  },
  {
    name: 'JSON Lines, one 100 MB line',
    make: (dir, scale) => {
      writeFileSync(
        join(dir, 'long.jsonl'),
        `{"nr":"1","initials":"A.","surname":"${'v'.repeat(100_000_000 * scale)}"}\n{"nr":"2","initials":"B.","surname":"K"}\n`,
      );
      return pipeline(dir, 'long.jsonl', 'jsonl');
    },
  },
  {
    name: 'JSON array nested 1,000,000 deep',
    make: (dir, scale) => {
      const n = 1_000_000 * scale;
      writeFileSync(join(dir, 'deep.json'), `[{"nr":"1","initials":"A.","surname":"V"},${'['.repeat(n)}${']'.repeat(n)}]\n`);
      return pipeline(dir, 'deep.json', 'json');
    },
  },
  {
    name: 'YAML alias bomb (pipeline)',
    make: (dir) => {
      const levels = 'abcdefghi'.split('');
      const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      levels.forEach((l, i) =>
        lines.push(
          `${l}: &${l} [${Array(9)
            .fill(`*${i === 0 ? 'a0' : levels[i - 1]}`)
            .join(',')}]`,
        ),
      );
      lines.push('name: *i');
      writeFileSync(join(dir, 'bomb.yaml'), `${lines.join('\n')}\n`);
      return ['plan', 'bomb.yaml'];
    },
  },
  {
    name: 'mapping path naming /etc/passwd',
    make: (dir) => {
      writeFileSync(join(dir, 'k.csv'), `${HEADER}1,A.,Visser\n`);
      return pipeline(dir, 'k.csv', 'csv', '', '/etc/passwd');
    },
  },
  {
    name: 'init --layout with PIC X(999999999999999)',
    make: (dir) => {
      writeFileSync(join(dir, 'k.cpy'), '       01 K.\n           05 NR PIC 9(6).\n           05 NAAM PIC X(999999999999999).\n');
      writeFileSync(join(dir, 'k.txt'), '000001Visser\n');
      return ['init', 'k.txt', '--layout', 'k.cpy', '--out', 'gen', '--no-plan'];
    },
  },
];

/** The CLI on one case: peak RSS, time, exit code and its first stderr line; killed past the bound. */
function runCase(dir: string, args: string[]): Promise<{ ms: number; code: number | null; rss: number; said: string }> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    const rss = samplePeakRss(child.pid!, 20);
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      const said = err.split('\n').find((l) => l.startsWith('stagecoach:')) ?? err.split('\n')[0] ?? '';
      done({ ms: performance.now() - started, code, rss: rss.stop(), said });
    });
  });
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const scale = options.quick ? 0.1 : 1;
  const rows: BenchRow[] = [];
  for (const [i, c] of CASES.entries()) {
    const dir = join(options.workDir, `case-${i}`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(MAPPING, join(dir, 'hostile-mapping.yaml'));
    const args = c.make(dir, scale);
    const r = await runCase(dir, args);
    const peak = mb(r.rss);
    const verdict = r.code === null ? 'KILLED (no end within the bound)' : peak > RSS_LIMIT_MB ? `OVER ${RSS_LIMIT_MB} MB` : 'ok';
    const note = `exit ${r.code ?? 'killed'}, ${Math.round(r.ms)} ms, ${verdict}: ${r.said.slice(0, 160)}`;
    rows.push({ benchmark: title, metric: `${c.name}: peak RSS`, value: peak, unit: 'MB', note });
  }
  return rows;
}
