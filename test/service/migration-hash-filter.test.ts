/**
 * The Bloom filter staging keeps per run of referenceIds (src/service/migration/hash-filter.ts):
 * never a false "no", and false "maybe"s near the 1% it is sized for.
 */
import { describe, expect, it } from 'vitest';
import { HashFilter } from '../../src/service/migration/hash-filter.js';
import { hash30 } from '../../src/service/migration/store-staging.js';

const ref = (n: number) => `00000000-0000-5000-8000-${String(n).padStart(12, '0')}`;

describe('hash filter', () => {
  it('says "maybe" for every hash added and "no" for about 99% of the others', () => {
    const filter = new HashFilter(50_000);
    for (let n = 0; n < 50_000; n++) filter.add(hash30(ref(n)) + 1);
    let missed = 0;
    for (let n = 0; n < 50_000; n++) if (!filter.mayHave(hash30(ref(n)) + 1)) missed++;
    let maybes = 0;
    for (let n = 50_000; n < 150_000; n++) if (filter.mayHave(hash30(ref(n)) + 1)) maybes++;
    expect(missed).toBe(0);
    expect(maybes / 100_000).toBeGreaterThan(0.002);
    expect(maybes / 100_000).toBeLessThan(0.02);
  });
});
