/**
 * The parallel reader must hand on exactly the rows the one-thread reader does: same order, same
 * verdicts and reasons, same provenance, same frames. Ranges of a few hundred bytes put a range
 * boundary next to every kind of awkward CSV (quoted line breaks, CRLF, stray quotes, blank
 * lines, an unclosed quote, windows-1252, a BOM), and the defects planted by the generator
 * (duplicates, missing partners, short rows) fall on both sides of boundaries.
 * Runs against the built code (dist), because the workers are the compiled worker.js.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { loadPipeline, readPipeline } from '../../dist/src/pipeline/read-pipeline.js';
import { encodeRecord } from '../../dist/src/pipeline/batcher/index.js';
import { generateCrmSamples } from '../../dist/src/pipeline/samples/generate-crm.js';
import { csvSplitter, splitCsv } from '../../dist/src/pipeline/source/csv/index.js';
import type { FrontRow } from '../../dist/src/pipeline/types.js';
import type { ParallelStats } from '../../dist/src/pipeline/parallel/read-parallel.js';

/**
 * `expect`: how it should be read. `ranges` (the default): in ranges, every one lining up.
 * `falls-back`: the splitter and csv-parse read it differently somewhere, so from there it is read
 * on one thread. `one-thread`: it cannot be split at all (a lone CR ends the first line).
 */
type Variant = {
  name: string;
  encoding: string;
  transform: (text: string) => string | Buffer;
  expect?: 'ranges' | 'falls-back' | 'one-thread';
};

/** Rewrites every nth data line (1-based, header excluded). */
function everyNth(text: string, n: number, f: (fields: string[], i: number) => string): string {
  const lines = text.split('\n');
  return lines.map((line, i) => (i > 0 && i % n === 0 && line !== '' ? f(line.split(';'), i) : line)).join('\n');
}

const VARIANTS: Variant[] = [
  { name: 'crlf', encoding: 'utf-8', transform: (t) => t }, // as generated
  {
    name: 'lf-and-blank-lines',
    encoding: 'utf-8',
    transform: (t) => everyNth(t.replace(/\r\n/g, '\n'), 17, (f) => `${f.join(';')}\n\n   `),
  },
  { name: 'cr-before-crlf', encoding: 'utf-8', expect: 'one-thread', transform: (t) => t.replace(/\r\n/g, '\r\r\n') },
  {
    name: 'quoted-line-breaks',
    encoding: 'utf-8',
    transform: (t) => everyNth(t, 5, (f) => ((f[8] = `"${f[8]}\nbij de ""kerk""\n"`), f.join(';'))),
  },
  {
    name: 'quoted-crlf-breaks',
    encoding: 'utf-8',
    transform: (t) => everyNth(t, 3, (f) => ((f[8] = `"${f[8]}\r\nbij de ""kerk""\r\n"`), f.join(';'))),
  },
  {
    name: 'stray-quotes',
    encoding: 'utf-8',
    transform: (t) =>
      everyNth(
        everyNth(t, 11, (f) => ((f[4] = `Mü"ller`), f.join(';'))),
        13,
        (f) => ((f[4] = `"Sm"it`), f.join(';')),
      ),
  },
  { name: 'lone-cr-in-field', encoding: 'utf-8', transform: (t) => everyNth(t, 9, (f) => ((f[8] = `"Dorps\rstraat"`), f.join(';'))) },
  { name: 'unclosed-quote-late', encoding: 'utf-8', transform: (t) => everyNth(t, 2900, (f) => ((f[8] = `"Kerkstraat`), f.join(';'))) },
  { name: 'utf-8-bom', encoding: 'utf-8-bom', transform: (t) => `\ufeff${t}` },
  { name: 'windows-1252', encoding: 'windows-1252', transform: (t) => iconv.encode(t.replace(/[^\u0000-\u00ff€’]/g, '?'), 'windows-1252') },
];

interface Seen {
  kind: string;
  legacyKey?: string | undefined;
  referenceId?: string | undefined;
  reasons?: unknown;
  source: string;
  provenance: unknown;
  frame?: string | undefined;
  contentHash?: string | undefined;
}

