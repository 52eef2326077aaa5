/**
 * The one loop every byte- or text-fed source core is driven by (feed-core.ts) and the file side
 * of the byte-fed ones (file-chunks.ts), now that CSV is fed by them too: batches per chunk, the
 * callback mode that stops reading as soon as the caller has what it wants, failures turned into
 * rows by the core, byte ranges, UTF-16BE swapped across odd reads, and an abort that stops the
 * read as ABORTED naming the file. The CSV cases read real files through `readCsvBatches`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StagecoachError } from '../../src/contract/errors.js';
import { readCsvBatches } from '../../src/pipeline/source/csv/index.js';
import { detectEncoding } from '../../src/pipeline/source/encoding.js';
import { feedCore, type SourceCore, type SourceItem } from '../../src/pipeline/source/feed-core.js';
import { fileChunks } from '../../src/pipeline/source/file-chunks.js';
import type { SourceRow } from '../../src/pipeline/types.js';
import { tempDir } from '../support/service.js';

const row = (text: string): SourceRow => ({ source: 's', values: { text }, provenance: { file: 'f', line: 1, byteOffset: 0, hash: '' } });

/** A core that completes a row at every `;` it is pushed, and says what it was told. */
class SemicolonCore implements SourceCore<string> {
  carry = '';
  log: string[] = [];
  push(chunk: string): SourceItem[] {
    const parts = (this.carry + chunk).split(';');
    this.carry = parts.pop()!;
    return parts.map(row);
  }
  end(): SourceItem[] {
    this.log.push('end');
    return this.carry ? [row(this.carry)] : [];
  }
  fail(err: unknown): SourceItem[] {
    this.log.push(`fail: ${(err as Error).message}`);
    return [row(`held ${this.carry}`)];
  }
}

const texts = (batches: SourceItem[][]) => batches.map((b) => b.map((r) => (r as SourceRow).values.text));

async function all<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

describe('feedCore', () => {
  it('yields the rows each chunk completes as one batch, nothing for a chunk that completes none, then the end', async () => {
    const core = new SemicolonCore();
    expect(texts(await all(feedCore(core, ['a;b', ';c', 'd', ';e'])))).toEqual([['a'], ['b'], ['cd'], ['e']]);
    expect(core.log).toEqual(['end']);
  });

  it('with everyChunk yields after every chunk, empty batches too, and stops reading when the caller stops', async () => {
    const pulled: string[] = [];
    let closed = false;
    async function* input() {
      try {
        for (const c of ['x', 'y', 'z;', 'w']) {
          pulled.push(c);
          yield c;
        }
      } finally {
        closed = true;
      }
    }
    const seen: SourceItem[][] = [];
    for await (const batch of feedCore(new SemicolonCore(), input(), { everyChunk: true })) {
      seen.push(batch);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([[], []]);
    expect(pulled).toEqual(['x', 'y']);
    expect(closed).toBe(true);
  });

  it("turns an input's failure into the core's rows after those completed before it; a StagecoachError stops the read as it is", async () => {
    async function* broken() {
      yield 'a;b';
      throw new Error('disk gone');
    }
    const core = new SemicolonCore();
    expect(texts(await all(feedCore(core, broken())))).toEqual([['a'], ['held b']]);
    expect(core.log).toEqual(['fail: disk gone']);
    async function* stopped() {
      yield 'a;';
      throw new StagecoachError('ABORTED', 'Reading stopped', { file: 'f' });
    }
    const gen = feedCore(new SemicolonCore(), stopped());
    expect(texts([(await gen.next()).value as SourceItem[]])).toEqual([['a']]);
    await expect(gen.next()).rejects.toMatchObject({ code: 'ABORTED' });
  });
});

describe('fileChunks and the CSV reader on it', () => {
  const dir = tempDir('stagecoach-feed-core-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const csv = { delimiter: ';', quote: '"', header: true };

  it('reads exactly a byte range, in reads of the given size', async () => {
    const path = join(dir, 'digits.txt');
    writeFileSync(path, '0123456789abcdef');
    const enc = await detectEncoding(path, 'digits.txt', 'utf-8');
    const chunks = await all(fileChunks(path, 'digits.txt', enc, { readBytes: 3, range: { start: 4, end: 11 } }));
    expect(chunks.map((c) => c.toString('latin1'))).toEqual(['456', '789', 'a']);
  });

  it('swaps UTF-16BE to LE across reads of an odd number of bytes: the rows are those of one big read', async () => {
    const path = join(dir, 'be.csv');
    const text = '\ufeffnr;naam\n1;Zoë\n2;Renée € Café\n';
    const le = Buffer.from(text, 'utf16le');
    writeFileSync(path, Buffer.from(le).swap16());
    const read = (readBytes: number) =>
      all(readCsvBatches({ source: 's', path, file: 'be.csv', encoding: 'utf-16be', csv, readBytes })).then((b) => b.flat());
    const whole = await read(1 << 16);
    expect(whole.map((r) => (r as SourceRow).values)).toEqual([
      { nr: '1', naam: 'Zoë' },
      { nr: '2', naam: 'Renée € Café' },
    ]);
    expect(await read(7)).toEqual(whole);
  });

  it('stops a CSV read on abort with ABORTED naming the file, after the rows already handed on', async () => {
    const path = join(dir, 'many.csv');
    writeFileSync(path, `nr;naam\n${Array.from({ length: 20_000 }, (_, i) => `${i};naam ${i}`).join('\n')}\n`);
    const ac = new AbortController();
    const gen = readCsvBatches({ source: 's', path, file: 'many.csv', encoding: 'utf-8', csv, readBytes: 1024, signal: ac.signal });
    const first = await gen.next();
    expect((first.value as SourceItem[]).length).toBeGreaterThan(0);
    ac.abort();
    const err = await (async () => {
      for (;;) if ((await gen.next()).done) return undefined;
    })().catch((e: StagecoachError) => e);
    expect(err).toBeInstanceOf(StagecoachError);
    expect(err).toMatchObject({ code: 'ABORTED', message: 'Reading stopped', context: { file: 'many.csv' } });
  });
});
