import { describe, expect, it } from 'vitest';
import { packStrings, stringAt, StringColumnBuilder } from '../../src/codec/index.js';

describe('string columns', () => {
  it('builds, string by string, the same column as packing the list at once', () => {
    const word = (i: number) => (i % 7 === 0 ? '' : i % 5 === 0 ? `Zoë ${i} 😀` : `K${i}`);
    for (const n of [0, 1, 255, 256, 257, 513, 1000]) {
      const list = Array.from({ length: n }, (_, i) => word(i));
      const builder = new StringColumnBuilder();
      for (const s of list) builder.push(s);
      const built = builder.build();
      expect(built).toEqual(packStrings(list));
      expect(list.map((_, i) => stringAt(built, i))).toEqual(list);
    }
  });
});