async function collect(rows: AsyncIterable<FrontRow>): Promise<Seen[]> {
  const out: Seen[] = [];
  for await (const r of rows) {
    const base = { kind: r.kind, legacyKey: r.legacyKey, referenceId: r.referenceId, source: r.row.source, provenance: r.row.provenance };
    if (r.kind === 'rejected') {
      out.push({ ...base, reasons: r.reasons });
      continue;
    }
    const encoded = r.encoded ?? encodeRecord(r.record!, 'json-seq');
    out.push({ ...base, frame: encoded.frame.toString(), contentHash: encoded.contentHash });
  }
  return out;
}

describe('parallel reader', () => {
  const root = mkdtempSync(join(tmpdir(), 'stagecoach-parallel-'));
  let generated = '';
  beforeAll(async () => {
    const gen = join(root, 'generated');
    await generateCrmSamples({ out: gen, persons: 3000, organisations: 0, seed: 7, defectsPer10k: 300 });
    generated = gen;
  });

  it.each(VARIANTS.map((v, i) => ({ ...v, workers: 1 + (i % 2) })))(
    'reads $name with $workers worker(s) exactly as one thread does',
    async (v) => {
      const dir = join(root, v.name);
      const { cpSync } = await import('node:fs');
      cpSync(generated, dir, { recursive: true });
      writeFileSync(join(dir, 'klanten.csv'), v.transform(readFileSync(join(generated, 'klanten.csv'), 'utf8')));
      writeFileSync(
        join(dir, 'pipeline.yaml'),
        readFileSync(join(dir, 'pipeline.yaml'), 'utf8').replace('encoding: utf-8', `encoding: ${v.encoding}`),
      );
      const def = await loadPipeline(join(dir, 'pipeline.yaml'));

      const one = await collect(readPipeline(def));
      const stats: ParallelStats = { rangesOnWorkers: 0, rangesOnMain: 0, fallbacks: 0 };
      const parallel = await collect(readPipeline(def, { parallel: { workers: v.workers, encode: 'json-seq', chunkBytes: 700, stats } }));
      expect(one.length).toBeGreaterThan(2800);
      expect(one.filter((r) => r.kind === 'rejected').length).toBeGreaterThan(50);
      expect(parallel).toEqual(one);
      // Really read as expected: in ranges by the workers, not on one thread after an early fallback.
      const expected = v.expect ?? 'ranges';
      expect(stats.fallbacks).toBe(expected === 'falls-back' ? 1 : 0);
      if (expected === 'one-thread') expect(stats.rangesOnWorkers + stats.rangesOnMain).toBe(0);
      else expect(stats.rangesOnWorkers).toBeGreaterThan(expected === 'ranges' ? 100 : 0);
      // The partner relations need a key pass, during which the workers already read (prefetch).
      if (expected === 'ranges') expect(stats.rangesPrefetched).toBeGreaterThan(0);
    },
  );

  it('refuses ranges that do not line up, and reads on from there on one thread', async () => {
    // A careless splitter that does not see quotes cuts inside quoted line breaks; the reader must
    // notice (the range does not end at a record) and read the rest of the file itself.
    const dir = join(root, 'careless-split');
    const { cpSync } = await import('node:fs');
    cpSync(generated, dir, { recursive: true });
    // CRLF inside the quotes too (the file's own record delimiter), so a careless cut lands there.
    writeFileSync(
      join(dir, 'klanten.csv'),
      everyNth(readFileSync(join(generated, 'klanten.csv'), 'utf8'), 5, (f) => ((f[8] = `"${f[8]}\r\nbij de ""kerk""\r\n"`), f.join(';'))),
    );
    const def = await loadPipeline(join(dir, 'pipeline.yaml'));
    const careless = csvSplitter((o) => splitCsv({ ...o, quote: '\u0001' })).split;
    const stats = { rangesOnWorkers: 0, rangesOnMain: 0, fallbacks: 0 };
    const parallel = await collect(
      readPipeline(def, { parallel: { workers: 2, encode: 'json-seq', chunkBytes: 700, stats, split: careless } }),
    );
    expect(parallel).toEqual(await collect(readPipeline(def)));
    expect(stats.fallbacks).toBe(1);
  });

  it('reads on from the header on one thread when the very first range does not line up, read ahead or not', async () => {
    // A quoted line break in the first record, inside the header's range (an eighth of 2,000
    // bytes): the careless splitter ends that range inside the quotes.
    const dir = join(root, 'careless-first-range');
    const { cpSync } = await import('node:fs');
    cpSync(generated, dir, { recursive: true });
    const lines = readFileSync(join(generated, 'klanten.csv'), 'utf8').split('\n');
    const first = lines[1]!.split(';');
    first[8] = `"${first[8]}\r\nachterom"`;
    lines[1] = first.join(';');
    writeFileSync(join(dir, 'klanten.csv'), lines.join('\n'));
    const def = await loadPipeline(join(dir, 'pipeline.yaml'));
    const careless = csvSplitter((o) => splitCsv({ ...o, quote: '\u0001' })).split;
    const stats: ParallelStats = { rangesOnWorkers: 0, rangesOnMain: 0, fallbacks: 0 };
    const parallel = await collect(
      readPipeline(def, { parallel: { workers: 1, encode: 'json-seq', chunkBytes: 2000, stats, split: careless } }),
    );
    expect(stats.fallbacks).toBe(1);
    expect(stats.rangesPrefetched).toBeGreaterThan(0);
    expect(parallel).toEqual(await collect(readPipeline(def)));
  });

  it('reads on this thread what its workers cannot deliver when they die', async () => {
    const def = await loadPipeline(join(generated, 'pipeline.yaml'));
    const stats = { rangesOnWorkers: 0, rangesOnMain: 0, fallbacks: 0, workerFailure: undefined as string | undefined };
    const workerUrl = new URL('../support/dying-reader-worker.mjs', import.meta.url);
    const parallel = await collect(readPipeline(def, { parallel: { workers: 2, encode: 'json-seq', chunkBytes: 700, stats, workerUrl } }));
    expect(parallel).toEqual(await collect(readPipeline(def)));
    expect(stats.workerFailure).toMatch(/a reader worker exited with 3/);
    expect(stats.rangesOnMain).toBeGreaterThan(100);
  });

  it('stops its workers when the rows are left half read, ranges read ahead or not', async () => {
    const def = await loadPipeline(join(generated, 'pipeline.yaml'));
    const stats: ParallelStats = { rangesOnWorkers: 0, rangesOnMain: 0, fallbacks: 0 };
    const rows = readPipeline(def, { parallel: { workers: 2, encode: 'json-seq', chunkBytes: 700, stats } });
    let taken = 0;
    for await (const _row of rows) if (++taken === 3) break;
    expect(taken).toBe(3);
    expect(stats.rangesPrefetched).toBeGreaterThan(0);
    // An abort during the key pass, with ranges already out on the workers, ends the read too.
    const ac = new AbortController();
    const aborted = readPipeline(def, { signal: ac.signal, parallel: { workers: 2, encode: 'json-seq', chunkBytes: 700 } });
    ac.abort();
    await expect(aborted.next()).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('checks without framing for plan, with the same verdicts', async () => {
    const def = await loadPipeline(join(generated, 'pipeline.yaml'));
    const one = (await collect(readPipeline(def))).map(({ frame: _f, contentHash: _c, ...rest }) => rest);
    const rows: FrontRow[] = [];
    for await (const r of readPipeline(def, { parallel: { workers: 2, chunkBytes: 4096 } })) rows.push(r);
    expect(rows.every((r) => r.kind === 'rejected' || (r.encoded === undefined && r.record === undefined))).toBe(true);
    const parallel = rows.map((r) => ({
      kind: r.kind,
      legacyKey: r.legacyKey,
      referenceId: r.referenceId,
      source: r.row.source,
      provenance: r.row.provenance,
      ...(r.kind === 'rejected' ? { reasons: r.reasons } : {}),
    }));
    expect(parallel).toEqual(one);
  });

  it('leaves the row hashes out when asked (plan), on the workers and on one thread, and changes nothing else', async () => {
    const def = await loadPipeline(join(generated, 'pipeline.yaml'));
    const hashed = await collect(readPipeline(def));
    expect(hashed.every((r) => /^[0-9a-f]{32}$/.test((r.provenance as { hash: string }).hash) || r.kind === 'rejected')).toBe(true);
    const withoutHash = hashed.map((r) => ({ ...r, provenance: { ...(r.provenance as object), hash: '' } }));
    expect(await collect(readPipeline(def, { hashRows: false }))).toEqual(withoutHash);
    const stats: ParallelStats = { rangesOnWorkers: 0, rangesOnMain: 0, fallbacks: 0 };
    expect(
      await collect(readPipeline(def, { hashRows: false, parallel: { workers: 2, encode: 'json-seq', chunkBytes: 4096, stats } })),
    ).toEqual(withoutHash);
    expect(stats.rangesOnWorkers).toBeGreaterThan(0);
  });
});
