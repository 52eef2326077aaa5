/**
 * Splitting is a member of the format contract: a format that is not CSV (a toy of `key|name`
 * lines, with no `csv:` options at all) brings its own splitter, and the parallel reader's view
 * of a source (splittable.ts) and a read from a record's start (what a resumed run does) go
 * through it, never through CSV's code. A format without a splitter is not split.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineFormat, type RangeOutcome, type RecordChunk, type SourceStart } from '../../src/pipeline/source/format.js';
import { readSourceBatches, SOURCE_FORMATS, type SourceFile } from '../../src/pipeline/source/index.js';
import { splittableFor } from '../../src/pipeline/parallel/splittable.js';
import type { PreparedSource } from '../../src/pipeline/prepare-pipeline.js';
import type { SourceRow, SourceRowError } from '../../src/pipeline/types.js';

/** Each line of `text` with its first byte and line number. */
function lines(text: string): { at: number; line: number; text: string }[] {
  const out: { at: number; line: number; text: string }[] = [];
  let at = 0;
  text.split('\n').forEach((t, i) => {
    if (t !== '') out.push({ at, line: i + 1, text: t });
    at += Buffer.byteLength(t) + 1;
  });
  return out;
}

/** The toy format: one `key|name` record a line, read from `from` up to its `end`. */
const toyFormat = defineFormat({
  summary: 'toy (key|name lines)',
  options: null,
  async *read(source, file, options) {
    const text = readFileSync(file.path, 'utf8');
    const from = options.from?.byteOffset ?? 0;
    const end = options.from?.end ?? Buffer.byteLength(text);
    const rows: SourceRow[] = lines(text)
      .filter((l) => l.at >= from && l.at < end)
      .map((l) => {
        const [key, name] = l.text.split('|');
        return {
          source: source.name,
          values: { key, name },
          provenance: { file: file.file, line: l.line, byteOffset: l.at, hash: l.text },
        };
      });
    const last = rows.at(-1)?.provenance;
    if (options.outcome && last)
      Object.assign(options.outcome, {
        endLine: last.line,
        endByte: last.byteOffset + Buffer.byteLength(String(last.hash)) + 1,
        endedAtRecord: true,
      });
    yield rows;
  },
  splitter: {
    // Cuts at the first line start at or after every `chunkBytes`.
    async split(_source, file, chunkBytes) {
      const starts = lines(readFileSync(file.path, 'utf8'));
      const cuts: RecordChunk[] = [];
      for (const l of starts) if (cuts.length === 0 || l.at >= cuts.at(-1)!.start + chunkBytes) cuts.push({ start: l.at, line: l.line });
      cuts.forEach((c, i) => {
        if (i + 1 < cuts.length) c.end = cuts[i + 1]!.start;
      });
      return {
        chunks: (async function* () {
          yield* cuts;
        })(),
        columns: ['key', 'name'],
        range: (chunk, columns): SourceStart => ({
          byteOffset: chunk.start,
          line: chunk.line,
          ...(chunk.end !== undefined ? { end: chunk.end } : {}),
          ...(columns ? { columns } : {}),
        }),
      };
    },
    startAt: async (_source, _file, at) => ({ byteOffset: at.byteOffset, line: at.line }),
  },
  cellDelimiter: () => '|',
  tallies: false,
  rowAt: async () => ({ columns: [], values: {} }),
  header: async () => ['key', 'name'],
  missingColumns: null,
  corrections: 'csv',
  scanKeys: null,
});

const registry = SOURCE_FORMATS as Record<string, unknown>;
let dir: string;
let file: SourceFile;
const source = { name: 'people', format: 'toy', encoding: 'utf-8', path: 'people.toy', mapping: 'm.yaml' };
const prepared = { def: source, mapping: { columns: new Set(['key', 'name']) }, files: [] } as unknown as PreparedSource;

beforeAll(() => {
  registry.toy = toyFormat;
  dir = mkdtempSync(join(tmpdir(), 'format-splitter-'));
  const text = Array.from({ length: 40 }, (_, i) => `${1000 + i}|person ${i}`).join('\n');
  writeFileSync(join(dir, 'people.toy'), `${text}\n`);
  file = { path: join(dir, 'people.toy'), file: 'people.toy' };
});
afterAll(() => {
  delete registry.toy;
  rmSync(dir, { recursive: true, force: true });
});

async function all(rows: AsyncGenerator<(SourceRow | SourceRowError)[]>): Promise<(SourceRow | SourceRowError)[]> {
  const out: (SourceRow | SourceRowError)[] = [];
  for await (const batch of rows) out.push(...batch);
  return out;
}

describe('the format contract’s splitter', () => {
  it('cuts and reads a file of a format that is not CSV through its own splitter: the ranges add up to the file', async () => {
    const splittable = splittableFor(prepared);
    expect(splittable).toBeDefined();
    const split = (await splittable!.split(file, 100, undefined))!;
    const whole = await all(readSourceBatches(source as never, file));
    const byRanges: (SourceRow | SourceRowError)[] = [];
    let previous: RangeOutcome | undefined;
    let ranges = 0;
    for await (const chunk of split.chunks) {
      const range = split.range(chunk, split.columns);
      // each range starts where the one before it ended, on the next line
      if (previous) expect([range.byteOffset, range.line]).toEqual([previous.endByte, previous.endLine + 1]);
      const outcome: RangeOutcome = { endLine: 0, endByte: 0, endedAtRecord: false };
      byRanges.push(...(await all(splittable!.read(file, range, outcome, true))));
      expect(outcome.endedAtRecord).toBe(true);
      previous = outcome;
      ranges++;
    }
    expect(ranges).toBeGreaterThan(3);
    expect(byRanges).toEqual(whole);
    expect(whole).toHaveLength(40);
  });

  it('starts a read at a record (resume) where the format’s splitter says', async () => {
    const whole = await all(readSourceBatches(source as never, file));
    const at = (whole[25] as SourceRow).provenance;
    const start = await toyFormat.splitter!.startAt(source as never, file, at);
    const rows = await all(readSourceBatches(source as never, file, { from: start! }));
    expect(rows).toEqual(whole.slice(25));
  });

  it('does not split a source whose format has no splitter', () => {
    expect(splittableFor({ ...prepared, def: { ...source, format: 'jsonl' } } as unknown as PreparedSource)).toBeUndefined();
  });
});
