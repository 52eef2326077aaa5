import { describe, expect, it } from 'vitest';
import { NumberColumnBuilder, Utf8Builder } from '../../src/pipeline/parallel/number-column.js';
import { stringAt, StringColumnBuilder } from '../../src/pipeline/parallel/string-column.js';
import { RefColumnsBuilder, RefColumnsReader } from '../../src/pipeline/parallel/ref-columns.js';
import type { RelationRef } from '../../src/pipeline/mapping/compile.js';

describe('string columns', () => {
  it('builds, string by string, the joined strings and where each ends', () => {
    const word = (i: number) => (i % 7 === 0 ? '' : i % 5 === 0 ? `Zoë ${i} 😀` : `K${i}`);
    for (const n of [0, 1, 255, 256, 257, 513, 1000, 2049]) {
      const list = Array.from({ length: n }, (_, i) => word(i));
      const builder = new StringColumnBuilder();
      for (const s of list) builder.push(s);
      expect(builder.length).toBe(n);
      const built = builder.build();
      let at = 0;
      expect(built).toEqual({ text: list.join(''), ends: Uint32Array.from(list, (s) => (at += s.length)) });
      expect(list.map((_, i) => stringAt(built, i))).toEqual(list);
    }
  });

  it('reads an empty string at every row of a column nothing was pushed to', () => {
    const empty = new StringColumnBuilder().build();
    expect([0, 1, 500].map((i) => stringAt(empty, i))).toEqual(['', '', '']);
  });
});

describe('number columns', () => {
  it('keeps every number pushed, past each doubling, in an array of exactly that length with its own buffer', () => {
    for (const n of [0, 1, 1023, 1024, 1025, 5000]) {
      const offsets = new NumberColumnBuilder(Float64Array);
      const kinds = new NumberColumnBuilder(Uint8Array);
      for (let i = 0; i < n; i++) {
        offsets.push(i * 4_294_967.5); // past 2^32 soon: offsets in a big file
        kinds.push(i % 3);
      }
      const built = offsets.build();
      expect(built).toEqual(Float64Array.from({ length: n }, (_, i) => i * 4_294_967.5));
      expect(built.buffer.byteLength).toBe(n * 8);
      expect(kinds.build()).toEqual(Uint8Array.from({ length: n }, (_, i) => i % 3));
    }
  });
});

describe('UTF-8 builder', () => {
  it('appends text as UTF-8 past each doubling, each write answering its byte length', () => {
    const texts = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? `\x1e{"n":${i},"naam":"Łukasz Öztürk 😀"}\n` : `\x1e{"n":${i}}\n`));
    const builder = new Utf8Builder();
    expect(texts.map((t) => builder.write(t))).toEqual(texts.map((t) => Buffer.byteLength(t)));
    const built = builder.build();
    expect(Buffer.from(built).toString('utf8')).toBe(texts.join(''));
    expect(built.buffer.byteLength).toBe(Buffer.byteLength(texts.join('')));
    expect(new Utf8Builder().build()).toEqual(new Uint8Array(0));
  });
});

describe('relation ref columns (the parallel reader’s packs)', () => {
  it('gives each row back its refs in order, with their declarations, and none to rows without', () => {
    const partner = { field: 'relations[0].to', column: 'partner', scope: 'klant' };
    const director = { field: 'relations[1].to', column: '(script)', scope: 'bedrijf' };
    const rows: RelationRef[][] = Array.from({ length: 3000 }, (_, i) =>
      i % 4 === 0
        ? []
        : i % 4 === 1
          ? [{ ...partner, key: `${100000 + i}` }]
          : [
              { ...partner, key: `K${i}` },
              { ...director, key: i % 8 === 2 ? 'Zoë' : '' },
            ],
    );
    const builder = new RefColumnsBuilder();
    rows.forEach((refs, i) => builder.push(i, refs));
    const built = builder.build();
    expect(built.declarationTable).toEqual([partner, director]);
    const reader = new RefColumnsReader(built);
    expect(rows.map((_, i) => reader.of(i))).toEqual(rows);
  });
});
