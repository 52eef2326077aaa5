import { describe, expect, it } from 'vitest';
import { stringAt, StringColumnBuilder } from '../../src/codec/index.js';

describe('string columns', () => {
  it('builds, string by string, the joined strings and where each ends', () => {
    const word = (i: number) => (i % 7 === 0 ? '' : i % 5 === 0 ? `Zoë ${i} 😀` : `K${i}`);
    for (const n of [0, 1, 255, 256, 257, 513, 1000]) {
      const list = Array.from({ length: n }, (_, i) => word(i));
      const builder = new StringColumnBuilder();
      for (const s of list) builder.push(s);
      const built = builder.build();
      let at = 0;
      expect(built).toEqual({ text: list.join(''), ends: Uint32Array.from(list, (s) => (at += s.length)) });
      expect(list.map((_, i) => stringAt(built, i))).toEqual(list);
    }
  });
});
